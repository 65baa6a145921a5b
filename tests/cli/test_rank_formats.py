"""``rank --format prodigy|label-studio|doccano``: the same ranked tasks in
each tool's import format (Prodigy's task format, Label Studio's tasks with
predictions, doccano's sequence-labelling JSONL), regions as character
offsets of the task's own text; ``--text-key``, ``--code`` and ``--gpu-id``
as ``apply`` has them; one summary schema whatever ``--unit``; nothing on
stderr but the error when a run is refused."""

import json

import pytest
import spacy
from test_rank import cli, lines


def ranked(pipeline, corpus, path, *options):
    done = cli(pipeline, corpus, path, "--no-progress", *options)
    assert done.exit_code == 0, done.output
    return lines(path), json.loads(done.stdout)


def region_text(record):
    """The text of a record's token region, from its tokens."""
    first, end = record["region"]
    tokens = record["tokens"]
    return record["text"][tokens[first]["start"] : tokens[end - 1]["end"]]


def test_prodigy_span_tasks_are_binary_ner_tasks_with_hashes(pipeline, corpus, tmp_path):
    records, _ = ranked(pipeline, corpus, tmp_path / "records.jsonl", "--unit", "span")
    tasks, summary = ranked(pipeline, corpus, tmp_path / "prodigy.jsonl", "--unit", "span", "--format", "prodigy")
    assert len(tasks) == len(records) == summary["tasks_written"] > 1
    for task, record in zip(tasks, records):
        assert task["_view_id"] == "ner" and len(task["spans"]) == 1
        assert task["spans"] == record["spans"] and task["score"] == record["score"]
        assert 0.05 <= task["spans"][0]["score"] <= 0.95
        assert all(
            isinstance(task[key], int) and -(2**31) <= task[key] < 2**31 for key in ("_input_hash", "_task_hash")
        )
    by_text = {}
    for task in tasks:
        by_text.setdefault(task["text"], set()).add(task["_input_hash"])
    assert all(len(hashes) == 1 for hashes in by_text.values())  # one input, one hash: Prodigy groups by it
    assert len({t["_input_hash"] for t in tasks}) == len(by_text)
    questions = {(t["text"], t["spans"][0]["start"], t["spans"][0]["end"], t["spans"][0]["label"]) for t in tasks}
    assert len({t["_task_hash"] for t in tasks}) == len(questions)  # one question, one hash (repeated texts share it)


def test_region_tasks_carry_their_region_in_characters_in_every_format(pipeline, corpus, tmp_path):
    records, _ = ranked(pipeline, corpus, tmp_path / "records.jsonl", "--unit", "region")
    assert records
    for record in records:
        start, end = record["region_chars"]
        assert record["text"][start:end] == region_text(record) and record["meta"]["region_chars"] == [start, end]
    prodigy, _ = ranked(pipeline, corpus, tmp_path / "prodigy.jsonl", "--unit", "region", "--format", "prodigy")
    doccano, _ = ranked(pipeline, corpus, tmp_path / "doccano.jsonl", "--unit", "region", "--format", "doccano")
    studio, _ = ranked(pipeline, corpus, tmp_path / "studio.jsonl", "--unit", "region", "--format", "label-studio")
    for record, p, d, s in zip(records, prodigy, doccano, studio):
        assert p["_view_id"] == "ner_manual" and p["region_chars"] == record["region_chars"]
        assert p["meta"]["region_chars"] == record["region_chars"]
        assert d["text"] == record["text"] and d["region_chars"] == d["meta"]["region_chars"] == record["region_chars"]
        assert s["data"]["text"] == record["text"] and s["data"]["region_chars"] == record["region_chars"]
        assert s["data"]["region"] == record["region"]


