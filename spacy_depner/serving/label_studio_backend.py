"""A Label Studio ML backend's model logic, with no HTTP in it: Label Studio's
ML backend protocol (the routes of ``label_studio_ml/api.py`` in
HumanSignal/label-studio-ml-backend, as Label Studio's ``ml/api_connector.py``
calls them) as methods taking and returning the JSON bodies, over
``inference/``; ``wsgi`` serves it to any WSGI server, ``standard_server``
on the standard library's.

* ``health()``: ``{"status": "UP", "model_version", "training", "trainings",
  "last_error", "skipped", "projects": {PROJECT: its state}}``.
* ``setup({"project", "schema"})``: ``{"model_version"}``; keeps the
  project's labeling config. A ``hostname`` or ``access_token`` it holds is
  ignored: Label Studio is reached at the address and with the key the
  backend was started with (``label_studio_url``, ``label_studio_api_key``).
* ``predict({"tasks": [{"id", "data"}], "project", "label_config"})``:
  ``{"results": [prediction per task], "model_version"}``; a prediction is
  ``{"result", "score", "model_version"}``: the component's predicted
  mentions of the task's Doc (``review_tasks.predicted_mentions``: never
  whitespace) as ``labels`` results each with its exact marginal probability
  as ``score`` (only those inside the task's reviewed region where it names
  one, found as the importer finds it, ``annotation_alignment.reviewed_region``,
  and with a label of the config), and the task's ``score`` the rank measure
  (``pipeline.uncertainty``) of its text; written by
  ``readers.label_studio_format``.
* ``webhook({"action", "project", ...})``: ``ANNOTATION_CREATED`` /
  ``ANNOTATION_UPDATED`` (``annotation``, ``task``), ``ANNOTATIONS_CREATED``
  (lists), ``ANNOTATIONS_DELETED`` (``annotations``) update the project's
  annotations and start a training; ``START_TRAINING`` fetches the project's
  export from Label Studio (else the annotations kept) and trains. Other
  actions are answered and ignored.
* ``train({"annotations": [exported tasks], "project"})``: trains the project
  on those tasks; ``{"job"}``.
* ``metrics()``: counts of predictions, trainings and failed trainings.

Each project (Label Studio's project id; ``default`` for requests naming
none) has its own state under its own lock: labeling config, annotations,
served model (PIPELINE until its first training), trainings, last error,
and what its last training skipped. Requests and training run on the ops
(CPU or GPU) current when the backend was made. Trainings run one at a time
in a background thread (``retraining``: a fresh copy of PIPELINE trained on
the project's annotations as ``import-annotations`` reads them); events that
come meanwhile train once more when it ends. A finished training's model
replaces the project's (``model_version`` ``spacy-depner-N``, N trainings
done) and, with ``output``, is saved atomically to ``OUTPUT/PROJECT/``
(``model-last`` and the ``annotations.json`` it trained on); a failed
training (any error, its output's included) keeps the served model, is
logged and reported in ``health()``, and the next event trains again."""

import json
import os
import sys
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from spacy.tokens import Doc, Span
from thinc.api import get_current_ops, set_current_ops

from ..inference.ranking import scored_batches
from ..inference.review_tasks import predicted_mentions, span_record, task_measures
from ..pipeline.uncertainty import MEASURES, only_entity_pipe
from ..readers.annotation_alignment import reviewed_region
from ..readers.annotation_tasks import ImportOptions, Task, task_regions
from ..readers.annotation_tools import ImportCounts
from ..readers.label_studio_format import MODEL_VERSION, LabelingConfig, label_studio_prediction, labeling_config
from ..util.atomic_files import atomic_folder_contents
from ..util.pipelines import load_pipeline
from . import label_studio_payloads as payloads
from .retraining import retrained_pipeline, serve_message

ANNOTATION_EVENTS = ("ANNOTATION_CREATED", "ANNOTATION_UPDATED", "ANNOTATIONS_CREATED")


