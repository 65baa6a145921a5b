"""The annotation loop through a real Label Studio server on localhost: rank's
region tasks go in as tasks with their pre-annotations and scores, a person's
annotations are submitted through the API, the project's JSON export comes
back through ``import-annotations``' reader, and a component trains on it.
The server runs as ``tests/label_studio_server.py`` starts it (its own
cached virtual environment)."""

import json

import pytest
import spacy
from label_studio_server import labels, server  # noqa: F401 (the fixture)
from spacy.training import Example

from spacy_depner.readers.annotation_tools import read_annotations
from spacy_depner.readers.label_studio_format import label_studio_task

pytestmark = pytest.mark.slow

LABEL_CONFIG = (
    '<View><Labels name="label" toName="text"><Label value="PER"/><Label value="LOC"/></Labels>'
    '<Text name="text" value="$text"/></View>'
)


def rank_records():
    """Two region tasks as ``rank --unit region`` writes them (whitespace tokens)."""
    return [
        {
            "text": "Mary lives in Paris",
            "tokens": [],
            "spans": [
                {"start": 0, "end": 4, "token_start": 0, "token_end": 0, "label": "LOC", "text": "Mary", "score": 0.55}
            ],
            "region": [0, 2],
            "region_chars": [0, 10],
            "score": 0.45,
            "meta": {"id": 7, "unit": "region", "token_offset": 0},
        },
        {
            "text": "John Smith visited New York",
            "tokens": [],
            "spans": [],
            "region": [2, 5],
            "region_chars": [11, 27],
            "score": 0.3,
            "meta": {"id": 8, "unit": "region", "token_offset": 0},
        },
    ]


def test_tasks_go_through_label_studio_and_come_back_to_train_on(server, tmp_path):
    project = server.call("POST", "/api/projects", {"title": "spacy-depner loop", "label_config": LABEL_CONFIG})
    records = rank_records()
    imported = server.call("POST", f"/api/projects/{project['id']}/import", [label_studio_task(r) for r in records])
    assert imported["task_count"] == 2 and imported["prediction_count"] == 2
    listed = server.call("GET", f"/api/tasks?project={project['id']}")
    tasks = {task["data"]["text"]: task for task in (listed["tasks"] if isinstance(listed, dict) else listed)}
    # the person corrects the pre-annotation (Mary is PER) in the first region, marks New York in the second
    first, second = (tasks[r["text"]] for r in records)
    server.call(
        "POST", f"/api/tasks/{first['id']}/annotations", {"result": labels(first["data"]["text"], ("Mary", "PER"))}
    )
    server.call(
        "POST",
        f"/api/tasks/{second['id']}/annotations",
        {"result": labels(second["data"]["text"], ("New York", "LOC"))},
    )
    exported = server.call("GET", f"/api/projects/{project['id']}/export?exportType=JSON")
    path = tmp_path / "export.json"
    path.write_text(json.dumps(exported), encoding="utf8")
    by_text = {doc.text: doc for doc in read_annotations("label-studio", path)}
    mary, john = by_text["Mary lives in Paris"], by_text["John Smith visited New York"]
    assert [(e.text, e.label_) for e in mary.ents] == [("Mary", "PER")]
    assert [t.ent_iob_ for t in mary] == ["B", "O", "", ""]  # region 0..2 reviewed, "in Paris" missing
    assert [(e.text, e.label_) for e in john.ents] == [("New York", "LOC")]
    assert [t.ent_iob_ for t in john] == ["", "", "O", "B", "I"]  # "John Smith" outside the region: missing
    predictions = {task["data"]["text"]: task["annotations"][0]["prediction"] for task in exported}
    assert predictions["Mary lives in Paris"]["score"] == pytest.approx(0.45)  # the task's rank score went in

    nlp = spacy.blank("en")
    ner = nlp.add_pipe("chain_ner")
    examples = [Example(nlp.make_doc(doc.text), doc) for doc in (mary, john)] * 4
    optimizer = nlp.initialize(lambda: examples)
    losses = [nlp.update(examples, sgd=optimizer, losses={})["chain_ner"] for _ in range(15)]
    assert losses[-1] < losses[0] / 3
    assert set(ner.labels) == {"LOC", "PER"}
