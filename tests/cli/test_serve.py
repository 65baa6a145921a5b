"""``serve``: Label Studio's ML backend protocol over HTTP, without Label
Studio: /health, /setup, /predict (each span's exact probability, the task's
rank measure, spans kept to a task's region), /webhook and /train (training
in the background on the annotations as ``import-annotations`` reads them,
the model swapped in when it ends), and clear 400s for bad requests. The
live loop through a real Label Studio server is in
``tests/cli/test_serve_label_studio.py``; the network and the trainings'
robustness in ``test_serve_network.py`` and ``test_serve_training.py``."""

import json
import tempfile
import threading
import urllib.error
import urllib.request
from types import SimpleNamespace

import pytest
import spacy
from thinc.api import NumpyOps, get_current_ops, set_current_ops

from spacy_depner.pipeline.uncertainty import doc_uncertainties
from spacy_depner.readers.label_studio_format import labeling_config
from spacy_depner.serving import label_studio_backend
from spacy_depner.serving.label_studio_backend import LabelStudioBackend
from spacy_depner.serving.retraining import annotated_docs, check_regions
from spacy_depner.serving.standard_server import backend_server
from spacy_depner.serving.wsgi import WSGIApplication

CONFIG = (
    '<View><Labels name="ner" toName="doc"><Label value="PER"/><Label value="LOC"/><Label value="MISC"/></Labels>'
    '<Text name="doc" value="$body"/></View>'
)
TEXTS = ["Mary lives in Paris", "John Smith visited New York"]


