"""The WSGI application serving a ``LabelStudioBackend`` (JSON in and out),
for any WSGI server: ``standard_server`` (``python -m spacy_depner serve``)
or e.g. gunicorn, one worker process (the annotations and models live in
it) with threads::

    SPACY_DEPNER_PIPELINE=training/own/model-best gunicorn --workers 1 --threads 8 \\
        --timeout 600 --bind 0.0.0.0:9090 'spacy_depner.serving.wsgi:application()'

Routes: ``GET /`` and ``/health``, ``/is_training``, ``/metrics`` (the
backend's metrics and the requests answered, by ``METHOD /path STATUS``);
``POST /setup``, ``/predict``, ``/webhook`` and ``/train`` (answered 201,
as label-studio-ml's routes answer them). Bad input is a 400 with
``{"error"}`` naming the field, an unknown route a 404, a body over
``max_body_bytes`` a 413, one not received before the server's socket
timeout a 408. With ``basic_auth`` (``(user, password)``, as Label Studio
sends the model's "Basic auth" settings) every request without them is a
401, compared in constant time."""

import base64
import binascii
import hmac
import json
import os
import threading
from collections import Counter
from typing import Any, Callable, Dict, Optional, Tuple

from thinc.api import set_current_ops

from .label_studio_backend import LabelStudioBackend, log

MAX_BODY_BYTES = 64 << 20
STATUS = {
    200: "200 OK",
    201: "201 Created",
    400: "400 Bad Request",
    401: "401 Unauthorized",
    404: "404 Not Found",
    408: "408 Request Timeout",
    413: "413 Payload Too Large",
    500: "500 Internal Server Error",
}
ROUTES: Dict[Tuple[str, str], Callable[[LabelStudioBackend, Dict[str, Any]], Any]] = {
    ("GET", "/"): lambda backend, body: backend.health(),
    ("GET", "/health"): lambda backend, body: backend.health(),
    ("GET", "/is_training"): lambda backend, body: {"is_training": backend.health()["training"]},
    ("POST", "/setup"): LabelStudioBackend.setup,
    ("POST", "/predict"): LabelStudioBackend.predict,
    ("POST", "/webhook"): LabelStudioBackend.webhook,
    ("POST", "/train"): LabelStudioBackend.train,
}
CREATED = ("/webhook", "/train")


class HTTPError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def basic_auth_setting(user: Optional[str], password: Optional[str]) -> Optional[Tuple[str, str]]:
    """``(user, password)`` from the arguments, else ``BASIC_AUTH_USER`` /
    ``BASIC_AUTH_PASS``; None when neither is set; one without the other is a ValueError."""
    user = user if user is not None else os.environ.get("BASIC_AUTH_USER")
    password = password if password is not None else os.environ.get("BASIC_AUTH_PASS")
    if not user and not password:
        return None
    if not (user and password):
        missing = "--basic-auth-pass (BASIC_AUTH_PASS)" if user else "--basic-auth-user (BASIC_AUTH_USER)"
        raise ValueError(f"Basic auth needs a user and a password: give {missing} too, or neither")
    return user, password


