"""``serve`` facing a network, as Label Studio's own ML backends do: basic
auth (401 without it), a request body cap (413), socket timeouts, malformed
payloads answered 400 naming the field, state per project, Label Studio's
URL and key from the command line or environment (never from ``/setup``),
``/metrics``; the model logic is a class with no HTTP in it, served by a
WSGI application that the standard library's server and gunicorn run."""

import ast
import base64
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from wsgiref.validate import validator

import pytest
from test_serve import CONFIG, TEXTS, annotation_event, call

from spacy_depner.serving import label_studio_backend, wsgi
from spacy_depner.serving.label_studio_backend import LabelStudioBackend
from spacy_depner.serving.standard_server import backend_server
from spacy_depner.serving.wsgi import WSGIApplication

OTHER_CONFIG = CONFIG.replace('name="ner"', 'name="tags"').replace('toName="doc"', 'toName="doc"')


def running(application, **settings):
    server = backend_server(application, "127.0.0.1", 0, quiet=True, **settings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


@pytest.fixture
def backend(pipeline):
    return LabelStudioBackend(str(pipeline), epochs=2)


@pytest.fixture
def url(backend):
    server, address = running(WSGIApplication(backend))
    yield address
    server.shutdown()
    server.server_close()


def authorization(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def status_of(address, path, headers=None, data=None):
    request = urllib.request.Request(address + path, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, dict(answer.headers)
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers)


def test_the_model_class_holds_no_http():
    tree = ast.parse(Path(label_studio_backend.__file__).read_text(encoding="utf8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {name for name in imported if name.split(".")[0] in ("http", "wsgiref", "socketserver")}, imported


def test_the_application_is_wsgi(backend):
    application = validator(WSGIApplication(backend))
    seen = {}

    def start_response(status, headers, exc_info=None):
        seen["status"], seen["headers"] = status, dict(headers)
        return lambda data: None

    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/health",
        "SCRIPT_NAME": "",
        "QUERY_STRING": "",
        "SERVER_NAME": "test",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": __import__("io").BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    answer = application(environ, start_response)
    body = b"".join(answer)
    answer.close()
    assert seen["status"].startswith("200") and json.loads(body)["status"] == "UP"


def test_basic_auth_is_required_when_configured(backend):
    server, address = running(WSGIApplication(backend, basic_auth=("annotator", "s3cret")))
    try:
        status, headers = status_of(address, "/health")
        assert status == 401 and headers["WWW-Authenticate"].startswith("Basic")
        assert status_of(address, "/health", {"Authorization": authorization("annotator", "wrong")})[0] == 401
        assert status_of(address, "/health", {"Authorization": "Basic !!"})[0] == 401
        assert status_of(address, "/health", {"Authorization": authorization("annotator", "s3cret")})[0] == 200
    finally:
        server.shutdown()
        server.server_close()


def test_basic_auth_from_the_environment_and_one_half_is_an_error(pipeline, monkeypatch):
    monkeypatch.setenv("BASIC_AUTH_USER", "annotator")
    monkeypatch.setenv("BASIC_AUTH_PASS", "s3cret")
    assert wsgi.basic_auth_setting(None, None) == ("annotator", "s3cret")
    monkeypatch.delenv("BASIC_AUTH_PASS")
    with pytest.raises(ValueError, match="BASIC_AUTH_PASS"):
        wsgi.basic_auth_setting(None, None)


def test_a_body_over_the_cap_is_413(backend):
    server, address = running(WSGIApplication(backend, max_body_bytes=1000))
    try:
        body = json.dumps({"tasks": [{"id": 1, "data": {"text": "Mary " * 400}}]}).encode()
        status, _ = status_of(address, "/predict", {"Content-Type": "application/json"}, body)
        assert status == 413
        assert call(address, "/predict", {"tasks": [{"id": 1, "data": {"text": "Mary"}}]})[0] == 200
    finally:
        server.shutdown()
        server.server_close()


def test_a_silent_client_is_disconnected_after_the_socket_timeout(backend):
    server, address = running(WSGIApplication(backend), timeout=1)
    try:
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as client:
            started = time.monotonic()
            client.sendall(b"POST /predict HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")  # and nothing more
            assert client.recv(1000) is not None  # the server closes (or answers) instead of waiting forever
            assert time.monotonic() - started < 8
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "path, body, field",
    [
        ("/webhook", {"action": "ANNOTATION_CREATED", "annotation": "x", "task": {"id": 1}}, "annotation"),
        ("/webhook", {"action": "ANNOTATION_CREATED", "annotation": {"id": 1, "task": 1}, "task": "y"}, "task"),
        ("/webhook", {"action": "ANNOTATIONS_DELETED", "annotations": [1]}, "annotations[0]"),
        ("/webhook", {"action": "ANNOTATION_CREATED", "annotation": {"id": 1, "task": 1, "result": 3}}, "result"),
        ("/train", {"annotations": [1]}, "annotations[0]"),
        ("/train", {"annotations": [{"id": 1, "data": "z"}]}, "annotations[0].data"),
        ("/setup", {"project": "3", "schema": 5}, "schema"),
    ],
)
def test_malformed_payloads_are_400_naming_the_field(url, path, body, field):
    status, answer = call(url, path, body)
    assert status == 400 and field in answer["error"], answer


def test_each_project_keeps_its_config_annotations_and_model(backend, url):
    call(url, "/setup", {"project": "1.1700000000", "schema": CONFIG})
    call(url, "/setup", {"project": "2.1700000000", "schema": OTHER_CONFIG})
    for project, control in (("1.1700000000", "ner"), ("2.1700000000", "tags")):
        status, answer = call(url, "/predict", {"tasks": [{"id": 1, "data": {"body": TEXTS[0]}}], "project": project})
        assert status == 200 and {r["from_name"] for r in answer["results"][0]["result"]} == {control}, answer
    event = {**annotation_event(1, TEXTS[0], ("Mary", "LOC")), "project": {"id": 1}}
    assert call(url, "/webhook", event)[0] == 201
    assert backend.wait_for_training(300)
    projects = call(url, "/health")[1]["projects"]
    assert projects["1"]["trainings"] == 1 and projects["2"]["trainings"] == 0, projects
    versions = [
        call(url, "/predict", {"tasks": [{"id": 1, "data": {"body": TEXTS[0]}}], "project": f"{p}.17"})[1]
        for p in (1, 2)
    ]
    assert [v["model_version"] for v in versions] == ["spacy-depner-1", "spacy-depner-0"]


class FakeLabelStudio(BaseHTTPRequestHandler):
    """Answers a project's export; records the Authorization header of each request."""

    seen: list = []

    def do_GET(self):
        self.seen.append((self.path, self.headers.get("Authorization")))
        text = TEXTS[0]
        start = text.index("Mary")
        result = [
            {
                "from_name": "ner",
                "to_name": "doc",
                "type": "labels",
                "value": {"start": start, "end": start + 4, "text": "Mary", "labels": ["LOC"]},
            }
        ]
        body = json.dumps([{"id": 1, "data": {"body": text}, "annotations": [{"id": 5, "result": result}]}]).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_label_studio_is_reached_at_the_configured_address_never_at_one_a_request_names(pipeline):
    fake = ThreadingHTTPServer(("127.0.0.1", 0), FakeLabelStudio)
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    backend = LabelStudioBackend(
        str(pipeline), epochs=2, label_studio_url=f"http://127.0.0.1:{fake.server_port}", label_studio_api_key="key1"
    )
    server, address = running(WSGIApplication(backend))
    try:
        call(
            address,
            "/setup",
            {"project": "4.17", "schema": CONFIG, "hostname": "http://192.0.2.1:1", "access_token": "x"},
        )
        assert call(address, "/webhook", {"action": "START_TRAINING", "project": {"id": 4}})[0] == 201
        assert backend.wait_for_training(300)
        assert FakeLabelStudio.seen == [("/api/projects/4/export?exportType=JSON", "Token key1")]
        assert backend.project("4").trainings == 1 and backend.project("4").last_error is None
    finally:
        server.shutdown()
        server.server_close()
        fake.shutdown()
        fake.server_close()


def test_metrics_count_requests_predictions_and_trainings(backend, url):
    call(url, "/predict", {"tasks": [{"id": n, "data": {"text": text}} for n, text in enumerate(TEXTS)]})
    call(url, "/predict", {"tasks": "none"})
    status, metrics = call(url, "/metrics")
    assert status == 200
    assert metrics["predictions"] == len(TEXTS) and metrics["requests"]["POST /predict 200"] == 1
    assert metrics["requests"]["POST /predict 400"] == 1 and metrics["trainings"] == 0


def test_the_wsgi_factory_reads_its_settings_from_the_environment(pipeline, monkeypatch):
    monkeypatch.setenv("SPACY_DEPNER_PIPELINE", str(pipeline))
    monkeypatch.setenv("SPACY_DEPNER_EPOCHS", "3")
    monkeypatch.setenv("BASIC_AUTH_USER", "a")
    monkeypatch.setenv("BASIC_AUTH_PASS", "b")
    application = wsgi.application()
    assert application.backend.epochs == 3 and application.basic_auth == ("a", "b")
    monkeypatch.delenv("SPACY_DEPNER_PIPELINE")
    with pytest.raises(ValueError, match="SPACY_DEPNER_PIPELINE"):
        wsgi.application()


@contextlib.contextmanager
def gunicorn_application(log: Path, **environment):
    """The WSGI application's factory run by gunicorn (one worker, threads) on a free port with ``environment``
    added (e.g. ``SPACY_DEPNER_PIPELINE``, ``BASIC_AUTH_USER``); its address once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [shutil.which("gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "4",
         "--timeout", "600", "spacy_depner.serving.wsgi:application()"],
        env={**os.environ, **environment}, stdout=subprocess.DEVNULL, stderr=open(log, "wb"),
    )  # fmt: skip
    address = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                status_of(address, "/health")
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                time.sleep(0.5)
        yield address
    finally:
        process.terminate()
        process.wait(30)


NO_GUNICORN = "gunicorn is not installed (the test extra has it)"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gunicorn") is None, reason=NO_GUNICORN)
def test_gunicorn_runs_the_application_with_basic_auth(pipeline, tmp_path):
    settings = {"SPACY_DEPNER_PIPELINE": str(pipeline), "BASIC_AUTH_USER": "u", "BASIC_AUTH_PASS": "p"}
    with gunicorn_application(tmp_path / "gunicorn.log", **settings) as address:
        assert status_of(address, "/health")[0] == 401
        assert status_of(address, "/health", {"Authorization": authorization("u", "p")})[0] == 200


def test_the_guide_shows_both_servers_a_dockerfile_and_the_settings_the_factory_reads():
    guide = (Path(__file__).parents[2] / "docs" / "guides" / "active_learning.md").read_text(encoding="utf8")
    assert "python -m spacy_depner serve " in guide and "```dockerfile\nFROM " in guide
    assert (
        guide.count("'spacy_depner.serving.wsgi:application()'") == 1
        and '"spacy_depner.serving.wsgi:application()"' in guide
    )
    named = set(re.findall(r"SPACY_DEPNER_[A-Z_]+", guide)) | {"BASIC_AUTH_USER", "BASIC_AUTH_PASS"}
    read = {variable for variable, _ in wsgi.SETTINGS.values()} | {"SPACY_DEPNER_MAX_BODY_MB"}
    assert named - {"BASIC_AUTH_USER", "BASIC_AUTH_PASS"} == read - {"LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"}
