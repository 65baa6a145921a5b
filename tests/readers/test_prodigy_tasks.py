"""Prodigy's JSON lines as Prodigy writes them (its docs on db-out, ner.teach,
ner.manual and review): the task kind told from the content when
``_view_id`` is missing, per-span answers, tasks on one input as one Doc
with contradictions named at both lines, tokens without ``ws``, a trailing
``ws`` at the end of the text, the review recipe's output, the tool's ids in
the meta, and files of another tool refused by name. Expected values are
written by hand from the tasks."""

import json

import pytest
from annotation_docs import ADA, GRACE, ents, group, iob, prodigy_task, write_lines

from spacy_depner.readers.annotation_tasks import ImportOptions
from spacy_depner.readers.annotation_tools import ImportCounts, read_prodigy


def teach_line(text, start, end, label, answer, **extra) -> dict:
    """A ner.teach line of an older Prodigy (no ``_view_id``; the proposed span without token indices)."""
    task = prodigy_task(text, [], answer, **extra)
    del task["_view_id"]
    task["spans"] = [
        {
            "start": start,
            "end": end,
            "text": text[start:end],
            "rank": 0,
            "label": label,
            "score": 0.55,
            "source": "en_core_web_sm",
            "input_hash": 11,
        }
    ]
    return {**task, "meta": {"score": 0.55}, "_input_hash": 11, "_task_hash": 99}


def test_a_teach_line_without_view_id_is_a_binary_decision(tmp_path):
    """An accepted proposal annotates its span only: every other token stays missing."""
    path = write_lines(tmp_path / "teach.jsonl", [teach_line(ADA, 36, 42, "LOC", "accept")])
    (doc,) = read_prodigy(path)
    assert iob(doc) == "- - - - - - B -" and ents(doc) == [("London", "LOC")]
    assert doc.user_data["meta"] == {"score": 0.55, "source": f"{path}:1", "task_id": 99}
    (nested,) = read_prodigy(path, mode="nested")
    assert group(nested, "nested_ner") == [(6, 7, "LOC")] and group(nested, "annotated") == []


def test_one_scored_span_with_token_indices_and_no_view_id_is_ambiguous(tmp_path):
    task = prodigy_task(ADA, [(6, 7, "LOC")], "accept")
    del task["_view_id"]
    task["spans"][0]["score"] = 0.7
    path = write_lines(tmp_path / "tasks.jsonl", [task])
    with pytest.raises(
        ValueError, match=r"tasks\.jsonl:1: .*binary decision .* or a manual annotation.*--prodigy-kind"
    ):
        read_prodigy(path)
    (binary,) = read_prodigy(path, options=ImportOptions(prodigy_kind="binary"))
    assert iob(binary) == "- - - - - - B -"
    (manual,) = read_prodigy(path, options=ImportOptions(prodigy_kind="manual"))
    assert iob(manual) == "O O O O O O B O"
    del task["spans"][0]["score"]  # token indices, no score: what the ner_manual interface records
    (doc,) = read_prodigy(write_lines(path, [task]))
    assert iob(doc) == "O O O O O O B O"


def test_rank_records_say_their_unit_and_regions_make_a_task_manual(tmp_path):
    span_unit = prodigy_task(ADA, [(6, 7, "LOC")], "accept", meta={"unit": "span"})
    region_unit = prodigy_task(GRACE, [(7, 8, "LOC")], "accept", meta={"unit": "region"}, region=[6, 9])
    for task in (span_unit, region_unit):
        del task["_view_id"]
        task["spans"][0]["score"] = 0.6
    docs = read_prodigy(write_lines(tmp_path / "ranked.jsonl", [span_unit, region_unit]))
    assert [iob(doc) for doc in docs] == ["- - - - - - B -", "- - - - - - O B O"]