@pytest.fixture
def served(pipeline):
    backend = LabelStudioBackend(str(pipeline), epochs=10)
    server = backend_server(WSGIApplication(backend), "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield backend, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def call(url, path, body=None, raw=None):
    """(status, JSON answer) of a GET (no body) or POST."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode("utf8"))
    request = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def tasks(*texts, **data):
    return [{"id": index + 1, "data": {"body": text, **data}} for index, text in enumerate(texts)]


def labels(text, *spans):
    return [
        {
            "from_name": "ner",
            "to_name": "doc",
            "type": "labels",
            "value": {"start": text.index(word), "end": text.index(word) + len(word), "text": word, "labels": [label]},
        }
        for word, label in spans
    ]


def annotation_event(task_id, text, *spans, annotation_id=None, **data):
    annotation = {"id": annotation_id or 100 + task_id, "task": task_id, "result": labels(text, *spans)}
    return {
        "action": "ANNOTATION_CREATED",
        "annotation": annotation,
        "task": {"id": task_id, "data": {"body": text, **data}},
    }


def predicted(url, *texts, **data):
    status, answer = call(url, "/predict", {"tasks": tasks(*texts, **data), "label_config": CONFIG})
    assert status == 200, answer
    return answer


def test_the_labeling_config_names_the_control_object_key_and_labels():
    assert labeling_config(CONFIG) == ("ner", "doc", "body", ("PER", "LOC", "MISC"))
    assert labeling_config(None) == ("label", "text", "text", ())
    with pytest.raises(ValueError, match="no Labels control on a Text object"):
        labeling_config('<View><Choices name="c" toName="doc"/><Text name="doc" value="$body"/></View>')
    with pytest.raises(ValueError, match="not XML"):
        labeling_config("<View><Labels>")


def test_health_setup_and_unknown_routes(served):
    backend, url = served
    assert call(url, "/health") == (200, backend.health()) and backend.health()["status"] == "UP"
    status, answer = call(url, "/setup", {"project": "3.1700000000", "schema": CONFIG})
    assert (status, answer) == (200, {"model_version": "spacy-depner-0"})
    assert call(url, "/is_training") == (200, {"is_training": False})
    status, answer = call(url, "/versions")
    assert status == 404 and "/predict" in answer["error"]


def test_predictions_hold_each_span_probability_and_the_task_measure(served, nlp):
    _, url = served
    answer = predicted(url, *TEXTS)
    assert answer["model_version"] == "spacy-depner-0" and len(answer["results"]) == len(TEXTS)
    docs = list(nlp.pipe(TEXTS))
    for text, doc, uncertainty, prediction in zip(
        TEXTS, docs, doc_uncertainties(nlp.get_pipe("dgm_ner"), docs), answer["results"]
    ):
        assert prediction["score"] == pytest.approx(uncertainty.expected_errors, abs=1e-6)
        expected = [
            (
                doc[s:e].start_char,
                doc[s:e].end_char,
                [nlp.get_pipe("dgm_ner").labels[label]],
                pytest.approx(p, abs=1e-6),
            )
            for (s, e, label), p in zip(uncertainty.mentions.tolist(), uncertainty.probabilities.tolist())
        ]
        found = [
            (r["value"]["start"], r["value"]["end"], r["value"]["labels"], r["score"]) for r in prediction["result"]
        ]
        assert found == expected and found
        for item in prediction["result"]:
            assert (item["from_name"], item["to_name"], item["type"]) == ("ner", "doc", "labels")
            assert text[item["value"]["start"] : item["value"]["end"]] == item["value"]["text"]


def test_a_task_with_a_region_gets_the_spans_inside_it_only(served):
    _, url = served
    (whole,) = predicted(url, TEXTS[1])["results"]
    (inside,) = predicted(url, TEXTS[1], region_chars=[11, 27])["results"]  # "visited New York"
    assert [r["value"]["text"] for r in whole["result"]] == ["John Smith", "New York"]
    assert [r["value"]["text"] for r in inside["result"]] == ["New York"] and inside["score"] == whole["score"]


def test_bad_requests_are_400_saying_what_to_fix(served):
    _, url = served
    status, answer = call(url, "/predict", {"tasks": [{"id": 5, "data": {"text": "Mary"}}], "label_config": CONFIG})
    assert status == 400 and "data.body" in answer["error"] and "['text']" in answer["error"]
    assert call(url, "/predict", raw=b"{not json")[0] == 400
    status, answer = call(url, "/predict", {"tasks": ["Mary"], "label_config": CONFIG})
    assert status == 400 and "'Mary'" in answer["error"]
    status, answer = call(url, "/predict", {"label_config": CONFIG})
    assert status == 400 and '"tasks"' in answer["error"]
    status, answer = call(url, "/train", {"annotations": []})
    assert status == 400 and "annotations" in answer["error"]


def test_an_annotation_retrains_the_model_and_changes_its_next_predictions(served):
    backend, url = served
    before = predicted(url, TEXTS[0])["results"][0]
    assert [(r["value"]["text"], r["value"]["labels"]) for r in before["result"]] == [
        ("Mary", ["PER"]),
        ("Paris", ["LOC"]),
    ]
    status, answer = call(url, "/webhook", annotation_event(1, TEXTS[0], ("Mary", "LOC")))
    assert status == 201 and answer["status"] == "training scheduled"
    assert backend.wait_for_training(300)
    health = call(url, "/health")[1]
    assert health["model_version"] == "spacy-depner-1" and health["last_error"] is None
    assert health["projects"]["default"]["model_version"] == "spacy-depner-1"
    after = predicted(url, TEXTS[0])
    assert after["model_version"] == "spacy-depner-1"
    assert [(r["value"]["text"], r["value"]["labels"]) for r in after["results"][0]["result"]] == [("Mary", ["LOC"])]


def test_a_failed_training_keeps_the_model_and_says_why(served):
    backend, url = served
    call(url, "/setup", {"project": "3.1700000000", "schema": CONFIG})
    call(url, "/webhook", {**annotation_event(1, TEXTS[0], ("Mary", "ORG")), "project": {"id": 3}})
    assert backend.wait_for_training(300)
    health = call(url, "/health")[1]
    assert health["model_version"] == "spacy-depner-0" and "ORG" in health["last_error"]
    assert "ORG" in health["projects"]["3"]["last_error"] and health["training"] is False
    assert predicted(url, TEXTS[0])["model_version"] == "spacy-depner-0"


def test_events_update_the_annotations_kept(served):
    backend, url = served
    backend.start_training = lambda key: None  # keep what is received, train nothing
    call(url, "/setup", {"project": "3.1700000000", "schema": CONFIG})
    call(url, "/webhook", annotation_event(1, TEXTS[0], ("Mary", "PER")))
    call(url, "/webhook", {**annotation_event(1, TEXTS[0], ("Paris", "LOC")), "action": "ANNOTATION_UPDATED"})
    call(url, "/webhook", annotation_event(2, TEXTS[1], ("New York", "LOC"), annotation_id=7))
    kept = backend.project(None).tasks
    assert [len(task["annotations"]) for task in kept.values()] == [1, 1]  # updated, not added
    assert kept[1]["annotations"][0]["result"][0]["value"]["text"] == "Paris"
    call(url, "/webhook", {"action": "ANNOTATIONS_DELETED", "annotations": [{"id": 7}]})
    assert kept[2]["annotations"] == []
    assert call(url, "/webhook", {"action": "PROJECT_UPDATED"})[1]["status"] == "ignored"
    status, answer = call(url, "/train", {"annotations": [{"id": 9, "data": {"body": "x"}, "annotations": []}]})
    assert status == 201 and "job" in answer and list(backend.project(None).tasks) == [9]


def test_annotated_tasks_read_as_import_annotations_reads_an_export(pipeline):
    """A region task: its region annotated, the tokens outside it missing; a task without one: all reviewed."""
    nlp = spacy.load(pipeline)
    text = TEXTS[1]
    exported = [
        {
            "id": 1,
            "data": {"body": text, "region_chars": [11, 27]},
            "annotations": [{"id": 1, "result": labels(text, ("New York", "LOC"))}],
        },
        {"id": 2, "data": {"body": TEXTS[0]}, "annotations": [{"id": 2, "result": labels(TEXTS[0], ("Mary", "PER"))}]},
    ]
    region, whole = annotated_docs(exported, nlp, None, "body")
    assert [(e.text, e.label_) for e in region.ents] == [("New York", "LOC")]
    assert [t.ent_iob_ for t in region] == ["", "", "O", "B", "I"]  # "John Smith" outside the region: missing
    assert [t.ent_iob_ for t in whole] == ["B", "O", "O", "O"]


def test_annotated_tasks_are_read_as_records_with_no_file_written(pipeline, monkeypatch):
    """Retraining reads the tasks it holds as they are (no temporary export); a task left out is named by its id."""
    nlp = spacy.load(pipeline)

    def no_file(*args, **kwargs):
        raise AssertionError("a temporary file was made")

    monkeypatch.setattr(tempfile, "mkdtemp", no_file)
    monkeypatch.setattr(tempfile, "mkstemp", no_file)
    overlapping = labels(TEXTS[0], ("Mary", "PER"), ("Mary lives", "LOC"))
    exported = [
        {"id": 3, "data": {"body": TEXTS[0]}, "annotations": [{"id": 1, "result": overlapping}]},
        {"id": 4, "data": {"body": TEXTS[1]}, "annotations": [{"id": 2, "result": labels(TEXTS[1], ("John", "PER"))}]},
    ]
    left_out = {}
    (doc,) = annotated_docs(exported, nlp, None, "body", left_out=left_out)
    assert [(e.text, e.label_) for e in doc.ents] == [("John", "PER")]
    assert list(left_out) == ["3"] and left_out["3"].startswith("task 1 (id 3): "), left_out


def test_a_port_in_use_is_a_clear_error(served):
    backend, url = served
    with pytest.raises(ValueError, match="choose another --port"):
        backend_server(WSGIApplication(backend), "127.0.0.1", int(url.rsplit(":", 1)[1]))


def test_region_tasks_need_a_component_that_leaves_the_rest_missing():
    span_group_only = SimpleNamespace(name="hypergraph_ner", writes_ents=False, settings={"annotated_key": None})
    region_task = {"id": 4, "data": {"body": TEXTS[0], "region_chars": [0, 10]}, "annotations": []}
    with pytest.raises(ValueError, match=r"Tasks \[4\] review a region only.*annotated_key"):
        check_regions([region_task], span_group_only)
    check_regions([{"id": 5, "data": {"body": TEXTS[0]}}], span_group_only)  # a whole text: fine
    check_regions([region_task], SimpleNamespace(name="nested_ner", writes_ents=False, settings={"annotated_key": "a"}))


def test_requests_and_training_run_on_the_ops_the_backend_was_made_with(pipeline, monkeypatch):
    """thinc's current ops belong to a thread: the server's threads take the backend's (e.g. --gpu-id's)."""

    class ChosenOps(NumpyOps):
        name = "chosen"

    seen = []
    monkeypatch.setattr(LabelStudioBackend, "health", lambda self: seen.append(get_current_ops().name) or {})

    def training(*args, **kwargs):
        seen.append(get_current_ops().name)
        raise ValueError("stopped after looking")

    monkeypatch.setattr(label_studio_backend, "retrained_pipeline", training)
    set_current_ops(ChosenOps())
    try:
        backend = LabelStudioBackend(str(pipeline))
    finally:
        set_current_ops(NumpyOps())
    server = backend_server(WSGIApplication(backend), "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        call(f"http://127.0.0.1:{server.server_port}", "/health")
        project = backend.project(None)
        project.tasks = {1: {"id": 1, "data": {"text": TEXTS[0]}, "annotations": [{"id": 1, "result": []}]}}
        backend.start_training("default")
        assert backend.wait_for_training(60)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["chosen", "chosen"] and "stopped after looking" in project.last_error
