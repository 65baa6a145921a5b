"""The annotation loop through a real Label Studio server on localhost: rank's
region tasks go in as tasks with their pre-annotations and scores, a person's
annotations are submitted through the API, the project's JSON export comes
back through ``import-annotations``' reader, and a component trains on it.

Label Studio pins its own Django stack, so it runs from a virtual environment
of its own, made once in ``~/.cache/spacy-depner/label-studio-<version>``
(``pip install label-studio==<version>``, about two minutes) and reused. The
test is skipped, saying why, only when that environment cannot be installed
(no package index reachable); a server that does not come up, or an API
that answers otherwise, fails it."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import spacy
from spacy.training import Example

from spacy_depner.inference.tool_tasks import label_studio_task
from spacy_depner.readers.annotation_tools import read_annotations

pytestmark = pytest.mark.slow

VERSION = "1.23.2"
TOKEN = "0123456789abcdef0123456789abcdef01234567"
LABEL_CONFIG = (
    '<View><Labels name="label" toName="text"><Label value="PER"/><Label value="LOC"/></Labels>'
    '<Text name="text" value="$text"/></View>'
)


def label_studio() -> Path:
    """The ``label-studio`` command of the cached environment, installed if need be."""
    venv = Path.home() / ".cache" / "spacy-depner" / f"label-studio-{VERSION}"
    command = venv / "bin" / "label-studio"
    if command.is_file():
        return command
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", f"label-studio=={VERSION}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"label-studio=={VERSION} could not be installed (no package index?): {done.stderr[-500:]}")
    return command


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, url: str):
        self.url = url

    def call(self, method: str, path: str, body=None):
        request = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode("utf8"),
            method=method,
            headers={"Authorization": f"Token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read().decode("utf8"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    command = label_studio()
    data = tmp_path_factory.mktemp("label_studio")
    port = free_port()
    log = open(data / "server.log", "w")
    process = subprocess.Popen(
        [
            str(command),
            "start",
            "--no-browser",
            "--port",
            str(port),
            "--data-dir",
            str(data / "data"),
            "--username",
            "annotator@example.com",
            "--password",
            "not-a-secret-1",
            "--user-token",
            TOKEN,
            "--enable-legacy-api-token",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=data,
        env={**os.environ, "LABEL_STUDIO_BASE_DATA_DIR": str(data / "data")},
    )
    url = f"http://localhost:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(url + "/health", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if process.poll() is not None:
                pytest.fail(f"label-studio exited: {(data / 'server.log').read_text()[-2000:]}")
            time.sleep(1)
        else:
            pytest.fail(f"label-studio did not answer in 240 s: {(data / 'server.log').read_text()[-2000:]}")
        yield Server(url)
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


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
            "score": 0.45,
            "meta": {"id": 7, "unit": "region", "token_offset": 0},
        },
        {
            "text": "John Smith visited New York",
            "tokens": [],
            "spans": [],
            "region": [2, 5],
            "score": 0.3,
            "meta": {"id": 8, "unit": "region", "token_offset": 0},
        },
    ]


def labels(text, *spans):
    return [
        {
            "from_name": "label",
            "to_name": "text",
            "type": "labels",
            "value": {"start": text.index(word), "end": text.index(word) + len(word), "text": word, "labels": [label]},
        }
        for word, label in spans
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
