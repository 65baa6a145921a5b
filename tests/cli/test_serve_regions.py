"""Predicted regions hold no edge whitespace and are never only whitespace,
in ``rank``'s tasks (every unit and tool format) and ``serve``'s
predictions: the tiny pipeline labels double spaces, newlines and the space
before a word on these texts, and a person who accepts every pre-annotation
unchanged gets back, through ``import-annotations``, exactly the entities
predicted."""

import json

import spacy
from spacy.tokens import DocBin
from test_import_annotations import import_annotations
from test_rank import cli, lines
from test_serve import call, served  # noqa: F401 (the fixture)

WHITESPACE_TEXTS = [
    "Mary  lives in  Paris",
    "John Smith 😀  visited New York \n",
    "Lee Ann  Womack won\n\nSingle of the Year award",
    "  Mary Smith  ",
    "Paris  loves  Mary  Smith 😀 😀",
]


def whitespace_corpus(path):
    path.write_text("".join(json.dumps({"text": text}) + "\n" for text in WHITESPACE_TEXTS), encoding="utf8")
    return path


def trimmed(text: str) -> bool:
    return bool(text) and text == text.strip()


def test_the_pipeline_labels_whitespace_on_these_texts(nlp):
    """What the other tests rely on: without trimming, the predictions would hold whitespace."""
    from spacy_depner.pipeline.uncertainty import doc_uncertainties

    docs = list(nlp.pipe(WHITESPACE_TEXTS))
    found = [
        doc[start:end].text
        for doc, uncertainty in zip(docs, doc_uncertainties(nlp.get_pipe("dgm_ner"), docs))
        for start, end, _ in uncertainty.mentions.tolist()
    ]
    assert any(not text.strip() for text in found) and any(text.strip() and not trimmed(text) for text in found)


def test_ranked_spans_and_regions_never_hold_edge_whitespace(pipeline, tmp_path):
    corpus = whitespace_corpus(tmp_path / "corpus.jsonl")
    for unit in ("doc", "span", "region"):
        output = tmp_path / f"{unit}.jsonl"
        done = cli(pipeline, corpus, output, "--unit", unit, "--no-progress")
        assert done.exit_code == 0, done.output
        records = lines(output)
        assert records and any(record["spans"] for record in records), unit
        for record in records:
            for span in record["spans"]:
                assert trimmed(span["text"]) and record["text"][span["start"] : span["end"]] == span["text"], span
                assert record["tokens"][span["token_start"]]["start"] == span["start"]
                assert record["tokens"][span["token_end"]]["end"] == span["end"]
            if "region_chars" in record:
                start, end = record["region_chars"]
                assert trimmed(record["text"][start:end]), (unit, record["region_chars"], record["text"])


def test_accepting_every_label_studio_pre_annotation_imports_exactly_the_predicted_entities(pipeline, tmp_path, capsys):
    corpus = whitespace_corpus(tmp_path / "corpus.jsonl")
    ranked = tmp_path / "tasks.json"
    done = cli(pipeline, corpus, ranked, "--unit", "region", "--format", "label-studio", "--no-progress")
    assert done.exit_code == 0, done.output
    tasks = json.loads(ranked.read_text(encoding="utf8"))
    export = [
        {**task, "id": number, "annotations": [{"id": number, "result": task["predictions"][0]["result"]}]}
        for number, task in enumerate(tasks, 1)
    ]
    predicted = {
        (task["data"]["text"], r["value"]["start"], r["value"]["end"], r["value"]["labels"][0])
        for task in tasks
        for r in task["predictions"][0]["result"]
    }
    assert len(predicted) >= 5
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export, ensure_ascii=False), encoding="utf8")
    summary = import_annotations(capsys, "label-studio", path, tmp_path / "imported.spacy")
    assert summary["skipped"] == {}
    docs = list(DocBin().from_disk(tmp_path / "imported.spacy").get_docs(spacy.blank("en").vocab))
    imported = {(doc.text, e.start_char, e.end_char, e.label_) for doc in docs for e in doc.ents}
    assert imported == predicted


def test_served_predictions_hold_no_whitespace_region(served):
    _, url = served
    tasks = [{"id": number, "data": {"text": text}} for number, text in enumerate(WHITESPACE_TEXTS, 1)]
    status, answer = call(url, "/predict", {"tasks": tasks})
    assert status == 200, answer
    regions = [item["value"] for prediction in answer["results"] for item in prediction["result"]]
    assert len(regions) >= 5
    for task, prediction in zip(tasks, answer["results"]):
        for item in prediction["result"]:
            value = item["value"]
            assert trimmed(value["text"]) and task["data"]["text"][value["start"] : value["end"]] == value["text"]


def test_a_served_prediction_keeps_to_the_region_the_importer_reads(served):
    """The region as tokens (``region``) or in ``data.meta`` limits the prediction as it limits the import."""
    _, url = served
    text = "John Smith visited New York"  # John0 Smith1 visited2 New3 York4
    shown = {}
    for name, data in {
        "whole": {},
        "tokens": {"region": [2, 5]},
        "meta": {"meta": {"region_chars": [11, 27]}},
        "characters": {"region_chars": [11, 27], "region": [0, 1]},  # region_chars decides
    }.items():
        status, answer = call(url, "/predict", {"tasks": [{"id": 1, "data": {"text": text, **data}}]})
        assert status == 200, (name, answer)
        shown[name] = [item["value"]["text"] for item in answer["results"][0]["result"]]
    assert shown["whole"] == ["John Smith", "New York"]
    assert shown["tokens"] == shown["meta"] == shown["characters"] == ["New York"]


def test_a_region_the_importer_would_refuse_is_a_400_naming_the_task(served):
    _, url = served
    text = "John Smith visited New York"
    for region, cause in (([10, 11], "only whitespace"), ([11, 99], "outside the text"), ([5, 3], "start < end")):
        tasks = [{"id": 1, "data": {"text": text}}, {"id": 8, "data": {"text": text, "region_chars": region}}]
        status, answer = call(url, "/predict", {"tasks": tasks})
        assert status == 400 and answer["error"].startswith("tasks[1] (id 8): region_chars"), answer
        assert cause in answer["error"], answer
