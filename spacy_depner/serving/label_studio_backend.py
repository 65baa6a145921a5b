"""A Label Studio ML backend serving an entity component: Label Studio's
ML backend protocol (the routes of ``label_studio_ml/api.py`` in
HumanSignal/label-studio-ml-backend, as Label Studio's
``ml/api_connector.py`` calls them) over ``inference/``, on the standard
library's ``http.server`` (one thread per request).

Routes (JSON bodies and answers):

* ``GET /health`` (and ``GET /``): ``{"status": "UP", "model_version",
  "training", "trainings", "last_error"}``.
* ``POST /setup`` ``{"project", "schema", "hostname", "access_token"}``:
  ``{"model_version"}``; keeps the labeling config (``schema``) and how to
  reach Label Studio (for ``START_TRAINING``).
* ``POST /predict`` ``{"tasks": [{"id", "data"}], "label_config", ...}``:
  ``{"results": [prediction per task], "model_version"}``; a prediction is
  ``{"result", "score", "model_version"}``: the predicted mentions as
  ``labels`` results each with its exact marginal probability as ``score``
  (only those inside the task's ``region_chars``, where it has one, and with a
  label of the config), and the task's ``score`` the rank measure
  (``pipeline.uncertainty``) of its text, which Label Studio sorts by.
* ``POST /webhook`` ``{"action", ...}``: ``ANNOTATION_CREATED`` /
  ``ANNOTATION_UPDATED`` (``annotation``, ``task``), ``ANNOTATIONS_CREATED``
  (lists), ``ANNOTATIONS_DELETED`` (``annotations``) update the annotations
  kept and start a training; ``START_TRAINING`` fetches the project's export
  from Label Studio (with the ``/setup`` token, else the annotations kept)
  and trains. Other actions are answered and ignored.
* ``POST /train`` ``{"annotations": [exported tasks]}``: trains on those
  tasks; ``{"job"}``.
* ``GET /is_training``: ``{"is_training"}``.

Requests and training run on the ops (CPU or GPU) current when the
backend was made. Training runs in one background thread (``retraining``: a fresh copy of
PIPELINE trained on every annotation kept, the last annotation of each
task as ``import-annotations`` reads it, reviewed regions annotated and
the tokens outside them missing); events that come meanwhile start one
more training when it ends. A finished training's model replaces the
served one (``model_version`` ``spacy-depner-N``, N trainings done); a
failed one keeps the served model and reports its error in ``/health``."""

import json
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, List, Optional

from thinc.api import get_current_ops, set_current_ops

from ..inference.ranking import scored_batches
from ..inference.review_tasks import doc_tasks
from ..inference.tool_tasks import MODEL_VERSION, label_studio_result
from ..pipeline.uncertainty import MEASURES, only_entity_pipe
from ..util.pipelines import load_pipeline
from .label_studio_config import LabelingConfig, labeling_config
from .retraining import retrained_pipeline

ANNOTATION_EVENTS = ("ANNOTATION_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_CREATED", "ANNOTATIONS_DELETED")


def listed(value) -> list:
    """``value`` as a list (a webhook's ``many`` payloads are lists, the others one object)."""
    return value if isinstance(value, list) else [value]


def task_text(task: Dict[str, Any], config: LabelingConfig) -> str:
    """The text of a task under the config's data key; else a ValueError naming the task and its keys."""
    data = task.get("data") if isinstance(task, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get(config.text_key), str):
        keys = sorted(data) if isinstance(data, dict) else []
        raise ValueError(
            f"Task {task.get('id') if isinstance(task, dict) else task!r}: no text under data.{config.text_key} (data keys: {keys}); "
            f'the labeling config\'s Text object must read it (value="${config.text_key}")'
        )
    return data[config.text_key]