def test_span_answers_decide_each_span(tmp_path):
    """A task accepted as a whole with one span rejected and one accepted (review and choice flows)."""
    task = prodigy_task(ADA, [(0, 2, "PER"), (3, 5, "ORG")], "accept", "ner")
    task["spans"][0]["answer"] = "accept"
    task["spans"][1]["answer"] = "reject"
    manual = prodigy_task(GRACE, [(0, 2, "PER"), (4, 6, "ORG"), (7, 8, "LOC")], "accept")
    manual["spans"][1]["answer"] = "reject"
    manual["spans"][2]["answer"] = "ignore"
    counts = ImportCounts()
    docs = read_prodigy(write_lines(tmp_path / "answers.jsonl", [task, manual]), counts=counts)
    assert iob(docs[0]) == "B I - - - - - -" and group(docs[0], "incorrect_spans") == [(3, 5, "ORG")]
    assert ents(docs[1]) == [("Grace Hopper", "PER")] and group(docs[1], "incorrect_spans") == [(4, 6, "ORG")]
    assert (counts.accepted, counts.rejected, counts.skipped) == (2, 2, {"span answered ignore": 1})


def test_tasks_on_one_input_are_one_doc_with_the_union_of_their_evidence(tmp_path):
    manual = prodigy_task(ADA, [(0, 2, "PER")], "accept", region=[0, 3], _input_hash=5, _annotator_id="ds-alex")
    teach = [
        prodigy_task(ADA, [(6, 7, "LOC")], "accept", "ner", _input_hash=5, _task_hash=51),
        prodigy_task(ADA, [(3, 5, "ORG")], "reject", "ner", _input_hash=5, _task_hash=52),
    ]
    path = write_lines(tmp_path / "union.jsonl", [manual, *teach])
    counts = ImportCounts()
    (doc,) = read_prodigy(path, counts=counts)
    assert iob(doc) == "B I O - - - B -" and ents(doc) == [("Ada Lovelace", "PER"), ("London", "LOC")]
    assert group(doc, "incorrect_spans") == [(3, 5, "ORG")]
    assert doc.user_data["meta"]["tasks"] == [
        {"source": f"{path}:1", "annotator": "ds-alex"},
        {"source": f"{path}:2", "task_id": 51},
        {"source": f"{path}:3", "task_id": 52},
    ]
    assert (counts.docs, counts.tokens_reviewed) == (1, 3)
    (nested,) = read_prodigy(path, mode="nested")
    assert group(nested, "nested_ner") == [(0, 2, "PER"), (6, 7, "LOC")] and group(nested, "annotated") == [(0, 3, "")]
    inside = prodigy_task(ADA, [(2, 3, "MISC")], "accept", "ner", _input_hash=5)
    with pytest.raises(ValueError, match=r"union\.jsonl:4: span 'met' .* accepted here, but .*union\.jsonl:1 reviewed"):
        read_prodigy(write_lines(path, [manual, *teach, inside]))
    twice = prodigy_task(ADA, [(0, 2, "PER")], "accept", _input_hash=5)  # a second annotator, the whole text
    with pytest.raises(
        ValueError, match=r"union\.jsonl:2: span 'London' .* accepted here, but .*union\.jsonl:3 reviewed"
    ):
        read_prodigy(write_lines(path, [manual, teach[0], twice]))


def tokens_without_ws(text) -> list:
    return [{k: v for k, v in token.items() if k != "ws"} for token in prodigy_task(text, [], "accept")["tokens"]]


