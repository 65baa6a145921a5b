"""``rank --unit span|region``: tasks that ask a person to review one proposed
mention, or one stretch of uncertain tokens, in the sentences that hold it."""

import json

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from test_rank import cli, lines

from spacy_depner.inference.review_tasks import context_of, doc_tasks, review_regions, task_record
from spacy_depner.pipeline.uncertainty import DocUncertainty

LABELS = ["LOC", "PER"]


def two_sentences():
    words = "Mary lives in Paris . John Smith visited New York .".split()
    starts = [True] + [False] * 4 + [True] + [False] * 5
    return Doc(spacy.blank("en").vocab, words=words, sent_starts=starts)


def test_regions_are_the_stretches_of_overlapping_proposals_that_hold_a_doubtful_one():
    proposals = np.array([[0, 2, 0], [1, 3, 1], [5, 6, 0], [8, 9, 0], [9, 10, 1], [3, 4, 0]])
    doubtful = np.array([False, True, True, False, False, False])
    # 0-2 and 1-3 overlap, 3-4 touches them: one stretch 0..4; 5-6 alone; 8-10 holds no doubtful proposal
    assert review_regions(proposals, doubtful) == [(0, 4), (5, 6)]
    assert review_regions(np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=bool)) == []


def test_a_task_is_its_sentences_with_offsets_relative_to_them():
    doc = two_sentences()
    context = context_of(doc, 6, 8)
    assert (context.start, context.end) == (5, 11)
    record = task_record(context, [(5, 7, 1)], [0.625], LABELS, 0.375, {"id": 3}, region=(6, 9))
    assert record["text"] == "John Smith visited New York ."
    assert record["spans"] == [
        {"start": 0, "end": 10, "token_start": 0, "token_end": 1, "label": "PER", "text": "John Smith", "score": 0.625}
    ]
    assert record["region"] == [1, 4]  # "Smith visited New", relative to the context
    assert [t["id"] for t in record["tokens"]] == list(range(6))
    assert record["tokens"][-1]["ws"] is False and record["tokens"][0]["ws"] is True
    start, end = record["region_chars"]
    assert record["text"][start:end] == "Smith visited New"  # the same stretch, in characters of the task's text
    assert record["meta"] == {"id": 3, "token_offset": 5, "region_chars": [start, end]}
    no_sentences = Doc(doc.vocab, words=["a", "b"])
    assert context_of(no_sentences, 1, 2).start == 0 and context_of(no_sentences, 1, 2).end == 2


def uncertainty():
    """Predicted: Mary PER (0.97), New York LOC (0.6); proposed besides: York LOC (0.3), Paris LOC (0.5)."""
    return DocUncertainty(
        np.array([[0, 1, 1], [8, 10, 0]]),
        np.array([0.97, 0.6]),
        1.2,
        0.9,
        0.4,
        np.array([[0, 1, 1], [3, 4, 0], [8, 10, 0], [9, 10, 0]]),
        np.array([0.97, 0.5, 0.6, 0.3]),
    )


def test_span_tasks_are_the_doubtful_proposals_each_with_its_chance_of_a_wrong_decision():
    tasks = doc_tasks(two_sentences(), {"id": 1}, uncertainty(), LABELS, "expected_errors", "span")
    found = [(t["spans"][0]["text"], t["spans"][0]["label"], t["score"], t["text"][:4]) for t in tasks]
    assert found == [("Paris", "LOC", 0.5, "Mary"), ("New York", "LOC", 0.4, "John"), ("York", "LOC", 0.3, "John")]
    assert all(t["meta"]["unit"] == "span" and t["meta"]["expected_errors"] == 1.2 for t in tasks)


def test_region_tasks_mark_the_tokens_to_review_and_show_the_predictions_there():
    doc = two_sentences()
    tasks = doc_tasks(doc, {}, uncertainty(), LABELS, "expected_errors", "region")
    assert len(tasks) == 2  # "Paris" (0.5); "New York" with "York" (overlapping); Mary (0.97) is no region
    paris, new_york = tasks
    assert paris["region"] == [2, 5] and paris["meta"]["token_offset"] == 0  # Paris 3..4, padded by one token
    assert paris["spans"] == [] and paris["score"] == 0.5  # no predicted mention inside "in Paris ."
    assert new_york["region"] == [2, 6] and new_york["meta"]["token_offset"] == 5  # 8..10 -> 7..11, sentence 5..11
    assert [s["text"] for s in new_york["spans"]] == ["New York"] and new_york["score"] == pytest.approx(0.7)


def test_unknown_unit_is_refused():
    with pytest.raises(ValueError, match="Unknown review unit 'word'"):
        doc_tasks(two_sentences(), {}, uncertainty(), LABELS, "expected_errors", "word")