def test_label_studio_tasks_hold_one_prediction_with_exact_span_probabilities(pipeline, corpus, tmp_path):
    records, _ = ranked(pipeline, corpus, tmp_path / "records.jsonl")
    tasks, summary = ranked(pipeline, corpus, tmp_path / "studio.jsonl", "--format", "label-studio")
    assert len(tasks) == summary["tasks_written"] == len(records)
    for task, record in zip(tasks, records):
        (prediction,) = task["predictions"]
        assert prediction["score"] == record["score"]  # the rank measure: Label Studio sorts by it
        assert task["data"]["meta"] == record["meta"]
        found = [
            (r["value"]["start"], r["value"]["end"], r["value"]["labels"], r["score"]) for r in prediction["result"]
        ]
        assert found == [(s["start"], s["end"], [s["label"]], s["score"]) for s in record["spans"]]
        for item in prediction["result"]:
            assert item["type"] == "labels" and (item["from_name"], item["to_name"]) == ("label", "text")
            assert task["data"]["text"][item["value"]["start"] : item["value"]["end"]] == item["value"]["text"]
        assert len({item["id"] for item in prediction["result"]}) == len(prediction["result"])


def test_label_studio_output_as_json_is_one_list_label_studio_imports(pipeline, corpus, tmp_path):
    lines_, _ = ranked(pipeline, corpus, tmp_path / "studio.jsonl", "--format", "label-studio", "--top", 5)
    done = cli(pipeline, corpus, tmp_path / "studio.json", "--format", "label-studio", "--top", 5, "--no-progress")
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "studio.json").read_text(encoding="utf8")) == lines_
    refused = cli(pipeline, corpus, tmp_path / "records.json", "--no-progress")
    assert isinstance(refused.exception, ValueError) and ".jsonl" in str(refused.exception)
    again = cli(pipeline, corpus, tmp_path / "studio.json", "--format", "label-studio", "--no-progress")
    assert isinstance(again.exception, ValueError) and "--force" in str(again.exception)


def test_doccano_lines_are_text_and_label_triples(pipeline, corpus, tmp_path):
    records, _ = ranked(pipeline, corpus, tmp_path / "records.jsonl")
    tasks, _ = ranked(pipeline, corpus, tmp_path / "doccano.jsonl", "--format", "doccano")
    assert any(task["label"] for task in tasks)
    for task, record in zip(tasks, records):
        assert task["label"] == [[s["start"], s["end"], s["label"]] for s in record["spans"]]
        assert all(task["text"][start:end] == s["text"] for (start, end, _), s in zip(task["label"], record["spans"]))


@pytest.mark.parametrize("format", ["label-studio", "doccano"])
def test_tools_without_binary_tasks_refuse_span_units_before_anything_runs(pipeline, corpus, tmp_path, format):
    done = cli(pipeline, corpus, tmp_path / "out.jsonl", "--unit", "span", "--format", format)
    assert isinstance(done.exception, ValueError) and "--format prodigy" in str(done.exception)
    assert done.output == "" and not list(tmp_path.glob("out.jsonl*"))
    done = cli(pipeline, corpus, tmp_path / "out.jsonl", "--format", "brat")
    assert isinstance(done.exception, ValueError) and "label-studio" in str(done.exception)


def test_one_summary_schema_whatever_the_unit(pipeline, corpus, tmp_path):
    keys = {
        unit: set(ranked(pipeline, corpus, tmp_path / f"{unit}.jsonl", "--unit", unit)[1])
        for unit in ("doc", "span", "region")
    }
    assert keys["doc"] == keys["span"] == keys["region"]
    assert {"docs", "tasks_written", "docs_kept", "words"} <= keys["doc"] and "docs_written" not in keys["doc"]


def test_text_key_names_the_text_of_a_jsonl_input(pipeline, corpus, tmp_path):
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text(
        "".join(
            json.dumps({("body" if key == "text" else key): value for key, value in json.loads(line).items()}) + "\n"
            for line in corpus.read_text(encoding="utf8").splitlines()
            if line.strip()
        ),
        encoding="utf8",
    )
    expected, _ = ranked(pipeline, corpus, tmp_path / "by_text.jsonl")
    found, _ = ranked(pipeline, renamed, tmp_path / "by_body.jsonl", "--text-key", "body", "-F")
    assert [(t["text"], t["score"], t["spans"]) for t in found] == [
        (t["text"], t["score"], t["spans"]) for t in expected
    ]
    refused = cli(pipeline, renamed, tmp_path / "refused.jsonl")
    assert isinstance(refused.exception, ValueError) and "--text-key" in str(refused.exception)