def test_ws_comes_from_the_offsets_and_a_trailing_ws_at_the_end_is_dropped(tmp_path):
    no_ws = {**prodigy_task(ADA, [(6, 7, "LOC")], "accept"), "tokens": tokens_without_ws(ADA)}
    trailing = prodigy_task(GRACE, [(7, 8, "LOC")], "accept")
    trailing["tokens"][-1]["ws"] = True  # the last token "." at the end of the text
    docs = read_prodigy(write_lines(tmp_path / "tokens.jsonl", [no_ws, trailing]))
    assert [t.whitespace_ for t in docs[0]] == [" ", " ", " ", " ", " ", " ", "", ""]
    assert docs[0].text == ADA and docs[1].text == GRACE and iob(docs[1]) == "O O O O O O O B O"
    wrong = prodigy_task(ADA, [], "accept")
    wrong["tokens"][6]["ws"] = True  # "London" is followed by "."
    with pytest.raises(
        ValueError, match=r"token 6 'London' has ws true, but the text after it \(character 42\) is '\.'"
    ):
        read_prodigy(write_lines(tmp_path / "tokens.jsonl", [wrong]))
    gap = {**prodigy_task("Ada  Lovelace", [], "accept"), "tokens": tokens_without_ws("Ada Lovelace")}
    gap["text"] = "Ada  Lovelace"
    gap["tokens"][1].update(start=5, end=13)
    with pytest.raises(ValueError, match=r"token 0 'Ada' has no \"ws\", and the text between it and the next token"):
        read_prodigy(write_lines(tmp_path / "tokens.jsonl", [gap]))


def test_review_output_is_the_reviewed_answer(tmp_path):
    alex = prodigy_task(ADA, [(0, 2, "PER")], "accept", sessions=["ner-alex"], default=False)
    jo = prodigy_task(ADA, [(0, 2, "PER"), (6, 7, "LOC")], "accept", sessions=["ner-jo"], default=True)
    reviewed = {
        **prodigy_task(ADA, [(0, 2, "PER"), (6, 7, "LOC")], "accept", "review"),
        "view_id": "ner_manual",
        "versions": [alex, jo],
        "sessions": ["ner-alex", "ner-jo"],
        "_input_hash": 3,
        "_task_hash": 4,
        "_session_id": "ner-review",
    }
    no_view_id = {k: v for k, v in reviewed.items() if k != "view_id"}  # the versions name the interface
    binary = {**prodigy_task(GRACE, [(7, 8, "LOC")], "reject", "review"), "view_id": "ner", "versions": []}
    docs = read_prodigy(write_lines(tmp_path / "review.jsonl", [reviewed, binary]))
    assert iob(docs[0]) == "B I O O O O B O" and docs[0].user_data["meta"]["annotator"] == "ner-review"
    assert iob(docs[1]) == "- - - - - - - - -" and group(docs[1], "incorrect_spans") == [(7, 8, "LOC")]
    (doc,) = read_prodigy(write_lines(tmp_path / "review.jsonl", [no_view_id]))
    assert iob(doc) == "B I O O O O B O"


@pytest.mark.parametrize(
    "content, message",
    [
        (
            json.dumps([{"id": 1, "data": {"text": ADA}, "annotations": []}], indent=2),
            r"export\.jsonl: the file is one JSON list .*import it as label-studio",
        ),
        (
            json.dumps({"id": 1, "text": ADA, "label": [[0, 3, "PER"]]}) + "\n",
            r"export\.jsonl:1: this looks like a doccano record .*import it as doccano",
        ),
        (
            json.dumps({"id": 1, "data": {"text": ADA}, "annotations": []}) + "\n",
            r"export\.jsonl:1: this looks like a Label Studio record .*import it as label-studio",
        ),
    ],
)
def test_another_tools_file_is_refused_by_name(tmp_path, content, message):
    path = tmp_path / "export.jsonl"
    path.write_text(content, encoding="utf8")
    with pytest.raises(ValueError, match=message):
        read_prodigy(path)


def test_overlapping_entities_of_two_tasks_name_both(tmp_path):
    tasks = [
        prodigy_task(ADA, [(0, 2, "PER")], "accept", "ner", _input_hash=8),
        prodigy_task(ADA, [(1, 3, "PER")], "accept", "ner", _input_hash=8),
    ]
    path = write_lines(tmp_path / "teach.jsonl", tasks)
    with pytest.raises(ValueError, match=r"teach\.jsonl:1 and .*teach\.jsonl:2: the spans 'Ada Lovelace' .* overlap"):
        read_prodigy(path)
    (doc,) = read_prodigy(path, mode="nested")
    assert group(doc, "nested_ner") == [(0, 2, "PER"), (1, 3, "PER")]