@pytest.mark.parametrize("unit", ["span", "region"])
def test_rank_writes_the_units_most_uncertain_first(pipeline, corpus, tmp_path, unit):
    done = cli(pipeline, corpus, tmp_path / "tasks.jsonl", "--unit", unit, "--no-progress")
    assert done.exit_code == 0, done.output
    tasks = lines(tmp_path / "tasks.jsonl")
    assert tasks and json.loads(done.stdout)["tasks_written"] == len(tasks)
    scores = [t["score"] for t in tasks]
    assert scores == sorted(scores, reverse=True)
    for task in tasks:
        assert task["meta"]["unit"] == unit
        for span in task["spans"]:
            assert task["text"][span["start"] : span["end"]] == span["text"]
            assert [t["text"] for t in task["tokens"][span["token_start"] : span["token_end"] + 1]] == span[
                "text"
            ].split()
        if unit == "span":
            (span,) = task["spans"]
            assert task["score"] == pytest.approx(min(span["score"], 1 - span["score"]), abs=1e-6)
        else:
            first, end = task["region"]
            assert 0 <= first < end <= len(task["tokens"])
            assert all(first <= s["token_start"] and s["token_end"] < end for s in task["spans"])


def answered(tasks, answer):
    return [{**task, "answer": answer(task)} for task in tasks]


def test_span_and_region_tasks_come_back_as_training_docs(pipeline, corpus, tmp_path):
    """rank's tasks, answered as a person would in the tool, import into the
    Docs the components train on: a binary answer annotates its span only, a
    region answer its region only; rejected spans go to incorrect_spans."""
    from spacy_depner.readers.annotation_tools import read_annotations

    for unit in ("span", "region"):
        assert cli(pipeline, corpus, tmp_path / f"{unit}.jsonl", "--unit", unit, "--no-progress").exit_code == 0
    spans = lines(tmp_path / "span.jsonl")
    accepted = answered(spans[:1], lambda task: "accept") + answered(spans[1:2], lambda task: "reject")
    path = tmp_path / "span_answers.jsonl"
    path.write_text("".join(json.dumps(task) + "\n" for task in accepted), encoding="utf8")
    docs = read_annotations("prodigy", path)
    by_text = {doc.text: doc for doc in docs}
    first, second = (by_text[task["text"]] for task in accepted)
    span = accepted[0]["spans"][0]
    ent = first[span["token_start"] : span["token_end"] + 1]
    assert [(e.start, e.end, e.label_) for e in first.ents] == [(ent.start, ent.end, span["label"])]
    assert all(t.ent_iob_ == "" for t in first if not ent.start <= t.i < ent.end)
    rejected = accepted[1]["spans"][0]
    assert [(s.start, s.end - 1, s.label_) for s in second.spans["incorrect_spans"]][-1] == (
        rejected["token_start"],
        rejected["token_end"],
        rejected["label"],
    )
    regions = answered(lines(tmp_path / "region.jsonl")[:1], lambda task: "accept")
    path = tmp_path / "region_answers.jsonl"
    path.write_text(json.dumps(regions[0]) + "\n", encoding="utf8")
    (doc,) = read_annotations("prodigy", path)
    first, end = regions[0]["region"]
    assert [t.ent_iob_ == "" for t in doc] == [not first <= i < end for i in range(len(doc))]
    assert {(e.start, e.end - 1, e.label_) for e in doc.ents} == {
        (s["token_start"], s["token_end"], s["label"]) for s in regions[0]["spans"]
    }


def test_a_task_as_label_studio_imports_it_comes_back_with_its_spans(tmp_path):
    """label_studio_task's prediction, exported as the annotation a person kept, reads back as the same entities."""
    from spacy_depner.readers.annotation_tools import read_annotations
    from spacy_depner.readers.label_studio_format import label_studio_task

    doc = two_sentences()
    record = task_record(context_of(doc, 6, 8), [(5, 7, 1), (8, 10, 0)], [0.6, 0.7], LABELS, 0.4, {"id": 2})
    task = label_studio_task(record)
    assert task["predictions"][0]["score"] == 0.4 and task["data"]["meta"] == {"id": 2, "token_offset": 5}
    assert [r["value"]["labels"] for r in task["predictions"][0]["result"]] == [["PER"], ["LOC"]]
    exported = [{"id": 1, "data": task["data"], "annotations": [{"id": 1, "result": task["predictions"][0]["result"]}]}]
    (tmp_path / "export.json").write_text(json.dumps(exported), encoding="utf8")
    (back,) = read_annotations("label-studio", tmp_path / "export.json")
    assert [(e.text, e.label_) for e in back.ents] == [("John Smith", "PER"), ("New York", "LOC")]
