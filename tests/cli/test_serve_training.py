"""``serve``'s trainings survive what a team sends over weeks: an annotation
the import cannot use (a partial word, overlapping spans) is skipped and
counted in ``/health`` instead of failing every later training; ``--output``
is checked at start and written atomically; a training that fails (e.g. its
output cannot be written) is reported in ``/health`` and the log, and the
next event trains again."""

import re
import threading

import pytest
import spacy
import typer
from spacy.language import Language
from test_serve import CONFIG, annotation_event, call

from spacy_depner.cli.errors import run
from spacy_depner.cli.serve import serve
from spacy_depner.readers.annotation_tasks import ImportOptions
from spacy_depner.readers.annotation_tools import ImportCounts, read_annotations
from spacy_depner.serving.label_studio_backend import LabelStudioBackend
from spacy_depner.serving.retraining import annotated_docs
from spacy_depner.serving.standard_server import backend_server
from spacy_depner.serving.wsgi import WSGIApplication

ANNA = "Anna lives in Paris"
MARY = "Mary lives in Paris"


def serving(backend):
    server = backend_server(WSGIApplication(backend), "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


@pytest.fixture
def served(pipeline, tmp_path):
    backend = LabelStudioBackend(str(pipeline), epochs=2, output=tmp_path / "served")
    server, url = serving(backend)
    call(url, "/setup", {"project": "7.1700000000", "schema": CONFIG})
    yield backend, url
    server.shutdown()
    server.server_close()


def event(task_id, text, *spans, **data):
    return {**annotation_event(task_id, text, *spans, **data), "project": {"id": 7}}


def partial_word(task_id):
    """An annotation of ``Ann`` inside ``Anna``: off token boundaries."""
    found = event(task_id, ANNA, ("Anna", "PER"))
    found["annotation"]["result"][0]["value"].update(end=3, text="Ann")
    return found


def serve_options():
    command = typer.Typer()
    command.command("serve")(serve)
    command.command("other")(lambda: None)
    params = typer.main.get_command(command).commands["serve"].params
    return {name for param in params if param.param_type_name == "option" for name in param.opts + param.secondary_opts}


def test_a_partial_word_is_skipped_and_counted_and_later_events_still_train(served):
    backend, url = served
    assert call(url, "/webhook", partial_word(1))[0] == 201
    assert call(url, "/webhook", event(2, MARY, ("Mary", "LOC")))[0] == 201
    assert backend.wait_for_training(300)
    project = call(url, "/health")[1]["projects"]["7"]
    assert project["last_error"] is None and project["trainings"] >= 1, project
    assert sum(n for reason, n in project["skipped"].items() if reason.startswith("misaligned span")) == 1, project
    trainings = project["trainings"]
    assert call(url, "/webhook", event(3, "Paris loves Mary", ("Paris", "LOC")))[0] == 201
    assert backend.wait_for_training(300)
    assert call(url, "/health")[1]["projects"]["7"]["trainings"] == trainings + 1


def test_overlapping_spans_leave_their_task_out_counted(served):
    backend, url = served
    overlapping = event(1, MARY, ("Mary", "PER"), ("Mary lives", "LOC"))
    call(url, "/webhook", overlapping)
    call(url, "/webhook", event(2, "Paris loves Mary", ("Paris", "LOC")))
    assert backend.wait_for_training(300)
    project = call(url, "/health")[1]["projects"]["7"]
    assert project["last_error"] is None and project["trainings"] >= 1
    assert project["skipped"].get("task left out: its annotation cannot be read") == 1, project
    assert "1" in project["left_out"] and "overlap" in project["left_out"]["1"]


def test_what_health_advises_are_options_serve_has(served):
    """The skip reasons and errors (``left_out`` quotes the import's own error for each task left out)."""
    backend, url = served
    call(url, "/webhook", partial_word(1))
    call(url, "/webhook", event(2, MARY, ("Mary", "PER"), ("Mary lives", "LOC")))
    assert backend.wait_for_training(300)
    health = call(url, "/health")[1]
    shown = [
        health["last_error"],
        health["skipped"],
        [(p["skipped"], p["last_error"], p["left_out"]) for p in health["projects"].values()],
    ]
    advised = set(re.findall(r"--[a-z][a-z-]+", str(shown)))
    assert advised and advised <= serve_options(), advised - serve_options()
    assert "--component" in health["projects"]["7"]["left_out"]["2"]  # serve's fix for overlapping spans


def test_a_task_left_out_is_told_the_fix_serve_has(pipeline):
    """Each importer error whose fix names import-annotations' options, as serve's left_out says it:
    serve's options or what to change in the Label Studio project, never an option serve lacks."""
    nlp = spacy.load(pipeline)
    emoji = "😀 Bob met Mary"  # Bob at UTF-16 code units 3..6, characters 2..5

    def task(task_id, text, *results, key="body"):
        return {"id": task_id, "data": {key: text}, "annotations": [{"id": task_id, "result": list(results)}]}

    def span(text, start, end, label="PER"):
        value = {"start": start, "end": end, "text": text[start:end], "labels": [label]}
        return {"from_name": "ner", "to_name": "doc", "type": "labels", "value": value}

    tasks = [
        task(1, MARY, span(MARY, 0, 4), span(MARY, 0, 10, "LOC")),  # overlapping: flat ents cannot hold both
        task(2, ANNA, span(ANNA, 0, 3)),  # "Ann" in "Anna"
        task(3, emoji, span(emoji, 3, 6) | {"value": {"start": 3, "end": 6, "labels": ["PER"]}}),  # UTF-16 units
        task(4, MARY, key="text"),  # the text under another key
        task(5, "Paris loves Mary", span("Paris loves Mary", 0, 5, "LOC")),
    ]
    tasks[4]["annotations"].insert(0, {"id": 9, "result": []})  # two annotations: serve reads the last
    left_out, counts = {}, ImportCounts()
    options = ImportOptions(skip_misaligned=False)
    docs = annotated_docs(tasks, nlp, None, "body", options=options, counts=counts, left_out=left_out)
    assert [doc.text for doc in docs] == ["Paris loves Mary"] and sorted(left_out) == ["1", "2", "3", "4"]
    assert counts.skipped["annotation not kept (serve reads the last annotation of a task)"] == 1, counts.skipped
    advised = set(re.findall(r"--[a-z][a-z-]+", str([left_out, counts.skipped])))
    assert advised <= serve_options(), (advised - serve_options(), left_out)
    assert "--component" in left_out["1"] and "--mode" not in left_out["1"]
    assert "--alignment-mode" in left_out["2"] and "Label Studio" in left_out["2"] and "--model" not in left_out["2"]
    assert "--offsets utf-16" in left_out["3"]
    assert "labeling config's Text object" in left_out["4"] and "--text-key" not in left_out["4"]
    with pytest.raises(ValueError, match="overlap, and doc.ents holds no overlapping entities: import with --mode"):
        read_annotations("label-studio", tasks[:1], nlp, options=ImportOptions(text_key="body"))


def test_serve_takes_the_importers_alignment_options():
    assert {"--alignment-mode", "--skip-misaligned", "--offsets"} <= serve_options()


def test_contract_alignment_trains_on_the_whole_tokens_inside(pipeline):
    backend = LabelStudioBackend(str(pipeline), epochs=2, alignment_mode="expand", skip_misaligned=False)
    backend.setup({"project": "7", "schema": CONFIG})
    backend.webhook(partial_word(1))
    assert backend.wait_for_training(300)
    project = backend.project("7")
    assert project.trainings == 1 and project.last_error is None and not project.skipped


def test_an_output_in_a_missing_folder_is_refused_at_start(pipeline, tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "served"
    with pytest.raises(ValueError, match=r"does not exist.*--output"):
        LabelStudioBackend(str(pipeline), output=missing)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        LabelStudioBackend(str(pipeline), output=tmp_path / "file")
    command = typer.Typer()
    command.command("serve")(serve)
    command.command("other")(lambda: None)
    assert run(command, ["serve", str(pipeline), "--output", str(missing), "--port", "0"], "serve") == 1
    assert "does not exist" in capsys.readouterr().err


def test_a_failed_training_is_reported_and_the_next_event_trains_again(served, tmp_path):
    backend, url = served
    output = tmp_path / "served"
    output.rmdir()
    output.write_text("in the way")  # the trained pipeline cannot be written
    call(url, "/webhook", event(1, MARY, ("Mary", "LOC")))
    assert backend.wait_for_training(60), "the training thread died"
    health = call(url, "/health")[1]
    assert health["training"] is False and health["projects"]["7"]["last_error"], health
    assert str(output) in health["projects"]["7"]["last_error"]
    output.unlink()
    call(url, "/webhook", event(2, "Paris loves Mary", ("Paris", "LOC")))
    assert backend.wait_for_training(300)
    project = call(url, "/health")[1]["projects"]["7"]
    assert project["last_error"] is None and (output / "7" / "model-last" / "meta.json").exists(), project


def test_output_is_replaced_whole_or_not_at_all(served, tmp_path, monkeypatch):
    backend, url = served
    call(url, "/webhook", event(1, MARY, ("Mary", "LOC")))
    assert backend.wait_for_training(300)
    saved = tmp_path / "served" / "7" / "model-last"
    before = sorted(path.relative_to(saved) for path in saved.rglob("*"))
    assert before

    def torn(self, path, **kwargs):
        path.mkdir(parents=True, exist_ok=True)
        (path / "half-written").write_text("x")
        raise OSError("disk full")

    monkeypatch.setattr(Language, "to_disk", torn)
    call(url, "/webhook", event(2, "Paris loves Mary", ("Paris", "LOC")))
    assert backend.wait_for_training(300)
    assert "disk full" in backend.project("7").last_error
    assert sorted(path.relative_to(saved) for path in saved.rglob("*")) == before
    assert sorted(p.name for p in (tmp_path / "served").iterdir()) == ["7"]