@dataclass
class ProjectState:
    """One Label Studio project's config, annotations and model (module docstring)."""

    config: LabelingConfig = field(default_factory=LabelingConfig)
    tasks: Dict[Any, Dict[str, Any]] = field(default_factory=dict)  # task id -> task, its annotations
    nlp: Any = None  # None: the backend's PIPELINE
    trainings: int = 0
    last_error: Optional[str] = None
    skipped: Counter = field(default_factory=Counter)
    left_out: Dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def model_version(self) -> str:
        return f"{MODEL_VERSION}-{self.trainings}"

    def summary(self) -> Dict[str, Any]:
        return {
            "model_version": self.model_version,
            "trainings": self.trainings,
            "last_error": self.last_error,
            "annotated_tasks": sum(1 for task in self.tasks.values() if task.get("annotations")),
            "skipped": dict(sorted(self.skipped.items())),
            "left_out": dict(self.left_out),
        }


def check_output(output: Optional[Path]) -> None:
    """``--output`` usable (a folder, or a new one, made, in a folder that exists; writable), else a ValueError."""
    if output is None:
        return
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise ValueError(f"--output {output} is a file: give a folder (trained pipelines are saved in it)")
    if not output.exists() and not output.parent.is_dir():
        raise ValueError(
            f"--output {output}: its folder {output.parent} does not exist; make it (mkdir -p {output.parent}) "
            "or choose another --output"
        )
    folder = output if output.exists() else output.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"--output {output}: {folder} is not writable; choose another --output")
    output.mkdir(exist_ok=True)


