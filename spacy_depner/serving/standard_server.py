"""The standard library's WSGI server (``wsgiref``) running ``wsgi``'s
application, one thread per request, each connection's socket timing out
after ``timeout`` seconds: ``serve``'s first try, with nothing to install
(a WSGI server such as gunicorn for a deployment: ``wsgi``)."""

import sys
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from .label_studio_backend import log

SOCKET_TIMEOUT = 60.0


class ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        error = sys.exc_info()[1]
        log(f"request from {client_address[0]} dropped: {type(error).__name__}: {error}")


class RequestHandler(WSGIRequestHandler):
    quiet = False
    timeout = SOCKET_TIMEOUT

    def log_message(self, format: str, *args) -> None:
        if not self.quiet:
            log(f"{self.address_string()} {format % args}")


def backend_server(application, host: str = "127.0.0.1", port: int = 9090, quiet: bool = False, timeout=SOCKET_TIMEOUT):
    """A threading ``wsgiref`` server of the WSGI ``application`` on
    ``host``:``port`` (0: any free port, ``server_port`` says which);
    ``serve_forever`` runs it. A port in use is a ValueError."""
    handler = type("Handler", (RequestHandler,), {"quiet": quiet, "timeout": timeout})
    try:
        server = ThreadingWSGIServer((host, port), handler)
    except OSError as error:
        raise ValueError(f"Cannot listen on {host}:{port} ({error.strerror or error}): choose another --port or --host")
    server.set_app(application)
    return server