class LabelStudioBackend:
    """The served model, the annotations received and the training thread (module docstring)."""

    def __init__(
        self,
        pipeline: str,
        component: Optional[str] = None,
        measure: str = "expected_errors",
        epochs: int = 10,
        batch_size: int = 64,
        output: Optional[Path] = None,
    ):
        if measure not in MEASURES:
            raise ValueError(f"Unknown measure {measure!r}: use one of {', '.join(MEASURES)}")
        if epochs < 1:
            raise ValueError(f"epochs={epochs}: give at least 1")
        self.pipeline, self.component, self.measure, self.epochs = pipeline, component, measure, epochs
        self.batch_size, self.output = batch_size, output
        self.ops = get_current_ops()  # thinc's ops are per thread: the request and training threads set these
        self.nlp = load_pipeline(pipeline)
        self.pipe = only_entity_pipe(self.nlp, component)
        self.trainings = 0
        self.config = LabelingConfig()
        self.label_studio: Dict[str, str] = {}
        self.tasks: Dict[Any, Dict[str, Any]] = {}  # task id -> task, its annotations by id in "annotations"
        self.lock = threading.Lock()  # the model and the annotations
        self.predicting = threading.Lock()  # one prediction at a time: it selects the served pipeline's components
        self.wake = threading.Condition()
        self.pending = self.running = False
        self.last_error: Optional[str] = None
        threading.Thread(target=self.training_loop, name="spacy-depner-training", daemon=True).start()

    @property
    def model_version(self) -> str:
        return f"{MODEL_VERSION}-{self.trainings}"

    def health(self) -> Dict[str, Any]:
        return {
            "status": "UP",
            "model_class": "spacy-depner",
            "model_version": self.model_version,
            "training": self.running or self.pending,
            "trainings": self.trainings,
            "last_error": self.last_error,
        }

    def setup(self, request: Dict[str, Any]) -> Dict[str, Any]:
        if request.get("schema"):
            self.config = labeling_config(request["schema"])
        if request.get("hostname") and request.get("access_token"):
            self.label_studio = {"hostname": request["hostname"], "access_token": request["access_token"]}
        return {"model_version": self.model_version}

    def predict(self, request: Dict[str, Any]) -> Dict[str, Any]:
        tasks = request.get("tasks")
        if not isinstance(tasks, list):
            raise ValueError('POST /predict needs "tasks": a list of Label Studio tasks')
        if request.get("label_config"):
            self.config = labeling_config(request["label_config"])
        config = self.config
        texts = [task_text(task, config) for task in tasks]
        with self.lock:
            nlp, pipe, version = self.nlp, self.pipe, self.model_version
        results = []
        records = ((text, index) for index, text in enumerate(texts))
        with self.predicting:
            for scored in scored_batches(nlp, pipe, records, self.batch_size):
                for doc, index, uncertainty in scored:
                    (record,) = doc_tasks(doc, {}, uncertainty, pipe.labels, self.measure, "doc")
                    shown = self.shown_spans(record["spans"], tasks[index], config)
                    result = label_studio_result(shown, config.from_name, config.to_name)
                    results.append({"result": result, "score": record["score"], "model_version": version})
        return {"results": results, "model_version": version}

    @staticmethod
    def shown_spans(spans: List[Dict], task: Dict[str, Any], config: LabelingConfig) -> List[Dict]:
        """The spans inside the task's ``data.region_chars`` (if it has one) with a label of the config (if it lists any)."""
        region = task["data"].get("region_chars")
        if not (isinstance(region, list) and len(region) == 2 and all(isinstance(x, int) for x in region)):
            region = (0, float("inf"))
        start, end = region
        return [
            span
            for span in spans
            if start <= span["start"] and span["end"] <= end and (not config.labels or span["label"] in config.labels)
        ]

    def webhook(self, request: Dict[str, Any]) -> Dict[str, Any]:
        action = request.get("action")
        if action == "START_TRAINING":
            exported = self.project_export(request.get("project"))
            if exported is not None:
                self.replace_tasks(exported)
        elif action in ANNOTATION_EVENTS:
            self.keep_annotations(action, request)
        else:
            return {"status": "ignored", "action": action}
        self.start_training()
        return {"status": "training scheduled", "action": action, "model_version": self.model_version}

    def train(self, request: Dict[str, Any]) -> Dict[str, Any]:
        annotated = request.get("annotations")
        if not isinstance(annotated, list) or not annotated:
            raise ValueError('POST /train needs "annotations": a non-empty list of exported tasks with annotations')
        self.replace_tasks(annotated)
        self.start_training()
        return {"job": str(self.trainings + 1)}

    def keep_annotations(self, action: str, request: Dict[str, Any]) -> None:
        """Update the annotations kept from an annotation event's payload."""
        with self.lock:
            if action == "ANNOTATIONS_DELETED":
                gone = {annotation.get("id") for annotation in listed(request.get("annotations", []))}
                for task in self.tasks.values():
                    task["annotations"] = [a for a in task["annotations"] if a.get("id") not in gone]
                return
            tasks = {task.get("id"): task for task in listed(request.get("task", []))}
            for annotation in listed(request.get("annotation", [])):
                task_id = annotation.get("task")
                task = tasks.get(task_id if not isinstance(task_id, dict) else task_id.get("id"))
                if task is None:
                    raise ValueError(f"{action}: annotation {annotation.get('id')} comes without its task")
                kept = self.tasks.setdefault(task["id"], {"id": task["id"], "annotations": []})
                kept["data"] = task.get("data", {})
                others = [a for a in kept["annotations"] if a.get("id") != annotation.get("id")]
                kept["annotations"] = others + [annotation]

    def replace_tasks(self, exported: List[Dict[str, Any]]) -> None:
        with self.lock:
            self.tasks = {task.get("id", index): dict(task) for index, task in enumerate(exported)}

    def project_export(self, project) -> Optional[List[Dict[str, Any]]]:
        """The project's JSON export from Label Studio (``/setup``'s hostname and token), or None."""
        project_id = project.get("id") if isinstance(project, dict) else str(project or "").split(".")[0]
        if not project_id or not self.label_studio:
            return None
        url = f"{self.label_studio['hostname'].rstrip('/')}/api/projects/{project_id}/export?exportType=JSON"
        request = urllib.request.Request(url, headers={"Authorization": f"Token {self.label_studio['access_token']}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read().decode("utf8"))
        except (OSError, ValueError) as error:
            log(f"the export of project {project_id} could not be read ({error}): training on the annotations received")
            return None

    def start_training(self) -> None:
        with self.wake:
            self.pending = True
            self.wake.notify()

    def training_loop(self) -> None:
        set_current_ops(self.ops)
        while True:
            with self.wake:
                while not self.pending:
                    self.wake.wait()
                self.pending, self.running = False, True
            try:
                self.train_once()
            finally:
                with self.wake:
                    self.running = False
                    self.wake.notify_all()

    def train_once(self) -> None:
        """One training on the annotations kept; the model replaced when it succeeds."""
        with self.lock:
            tasks = [dict(task) for task in self.tasks.values() if task.get("annotations")]
        if not tasks:
            return
        try:
            nlp, losses = retrained_pipeline(
                self.pipeline, self.component, tasks, self.config.text_key, epochs=self.epochs
            )
        except Exception as error:  # a training that fails keeps the served model and says why
            self.last_error = f"{type(error).__name__}: {error}"
            log(f"training on {len(tasks)} annotated tasks failed: {self.last_error}")
            return
        with self.lock:
            self.nlp, self.pipe = nlp, only_entity_pipe(nlp, self.component)
            self.trainings += 1
            self.last_error = None
        if self.output is not None:
            nlp.to_disk(Path(self.output) / "model-last")
            (Path(self.output) / "annotations.json").write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf8")
        log(f"trained on {len(tasks)} annotated tasks (losses {losses}): serving {self.model_version}")

    def wait_for_training(self, timeout: float = 300.0) -> bool:
        """Wait until no training runs or waits (for tests and scripts); False on timeout."""
        with self.wake:
            return self.wake.wait_for(lambda: not (self.pending or self.running), timeout)


def log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)


ROUTES = {
    ("GET", "/"): lambda backend, body: backend.health(),
    ("GET", "/health"): lambda backend, body: backend.health(),
    ("GET", "/is_training"): lambda backend, body: {"is_training": backend.health()["training"]},
    ("POST", "/setup"): LabelStudioBackend.setup,
    ("POST", "/predict"): LabelStudioBackend.predict,
    ("POST", "/webhook"): LabelStudioBackend.webhook,
    ("POST", "/train"): LabelStudioBackend.train,
}
CREATED = ("/webhook", "/train")  # answered 201, as label-studio-ml's routes answer them


class BackendHandler(BaseHTTPRequestHandler):
    """JSON in and out for ``ROUTES``; bad input is a 400 with ``{"error"}``, an unknown route a 404."""

    backend: LabelStudioBackend
    quiet = False

    def do_GET(self) -> None:
        self.answer("GET")

    def do_POST(self) -> None:
        self.answer("POST")

    def answer(self, method: str) -> None:
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        route = ROUTES.get((method, path))
        if route is None:
            return self.send_json(404, {"error": f"No route {method} {path}: see {', '.join(p for _, p in ROUTES)}"})
        set_current_ops(self.backend.ops)
        try:
            body = self.read_json() if method == "POST" else {}
            answer = route(self.backend, body)
        except ValueError as error:
            return self.send_json(400, {"error": str(error)})
        except Exception as error:  # a bug: the answer says what, the server keeps serving
            log(f"{method} {path} failed: {type(error).__name__}: {error}")
            return self.send_json(500, {"error": f"{type(error).__name__}: {error}"})
        self.send_json(201 if path in CREATED else 200, answer)

    def read_json(self) -> Dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length).decode("utf8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"The request body is not JSON ({error})") from None
        if not isinstance(body, dict):
            raise ValueError("The request body must be a JSON object")
        return body

    def send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body, ensure_ascii=False).encode("utf8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:
        if not self.quiet:
            log(format % args)


def backend_server(backend: LabelStudioBackend, host: str = "127.0.0.1", port: int = 9090, quiet: bool = False):
    """A ``ThreadingHTTPServer`` answering Label Studio for ``backend`` (``serve_forever`` runs it)."""
    handler = type("Handler", (BackendHandler,), {"backend": backend, "quiet": quiet})
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError as error:
        raise ValueError(f"Cannot listen on {host}:{port} ({error.strerror or error}): choose another --port or --host")
    server.daemon_threads = True
    return server