class LabelStudioBackend:
    """The served models, the annotations received and the training thread (module docstring)."""

    def __init__(
        self,
        pipeline: str,
        component: Optional[str] = None,
        measure: str = "expected_errors",
        epochs: int = 10,
        batch_size: int = 64,
        output: Optional[Path] = None,
        alignment_mode: str = "strict",
        skip_misaligned: bool = True,
        offsets: str = "characters",
        label_studio_url: Optional[str] = None,
        label_studio_api_key: Optional[str] = None,
    ):
        if measure not in MEASURES:
            raise ValueError(f"Unknown measure {measure!r}: use one of {', '.join(MEASURES)}")
        if epochs < 1:
            raise ValueError(f"epochs={epochs}: give at least 1")
        check_output(output)
        self.options = ImportOptions(alignment_mode=alignment_mode, skip_misaligned=skip_misaligned, offsets=offsets)
        self.pipeline, self.component, self.measure, self.epochs = pipeline, component, measure, epochs
        self.batch_size, self.output = batch_size, output
        self.label_studio_url = (label_studio_url or "").rstrip("/") or None
        self.label_studio_api_key = label_studio_api_key
        self.ops = get_current_ops()  # thinc's ops are per thread: the request and training threads set these
        self.nlp = load_pipeline(pipeline)
        self.pipe = only_entity_pipe(self.nlp, component)
        self.projects: Dict[str, ProjectState] = {}
        self.projects_lock = threading.Lock()
        self.predicting = threading.Lock()  # one prediction at a time: it selects the served pipeline's components
        self.wake = threading.Condition()
        self.pending: List[str] = []  # projects waiting for a training, in order
        self.running: Optional[str] = None
        self.counts = Counter()
        threading.Thread(target=self.training_loop, name="spacy-depner-training", daemon=True).start()

    def project(self, key: Any) -> ProjectState:
        """The state of project ``key`` (an id, or a request's ``project`` field), made on first use."""
        key = payloads.project_key(key)
        with self.projects_lock:
            return self.projects.setdefault(key, ProjectState())

    def health(self) -> Dict[str, Any]:
        with self.projects_lock:
            projects = {key: state.summary() for key, state in self.projects.items()}
        errors = [(key, p["last_error"]) for key, p in projects.items() if p["last_error"]]
        return {
            "status": "UP",
            "model_class": "spacy-depner",
            "model_version": f"{MODEL_VERSION}-{sum(p['trainings'] for p in projects.values())}",
            "training": self.running is not None or bool(self.pending),
            "trainings": sum(p["trainings"] for p in projects.values()),
            "last_error": f"project {errors[-1][0]}: {errors[-1][1]}" if errors else None,
            "skipped": dict(sum((Counter(p["skipped"]) for p in projects.values()), Counter())),
            "projects": projects,
        }

    def metrics(self) -> Dict[str, Any]:
        with self.projects_lock:
            projects = list(self.projects.values())
        return {
            "predictions": self.counts["predictions"],
            "trainings": sum(p.trainings for p in projects),
            "failed_trainings": self.counts["failed_trainings"],
            "training_seconds": round(self.counts["training_seconds"], 3),
            "projects": len(projects),
        }

    def setup(self, request: Dict[str, Any]) -> Dict[str, Any]:
        project = self.project(request.get("project"))
        schema = payloads.optional_text(request, "schema")
        if schema:
            config = labeling_config(schema)
            with project.lock:
                project.config = config
        return {"model_version": project.model_version}

    def predict(self, request: Dict[str, Any]) -> Dict[str, Any]:
        tasks = request.get("tasks")
        if not isinstance(tasks, list):
            raise ValueError('POST /predict needs "tasks": a list of Label Studio tasks')
        project = self.project(request.get("project"))
        label_config = payloads.optional_text(request, "label_config")
        with project.lock:
            if label_config:
                project.config = labeling_config(label_config)
            config, nlp, version = project.config, project.nlp or self.nlp, project.model_version
        pipe = only_entity_pipe(nlp, self.component)
        texts = [payloads.task_text(task, config) for task in tasks]
        results = []
        records = ((text, index) for index, text in enumerate(texts))
        with self.predicting:
            for scored in scored_batches(nlp, pipe, records, self.batch_size):
                for doc, index, uncertainty in scored:
                    mentions = self.shown_mentions(doc, uncertainty, pipe.labels, tasks[index], index, config)
                    spans = [span_record(span, probability) for span, probability in mentions]
                    score = task_measures(uncertainty)[self.measure]
                    results.append(label_studio_prediction(spans, score, config.from_name, config.to_name, version))
        self.counts["predictions"] += len(results)
        return {"results": results, "model_version": version}

    @staticmethod
    def shown_mentions(
        doc: Doc, uncertainty, labels, task: Dict[str, Any], index: int, config: LabelingConfig
    ) -> List[Tuple[Span, float]]:
        """The predicted mentions of ``doc`` inside the task's reviewed region
        (where its ``data`` names one) with a label of the config (if it lists
        any); a region the importer would refuse is a ValueError naming the task."""
        where = f"tasks[{index}] (id {task.get('id')})"
        region, region_chars = task_regions(task["data"], where)
        inside = reviewed_region(doc, Task(where, doc.text, "accept", region=region, region_chars=region_chars))
        return [
            (span, probability)
            for span, probability in predicted_mentions(doc, uncertainty, labels)
            if inside.start <= span.start
            and span.end <= inside.end
            and (not config.labels or span.label_ in config.labels)
        ]

    def webhook(self, request: Dict[str, Any]) -> Dict[str, Any]:
        action = request.get("action")
        key = payloads.project_key(request.get("project"))
        project = self.project(key)
        if action == "START_TRAINING":
            exported = self.project_export(key)
            if exported is not None:
                self.replace_tasks(project, payloads.exported_tasks(exported, "the project's export"))
        elif action == "ANNOTATIONS_DELETED":
            gone = payloads.deleted_annotations(request)
            with project.lock:
                for task in project.tasks.values():
                    task["annotations"] = [a for a in task["annotations"] if a.get("id") not in gone]
        elif action in ANNOTATION_EVENTS:
            received = payloads.annotation_event(action, request)
            with project.lock:
                for task in received:
                    kept = project.tasks.setdefault(task["id"], {"id": task["id"], "annotations": []})
                    kept["data"] = task["data"]
                    ids = {annotation.get("id") for annotation in task["annotations"]}
                    kept["annotations"] = [a for a in kept["annotations"] if a.get("id") not in ids]
                    kept["annotations"] += task["annotations"]
        else:
            return {"status": "ignored", "action": action}
        self.start_training(key)
        return {"status": "training scheduled", "action": action, "model_version": project.model_version}

    def train(self, request: Dict[str, Any]) -> Dict[str, Any]:
        key = payloads.project_key(request.get("project"))
        project = self.project(key)
        self.replace_tasks(project, payloads.exported_tasks(request.get("annotations")))
        self.start_training(key)
        return {"job": str(project.trainings + 1)}

    @staticmethod
    def replace_tasks(project: ProjectState, exported: List[Dict[str, Any]]) -> None:
        with project.lock:
            project.tasks = {task.get("id", index): dict(task) for index, task in enumerate(exported)}

    def project_export(self, key: str) -> Optional[List[Dict[str, Any]]]:
        """Project ``key``'s JSON export from the Label Studio the backend was started with, or None."""
        if key == payloads.DEFAULT_PROJECT or not (self.label_studio_url and self.label_studio_api_key):
            return None
        url = f"{self.label_studio_url}/api/projects/{key}/export?exportType=JSON"
        request = urllib.request.Request(url, headers={"Authorization": f"Token {self.label_studio_api_key}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.loads(answer.read().decode("utf8"))
        except (OSError, ValueError) as error:
            log(f"the export of project {key} could not be read ({error}): training on the annotations received")
            return None

    def start_training(self, key: str) -> None:
        with self.wake:
            if key not in self.pending:
                self.pending.append(key)
            self.wake.notify()

    def training_loop(self) -> None:
        set_current_ops(self.ops)
        while True:
            with self.wake:
                while not self.pending:
                    self.wake.wait()
                self.running = self.pending.pop(0)
            try:
                self.train_once(self.running)
            except BaseException as error:  # never the end of the thread: the next event trains again
                self.project(self.running).last_error = f"{type(error).__name__}: {error}"
                log(f"training project {self.running} failed: {type(error).__name__}: {error}")
            finally:
                with self.wake:
                    self.running = None
                    self.wake.notify_all()

    def train_once(self, key: str) -> None:
        """One training on project ``key``'s annotations; its model replaced (and saved) when it succeeds."""
        project = self.project(key)
        with project.lock:
            tasks = [dict(task) for task in project.tasks.values() if task.get("annotations")]
            text_key = project.config.text_key
        if not tasks:
            return
        started, counts, left_out = time.perf_counter(), ImportCounts(), {}
        try:
            nlp, losses = retrained_pipeline(
                self.pipeline,
                self.component,
                tasks,
                text_key,
                epochs=self.epochs,
                options=self.options,
                counts=counts,
                left_out=left_out,
            )
            if self.output is not None:
                self.save(key, nlp, tasks)
        except Exception as error:  # a training that fails keeps the served model and says why
            with project.lock:
                project.last_error = f"{type(error).__name__}: {serve_message(error)}"
                project.skipped, project.left_out = counts.skipped, left_out
            self.counts["failed_trainings"] += 1
            log(f"training project {key} on {len(tasks)} annotated tasks failed: {project.last_error}")
            return
        with project.lock:
            project.nlp, project.trainings, project.last_error = nlp, project.trainings + 1, None
            project.skipped, project.left_out = counts.skipped, left_out
        self.counts["training_seconds"] += time.perf_counter() - started
        skipped = f", skipped {dict(counts.skipped)}" if counts.skipped else ""
        log(
            f"project {key}: trained on {len(tasks)} annotated tasks (losses {losses}{skipped}): {project.model_version}"
        )

    def save(self, key: str, nlp, tasks: List[Dict[str, Any]]) -> None:
        """``OUTPUT/KEY/model-last`` and ``annotations.json``, each replaced whole or not at all."""
        try:
            with atomic_folder_contents(Path(self.output) / key) as folder:
                nlp.to_disk(folder / "model-last")
                (folder / "annotations.json").write_text(json.dumps(tasks, ensure_ascii=False), encoding="utf8")
        except OSError as error:
            raise OSError(f"the trained pipeline could not be saved in {self.output}/{key} ({error})") from None

    def wait_for_training(self, timeout: float = 300.0) -> bool:
        """Wait until no training runs or waits (for tests and scripts); False on timeout."""
        with self.wake:
            return self.wake.wait_for(lambda: not (self.pending or self.running is not None), timeout)


def log(message: str) -> None:
    print(f"serve: {message}", file=sys.stderr, flush=True)
