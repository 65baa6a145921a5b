"""``serve`` connected to a real Label Studio server (started as
``tests/label_studio_server.py`` starts it): the backend is added to a
project through Label Studio's ML API, Label Studio asks it for predictions
(each span with its probability, the task with its score), a person's
annotation is submitted, Label Studio's webhook makes the backend retrain,
and the next predictions Label Studio gets come from the new model and
follow the annotation; Label Studio's "Start training" trains it again.

Deployed as users deploy it (gunicorn, basic auth: a request without it gets
a 401), the backend's predictions on texts with double spaces, newlines and
emoji are accepted unchanged, the annotations retrain it, and the project's
JSON, JSON-MIN and CSV exports each import back with exactly the predicted
entities."""

import json
import shutil
import threading
import time
import urllib.request

import pytest
from label_studio_server import TOKEN, labels, server  # noqa: F401 (the fixture)
from test_import_annotations import import_annotations, read_back
from test_serve import CONFIG, TEXTS
from test_serve_network import NO_GUNICORN, authorization, gunicorn_application, status_of
from test_serve_regions import WHITESPACE_TEXTS, trimmed

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


USER, PASSWORD = "label-studio", "not-a-secret-2"


def exported(server, project_id, kind: str) -> bytes:
    """The project's export in Label Studio's ``kind`` (JSON, JSON_MIN, CSV), as the file it downloads."""
    request = urllib.request.Request(
        f"{server.url}/api/projects/{project_id}/export?exportType={kind}", headers={"Authorization": f"Token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=120) as answer:
        return answer.read()


def project_health(url, project_id):
    request = urllib.request.Request(url + "/health", headers={"Authorization": authorization(USER, PASSWORD)})
    with urllib.request.urlopen(request, timeout=30) as answer:
        health = json.loads(answer.read())
    return health, health["projects"].get(str(project_id), {})


@pytest.mark.skipif(shutil.which("gunicorn") is None, reason=NO_GUNICORN)
def test_predictions_accepted_unchanged_retrain_and_every_export_imports_back(
    server,  # noqa: F811
    pipeline,
    tmp_path,
    capsys,
):
    settings = {
        "SPACY_DEPNER_PIPELINE": str(pipeline),
        "SPACY_DEPNER_EPOCHS": "3",
        "BASIC_AUTH_USER": USER,
        "BASIC_AUTH_PASS": PASSWORD,
        "LABEL_STUDIO_URL": server.url,
        "LABEL_STUDIO_API_KEY": TOKEN,
    }
    with gunicorn_application(tmp_path / "gunicorn.log", **settings) as url:
        assert status_of(url, "/health")[0] == 401 and status_of(url, "/predict", data=b"{}")[0] == 401
        project = server.call("POST", "/api/projects", {"title": "accepted unchanged", "label_config": CONFIG})
        server.call("POST", f"/api/projects/{project['id']}/import", [{"body": text} for text in WHITESPACE_TEXTS])
        listed = server.call("GET", f"/api/tasks?project={project['id']}")
        task_ids = {t["data"]["body"]: t["id"] for t in (listed["tasks"] if isinstance(listed, dict) else listed)}
        assert set(task_ids) == set(WHITESPACE_TEXTS)
        connected = server.call(
            "POST",
            "/api/ml",
            {
                "url": url,
                "project": project["id"],
                "title": "spacy-depner under gunicorn",
                "auth_method": "BASIC_AUTH",
                "basic_auth_user": USER,
                "basic_auth_pass": PASSWORD,
            },
        )
        assert connected["state"] == "CO", connected  # /health and /setup answered with basic auth
        # the webhook Label Studio made for the backend sends no credentials: give it the backend's
        hooks = server.call("GET", f"/api/webhooks/?project={project['id']}")
        (hook,) = [hook for hook in hooks if hook["url"].startswith(url)]
        server.call(
            "PATCH", f"/api/webhooks/{hook['id']}/", {"headers": {"Authorization": authorization(USER, PASSWORD)}}
        )

        predictions = retrieved_predictions(server, project["id"], task_ids.values())
        predicted = set()
        for text, task_id in task_ids.items():
            (prediction,) = predictions[task_id]
            for item in prediction["result"]:
                value = item["value"]
                assert trimmed(value["text"]) and text[value["start"] : value["end"]] == value["text"], value
                predicted.add((text, value["start"], value["end"], value["labels"][0]))
            # the person accepts the pre-annotation as it is
            server.call("POST", f"/api/tasks/{task_id}/annotations", {"result": prediction["result"]})
        assert len(predicted) >= 5

        def trained():
            health, state = project_health(url, project["id"])
            return state.get("annotated_tasks") == len(task_ids) and state["trainings"] >= 1 and not health["training"]

        wait_for(trained, "the trainings on the accepted predictions")
        _, state = project_health(url, project["id"])
        assert state["last_error"] is None and state["skipped"] == {} and state["left_out"] == {}, state
        again = retrieved_predictions(server, project["id"], task_ids.values())
        assert any(p["model_version"] == state["model_version"] != "spacy-depner-0" for p in sum(again.values(), []))

        for kind, suffix in (("JSON", "json"), ("JSON_MIN", "json"), ("CSV", "csv")):
            path = tmp_path / f"export-{kind}.{suffix}"
            path.write_bytes(exported(server, project["id"], kind))
            output = tmp_path / f"{kind}.spacy"
            summary = import_annotations(capsys, "label-studio", path, output, "--text-key", "body")
            assert summary["skipped"] == {} and summary["docs"] == len(WHITESPACE_TEXTS), (kind, summary)
            imported = {(doc.text, e.start_char, e.end_char, e.label_) for doc in read_back(output) for e in doc.ents}
            assert imported == predicted, (kind, imported ^ predicted)