def test_a_refused_input_shows_no_progress_before_its_error(pipeline, corpus, tmp_path):
    """A bad line after the first shard: the error comes before the bar (progress on, as by default)."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text(corpus.read_text(encoding="utf8") + '{"id": 99, "txt": "no text key"}\n', encoding="utf8")
    done = cli(pipeline, bad, tmp_path / "out.jsonl", "--shard-size", 5)
    assert isinstance(done.exception, ValueError) and "bad.jsonl:" in str(done.exception)
    assert done.output == "", done.output  # no bar, no fragment of one
    assert not list(tmp_path.glob("out.jsonl*"))


def test_code_and_gpu_id_as_apply_has_them(pipeline, corpus, tmp_path):
    marker = tmp_path / "imported.txt"
    code = tmp_path / "functions.py"
    code.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('yes')\n", encoding="utf8")
    ranked(pipeline, corpus, tmp_path / "out.jsonl", "--code", code, "--gpu-id", -1)
    assert marker.read_text() == "yes"
    done = cli(pipeline, corpus, tmp_path / "missing.jsonl", "-c", tmp_path / "nowhere.py")
    assert isinstance(done.exception, ValueError) and "nowhere.py" in str(done.exception)
    done = cli(pipeline, corpus, tmp_path / "gpu.jsonl", "-g", 0, "-n", 2)
    assert isinstance(done.exception, ValueError) and "--n-process 1" in str(done.exception)


def accepted_exports(format, tasks):
    """``tasks`` as the tool exports them once a person kept every pre-annotation, without the token
    ``region`` (only ``region_chars`` says what was reviewed)."""
    if format == "prodigy":
        return "\n".join(json.dumps({**without_region(t), "answer": "accept"}) for t in tasks) + "\n"
    if format == "doccano":
        return "\n".join(json.dumps({"id": n, **t}) for n, t in enumerate(tasks, 1)) + "\n"
    return json.dumps(
        [
            {
                "id": n,
                "data": without_region(t["data"]),
                "annotations": [{"id": n, "result": t["predictions"][0]["result"]}],
            }
            for n, t in enumerate(tasks, 1)
        ]
    )


def without_region(record):
    return {key: value for key, value in record.items() if key != "region"}


@pytest.mark.parametrize("format", ["prodigy", "label-studio", "doccano"])
def test_region_tasks_come_back_reviewed_by_characters(pipeline, corpus, tmp_path, format):
    """Each tool's region tasks, accepted as pre-annotated and imported: the tokens inside region_chars
    are reviewed (the pre-annotations their entities, the rest O), every other token missing."""
    from spacy_depner.readers.annotation_tools import read_annotations

    records, _ = ranked(pipeline, corpus, tmp_path / "records.jsonl", "--unit", "region")
    tasks, _ = ranked(pipeline, corpus, tmp_path / "tasks.jsonl", "--unit", "region", "--format", format)
    kept = [(r, t) for r, t in zip(records, tasks) if r["spans"]]  # doccano reads a record without spans as unlabelled
    assert kept
    path = tmp_path / ("export.json" if format == "label-studio" else "export.jsonl")
    path.write_text(accepted_exports(format, [t for _, t in kept]), encoding="utf8")
    docs = {doc.text: doc for doc in read_annotations(format, path, spacy.load(pipeline))}
    by_text = {}  # the tasks on one text make one Doc: the union of their regions and entities
    for record, _ in kept:
        by_text.setdefault(record["text"], []).append(record)
    assert set(docs) == set(by_text)
    outside = 0
    for text, group in by_text.items():
        doc = docs[text]
        inside = [
            any(r["region_chars"][0] <= t.idx and t.idx + len(t) <= r["region_chars"][1] for r in group) for t in doc
        ]
        assert [t.ent_iob_ != "" for t in doc] == inside
        outside += inside.count(False)
        assert {(e.start_char, e.end_char, e.label_) for e in doc.ents} == {
            (s["start"], s["end"], s["label"]) for r in group for s in r["spans"]
        }
    assert outside > 0  # some tokens lie outside every region: the test can tell