class WSGIApplication:
    """The routes over ``backend`` (module docstring)."""

    def __init__(
        self,
        backend: LabelStudioBackend,
        basic_auth: Optional[Tuple[str, str]] = None,
        max_body_bytes: int = MAX_BODY_BYTES,
    ):
        self.backend, self.basic_auth, self.max_body_bytes = backend, basic_auth, max_body_bytes
        self.requests: Counter = Counter()
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "/").rstrip("/") or "/"
        try:
            answer = self.answer(method, path, environ)
            status = 201 if path in CREATED else 200
        except HTTPError as error:
            status, answer = error.status, {"error": str(error)}
        except ValueError as error:
            status, answer = 400, {"error": str(error)}
        except Exception as error:  # a bug: the answer says what, the server keeps serving
            log(f"{method} {path} failed: {type(error).__name__}: {error}")
            status, answer = 500, {"error": f"{type(error).__name__}: {error}"}
        with self.lock:
            self.requests[f"{method} {path} {status}"] += 1
        data = json.dumps(answer, ensure_ascii=False).encode("utf8")
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data)))]
        if status == 401:
            headers.append(("WWW-Authenticate", 'Basic realm="spacy-depner", charset="UTF-8"'))
        start_response(STATUS[status], headers)
        return [data]

    def answer(self, method: str, path: str, environ) -> Any:
        self.check_auth(environ.get("HTTP_AUTHORIZATION", ""))
        if (method, path) == ("GET", "/metrics"):
            with self.lock:
                return {**self.backend.metrics(), "requests": dict(sorted(self.requests.items()))}
        route = ROUTES.get((method, path))
        if route is None:
            paths = ", ".join(sorted({p for _, p in ROUTES} | {"/metrics"}))
            raise HTTPError(404, f"No route {method} {path}: see {paths}")
        set_current_ops(self.backend.ops)
        return route(self.backend, self.read_json(environ) if method == "POST" else {})

    def check_auth(self, header: str) -> None:
        if self.basic_auth is None:
            return
        given = b""
        if header[:6].lower() == "basic ":
            try:
                given = base64.b64decode(header[6:].strip(), validate=True)
            except (binascii.Error, ValueError):
                given = b""
        expected = ":".join(self.basic_auth).encode("utf8")
        if not hmac.compare_digest(given, expected):
            raise HTTPError(401, "Authentication required: give the backend's basic auth user and password")

    def read_json(self, environ) -> Dict[str, Any]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise HTTPError(400, f"Content-Length {environ.get('CONTENT_LENGTH')!r} is not a number") from None
        if length > self.max_body_bytes:
            raise HTTPError(
                413, f"The request body has {length} bytes, over the limit of {self.max_body_bytes}: send less "
                "(or start the backend with a larger --max-body-mb)"
            )  # fmt: skip
        try:
            raw = environ["wsgi.input"].read(length) if length else b""
        except OSError as error:  # the server's socket timeout
            raise HTTPError(408, f"The request body was not received ({error})") from None
        try:
            body = json.loads(raw.decode("utf8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"The request body is not JSON ({error})") from None
        if not isinstance(body, dict):
            raise ValueError("The request body must be a JSON object")
        return body


SETTINGS = {  # the factory's keyword -> (environment variable, type)
    "pipeline": ("SPACY_DEPNER_PIPELINE", str),
    "component": ("SPACY_DEPNER_COMPONENT", str),
    "measure": ("SPACY_DEPNER_MEASURE", str),
    "epochs": ("SPACY_DEPNER_EPOCHS", int),
    "output": ("SPACY_DEPNER_OUTPUT", str),
    "alignment_mode": ("SPACY_DEPNER_ALIGNMENT_MODE", str),
    "offsets": ("SPACY_DEPNER_OFFSETS", str),
    "label_studio_url": ("LABEL_STUDIO_URL", str),
    "label_studio_api_key": ("LABEL_STUDIO_API_KEY", str),
}


def application(**settings) -> WSGIApplication:
    """The WSGI application of a ``LabelStudioBackend`` whose arguments are
    ``settings`` or else the environment (``SETTINGS``: e.g.
    ``SPACY_DEPNER_PIPELINE``, ``LABEL_STUDIO_URL``, ``LABEL_STUDIO_API_KEY``),
    with ``BASIC_AUTH_USER`` / ``BASIC_AUTH_PASS`` and ``SPACY_DEPNER_MAX_BODY_MB``:
    the factory gunicorn calls (``'spacy_depner.serving.wsgi:application()'``)."""
    arguments = {}
    for name, (variable, kind) in SETTINGS.items():
        value = settings.pop(name, None) or os.environ.get(variable)
        if value:
            try:
                arguments[name] = kind(value)
            except ValueError:
                raise ValueError(f"{variable}={value!r}: give a {kind.__name__}") from None
    if "pipeline" not in arguments:
        raise ValueError("No pipeline to serve: set SPACY_DEPNER_PIPELINE (a pipeline folder or package name)")
    if settings:
        raise ValueError(f"Unknown settings {sorted(settings)}: use {', '.join(SETTINGS)}")
    max_body = float(os.environ.get("SPACY_DEPNER_MAX_BODY_MB") or MAX_BODY_BYTES / (1 << 20))
    return WSGIApplication(
        LabelStudioBackend(**arguments), basic_auth_setting(None, None), max_body_bytes=int(max_body * (1 << 20))
    )