def teach_spans(text, spans) -> list:
    """ner.teach's spans as a dataset holds them: each proposal with its own
    ``answer`` and the model's ``score`` ([(start, end, label, answer, score)])."""
    return [
        {"start": s, "end": e, "text": text[s:e], "label": label, "answer": answer, "score": score, "rank": 0}
        for s, e, label, answer, score in spans
    ]


def test_a_teach_line_with_several_answered_and_scored_spans_is_binary(tmp_path):
    """Per-span answers and model scores are what ner_manual never writes: only the
    decided spans are information, every other token stays missing (never gold O)."""
    spans = teach_spans(ADA, [(0, 12, "PER", "accept", 0.81), (36, 42, "ORG", "reject", 0.42)])
    line = {**teach_line(ADA, 0, 12, "PER", "accept"), "spans": spans}
    with_tokens = prodigy_task(ADA, [(0, 2, "PER"), (6, 7, "ORG")], "accept", _input_hash=12)
    del with_tokens["_view_id"]
    for span, decided in zip(with_tokens["spans"], spans):
        span.update(answer=decided["answer"], score=decided["score"])
    counts = ImportCounts()
    docs = read_prodigy(write_lines(tmp_path / "teach.jsonl", [line, with_tokens]), counts=counts)
    for doc in docs:
        assert iob(doc) == "B I - - - - - -" and ents(doc) == [("Ada Lovelace", "PER")]
        assert group(doc, "incorrect_spans") == [(6, 7, "ORG")]
    assert (counts.accepted, counts.rejected, counts.tokens_reviewed) == (2, 2, 0)
    (manual,) = read_prodigy(
        write_lines(tmp_path / "teach.jsonl", [line]), options=ImportOptions(prodigy_kind="manual")
    )
    assert iob(manual) == "B I O O O O O O"  # stated manual: the user's word decides


@pytest.mark.parametrize("view", ["ner_manual", "spans_manual", None])
def test_an_accepted_manual_task_without_spans_is_a_text_with_no_entity(tmp_path, view):
    """Prodigy leaves out "spans" where the annotator marked nothing."""
    task = {k: v for k, v in prodigy_task(GRACE, [], "accept", view).items() if k != "spans"}
    if view is None:
        del task["_view_id"]
    counts = ImportCounts()
    (doc,) = read_prodigy(write_lines(tmp_path / "manual.jsonl", [task]), counts=counts)
    assert iob(doc) == "O O O O O O O O O" and ents(doc) == []
    assert (counts.docs, counts.tokens_reviewed, counts.skipped) == (1, 9, {})
    rejected = {**task, "answer": "reject"}  # rejects nothing, reviews nothing
    (doc,) = read_prodigy(write_lines(tmp_path / "manual.jsonl", [rejected]))
    assert iob(doc) == "- - - - - - - - -"


@pytest.mark.parametrize(
    "task, message",
    [
        ({"text": ADA, "label": "NEWS", "answer": "accept"}, r'a textcat or choice task \(its "label"'),
        ({"text": ADA, "options": [{"id": 1}], "accept": [1], "answer": "accept"}, r'\(its "options"'),
        ({"text": ADA, "answer": "accept", "_view_id": "ner"}, r"a binary \(ner\) task without \"spans\""),
    ],
)
def test_a_task_of_another_interface_without_spans_is_still_refused(tmp_path, task, message):
    with pytest.raises(ValueError, match=r"tasks\.jsonl:1: .*" + message):
        read_prodigy(write_lines(tmp_path / "tasks.jsonl", [task]))
