"""``serve`` connected to a real Label Studio server (started as
``tests/label_studio_server.py`` starts it): the backend is added to a
project through Label Studio's ML API, Label Studio asks it for predictions
(each span with its probability, the task with its score), a person's
annotation is submitted, Label Studio's webhook makes the backend retrain,
and the next predictions Label Studio gets come from the new model and
follow the annotation; Label Studio's "Start training" trains it again."""

import threading
import time
import urllib.request

import pytest
from label_studio_server import TOKEN, labels, server  # noqa: F401 (the fixture)
from test_serve import CONFIG, TEXTS

from spacy_depner.serving.label_studio_backend import LabelStudioBackend
from spacy_depner.serving.standard_server import backend_server
from spacy_depner.serving.wsgi import WSGIApplication

pytestmark = pytest.mark.slow


def retrieved_predictions(server, project_id, task_ids):
    """Label Studio asks the backend to predict every task; the predictions it stored, by task id."""
    server.call(
        "POST",
        f"/api/dm/actions?id=retrieve_tasks_predictions&project={project_id}",
        {"selectedItems": {"all": True, "excluded": []}},
    )
    found = {}
    for task_id in task_ids:
        listed = server.call("GET", f"/api/predictions/?task={task_id}")
        found[task_id] = listed["results"] if isinstance(listed, dict) else listed
    return found


def wait_for(condition, what: str, seconds: float = 300):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(1)
    pytest.fail(f"waited {seconds} s for {what}")


def spans(prediction):
    return [(r["value"]["text"], r["value"]["labels"][0], r["score"]) for r in prediction["result"]]


@pytest.fixture
def served(pipeline, server):  # noqa: F811
    """The backend reaches Label Studio at the address and with the key it was started with."""
    backend = LabelStudioBackend(str(pipeline), epochs=10, label_studio_url=server.url, label_studio_api_key=TOKEN)
    http = backend_server(WSGIApplication(backend), "127.0.0.1", 0, quiet=True)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    yield backend, f"http://127.0.0.1:{http.server_port}"
    http.shutdown()
    http.server_close()


def test_label_studio_gets_scored_predictions_and_its_annotations_retrain_the_model(server, served):  # noqa: F811
    """The labeling config names its control ``ner`` on the object ``doc``, the text under ``$body``."""
    backend, url = served
    project = server.call("POST", "/api/projects", {"title": "spacy-depner backend", "label_config": CONFIG})
    state = backend.project(project["id"])
    server.call("POST", f"/api/projects/{project['id']}/import", [{"body": text} for text in TEXTS])
    listed = server.call("GET", f"/api/tasks?project={project['id']}")
    task_ids = {task["data"]["body"]: task["id"] for task in (listed["tasks"] if isinstance(listed, dict) else listed)}
    connected = server.call(
        "POST", "/api/ml", {"url": url, "project": project["id"], "title": "spacy-depner", "auto_update": True}
    )
    assert connected["state"] == "CO", connected  # connected: /health and /setup answered

    first = retrieved_predictions(server, project["id"], task_ids.values())
    for text, task_id in task_ids.items():
        (prediction,) = first[task_id]
        assert prediction["model_version"] == "spacy-depner-0" and 0 <= prediction["score"]
        assert spans(prediction) and all(0 < p <= 1 for _, _, p in spans(prediction))
    mary = task_ids[TEXTS[0]]
    assert [(t, label) for t, label, _ in spans(first[mary][0])] == [("Mary", "PER"), ("Paris", "LOC")]

    # the person disagrees: Mary is a place here; Label Studio's webhook brings the annotation to the backend
    server.call(
        "POST",
        f"/api/tasks/{mary}/annotations",
        {"result": labels(TEXTS[0], ("Mary", "LOC"), from_name="ner", to_name="doc")},
    )
    wait_for(lambda: state.trainings >= 1 and not backend.health()["training"], "the backend's training")
    assert state.last_error is None
    with urllib.request.urlopen(url + "/health", timeout=10) as answer:
        assert b'"spacy-depner-1"' in answer.read()

    second = retrieved_predictions(server, project["id"], task_ids.values())
    newest = [p for p in second[mary] if p["model_version"] == "spacy-depner-1"]
    assert len(newest) == 1, second[mary]
    assert [(t, label) for t, label, _ in spans(newest[0])] == [("Mary", "LOC")]
    assert newest[0]["score"] != first[mary][0]["score"]

    # Label Studio's "Start training" (Settings > Model) trains once more on the project's annotations
    server.call("POST", f"/api/ml/{connected['id']}/train", {})
    wait_for(lambda: state.trainings >= 2 and not backend.health()["training"], "the second training")
    assert state.last_error is None and state.model_version == "spacy-depner-2"
    # it sent START_TRAINING, and the backend read the project's export (more than a webhook's task gives)
    assert set(state.tasks[mary]) > {"id", "data", "annotations"}, state.tasks[mary]
