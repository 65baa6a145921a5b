"""Annotation-tool exports to Docs: a round trip per format (tasks written
here from known Docs, the Docs read back against values written by hand),
the two modes, and every malformed task an error naming FILE:LINE (or the
Label Studio task) and the cause."""

import json
import re

import pytest
import spacy
from annotation_docs import ADA, GRACE, NLP, ents, group, iob, prodigy_task, write_lines
from spacy.tokenizer import Tokenizer
from spacy.tokens import DocBin

from spacy_depner.readers.annotation_tasks import ImportOptions
from spacy_depner.readers.annotation_tools import (
    ImportCounts,
    read_annotations,
    read_doccano,
    read_label_studio,
    read_prodigy,
    write_annotation_docbin,
)

TURING = "Alan Turing worked at Bletchley Park."  # Alan0 Turing1 worked2 at3 Bletchley4 Park5 .6


# --- Prodigy ----------------------------------------------------------------


GRACE_MA = GRACE[:-1] + ", Massachusetts."  # ... Harvard4 University5 in6 Cambridge7 ,8 Massachusetts9 .10
MANUAL_TASKS = [
    prodigy_task(ADA, [(0, 2, "PER"), (3, 5, "PER"), (6, 7, "LOC")], "accept"),
    prodigy_task(TURING, [(4, 6, "ORG")], "reject"),
    prodigy_task(ADA, [(0, 2, "PER")], "ignore"),
    prodigy_task(GRACE, [(4, 6, "ORG"), (7, 8, "LOC")], "accept", meta={"id": 4, "region": [4, 9]}),
]


def test_prodigy_manual_flat(tmp_path):
    counts = ImportCounts()
    docs = read_prodigy(write_lines(tmp_path / "manual.jsonl", MANUAL_TASKS), counts=counts)
    assert len(docs) == 3
    assert iob(docs[0]) == "B I O B I O B O"
    assert ents(docs[0]) == [("Ada Lovelace", "PER"), ("Charles Babbage", "PER"), ("London", "LOC")]
    assert group(docs[0], "incorrect_spans") == []
    assert iob(docs[1]) == "- - - - - - -"  # rejected: no token reviewed
    assert ents(docs[1]) == [] and group(docs[1], "incorrect_spans") == [(4, 6, "ORG")]
    assert iob(docs[2]) == "- - - - B I O B O"  # region [4, 9)
    assert ents(docs[2]) == [("Harvard University", "ORG"), ("Cambridge", "LOC")]
    assert docs[2].user_data["meta"] == {"id": 4, "region": [4, 9], "source": f"{tmp_path / 'manual.jsonl'}:4"}
    assert docs[0].user_data["meta"] == {"source": f"{tmp_path / 'manual.jsonl'}:1"}
    assert "annotated" not in docs[0].spans and "nested_ner" not in docs[0].spans
    assert counts.as_dict() == {
        "tasks": 4,
        "docs": 3,
        "accepted": 5,
        "rejected": 1,
        "ignored": 1,
        "tokens_reviewed": 8 + 5,
        "skipped": {},
    }


def test_prodigy_manual_nested_allows_overlaps(tmp_path):
    tasks = MANUAL_TASKS + [
        prodigy_task(GRACE_MA, [(4, 6, "ORG"), (4, 8, "ORG"), (7, 8, "LOC")], "accept", "spans_manual", region=[2, 9])
    ]
    docs = read_prodigy(write_lines(tmp_path / "spans.jsonl", tasks), mode="nested")
    assert [group(doc, "nested_ner") for doc in docs] == [
        [(0, 2, "PER"), (3, 5, "PER"), (6, 7, "LOC")],
        [],
        [(4, 6, "ORG"), (7, 8, "LOC")],
        [(4, 6, "ORG"), (4, 8, "ORG"), (7, 8, "LOC")],
    ]
    assert [group(doc, "annotated") for doc in docs] == [[(0, 8, "")], [], [(4, 9, "")], [(2, 9, "")]]
    assert [group(doc, "incorrect_spans") for doc in docs] == [[], [(4, 6, "ORG")], [], []]
    assert all(doc.ents == () for doc in docs)
    with pytest.raises(ValueError, match=r"spans\.jsonl:5: the spans 'Harvard University' .* overlap.*--mode nested"):
        read_prodigy(tmp_path / "spans.jsonl")


BINARY_TASKS = [
    prodigy_task(ADA, [(0, 2, "PER")], "accept", "ner", _input_hash=11),
    prodigy_task(GRACE, [(7, 8, "LOC")], "accept", "ner", _input_hash=22),
    prodigy_task(ADA, [(3, 5, "ORG")], "reject", "ner", _input_hash=11),
    prodigy_task(ADA, [(6, 7, "LOC")], "ignore", "ner", _input_hash=11),
]


def test_prodigy_binary_tasks_of_one_text_make_one_doc(tmp_path):
    counts = ImportCounts()
    docs = read_prodigy(write_lines(tmp_path / "teach.jsonl", BINARY_TASKS), counts=counts)
    assert [doc.text for doc in docs] == [ADA, GRACE]
    assert iob(docs[0]) == "B I - - - - - -" and ents(docs[0]) == [("Ada Lovelace", "PER")]
    assert group(docs[0], "incorrect_spans") == [(3, 5, "ORG")]
    assert iob(docs[1]) == "- - - - - - - B -" and group(docs[1], "incorrect_spans") == []
    assert counts.as_dict() == {
        "tasks": 4,
        "docs": 2,
        "accepted": 2,
        "rejected": 1,
        "ignored": 1,
        "tokens_reviewed": 0,
        "skipped": {},
    }
    nested = read_prodigy(tmp_path / "teach.jsonl", mode="nested", spans_key="nested_ner", annotated_key="seen")
    assert group(nested[0], "nested_ner") == [(0, 2, "PER")] and group(nested[0], "incorrect_spans") == [(3, 5, "ORG")]
    assert "seen" in nested[0].spans and group(nested[0], "seen") == []  # nothing marked annotated


def test_prodigy_binary_tasks_without_input_hash_are_grouped_by_text(tmp_path):
    tasks = [{k: v for k, v in task.items() if k != "_input_hash"} for task in BINARY_TASKS]
    docs = read_prodigy(write_lines(tmp_path / "teach.jsonl", tasks))
    assert [iob(doc) for doc in docs] == ["B I - - - - - -", "- - - - - - - B -"]


def test_a_rank_record_answered_accept_imports_its_spans(tmp_path):
    words = ["Ada", "Lovelace", "met", "Charles", "Babbage", "in", "London", "."]
    starts = [0, 4, 13, 17, 25, 33, 36, 42]
    record = {
        "text": ADA,
        "tokens": [
            {"text": w, "start": s, "end": s + len(w), "id": i, "ws": i not in (6, 7)}
            for i, (w, s) in enumerate(zip(words, starts))
        ],
        "spans": [
            {
                "start": 0,
                "end": 12,
                "token_start": 0,
                "token_end": 1,
                "label": "PER",
                "text": "Ada Lovelace",
                "score": 0.9,
            },
            {"start": 36, "end": 42, "token_start": 6, "token_end": 6, "label": "LOC", "text": "London", "score": 0.5},
        ],
        "score": 1.31,
        "meta": {"id": 7, "expected_errors": 1.31},
    }
    path = write_lines(tmp_path / "ranked.jsonl", [record])
    with pytest.raises(ValueError, match=r"ranked\.jsonl:1: answer None is not one of accept, reject, ignore.*rank"):
        read_prodigy(path)
    (doc,) = read_prodigy(write_lines(path, [{**record, "answer": "accept"}]))
    assert ents(doc) == [("Ada Lovelace", "PER"), ("London", "LOC")] and iob(doc) == "B I O O O O B O"
    assert doc.user_data["meta"] == {"id": 7, "expected_errors": 1.31, "source": f"{path}:1"}


# --- Label Studio -------------------------------------------------------------


def ls_result(start, end, text, *labels) -> dict:
    return {
        "type": "labels",
        "from_name": "label",
        "value": {"start": start, "end": end, "text": text, "labels": labels},
    }


LABEL_STUDIO = [
    {
        "id": 101,
        "data": {"text": ADA},
        "annotations": [
            {"id": 1, "result": [ls_result(0, 12, "Ada Lovelace", "PER")], "was_cancelled": False},
            {"id": 2, "result": [ls_result(0, 12, "Ada Lovelace", "PER"), ls_result(36, 42, "London", "LOC")]},
            {"result": [ls_result(17, 32, "Charles Babbage", "ORG")], "was_cancelled": True},
        ],
        "predictions": [{"result": [ls_result(17, 32, "Charles Babbage", "PER")]}],
        "meta": {"source": "web"},
    },
    {
        "id": 102,
        "data": {"text": GRACE, "region": [4, 9]},
        "annotations": [
            {
                "result": [
                    ls_result(23, 41, "Harvard University", "ORG", "LOC"),
                    {"type": "choices", "value": {"choices": ["news"]}},
                ]
            }
        ],
    },
    {"id": 103, "data": {"text": ADA}, "annotations": [{"result": [], "was_cancelled": True}]},
    {"id": 104, "data": {"text": GRACE}, "annotations": []},
]


def test_label_studio_last_annotation_not_cancelled(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(LABEL_STUDIO, indent=2), encoding="utf8")
    counts = ImportCounts()
    docs = read_label_studio(path, mode="nested", counts=counts)
    assert [group(doc, "nested_ner") for doc in docs] == [
        [(0, 2, "PER"), (6, 7, "LOC")],
        [(4, 6, "LOC"), (4, 6, "ORG")],
    ]
    assert [group(doc, "annotated") for doc in docs] == [[(0, 8, "")], [(4, 9, "")]]
    assert docs[0].user_data["meta"] == {
        "source": "web",  # the tool's meta is kept, the import's source beside it
        "import_source": f"{path} task 1 (id 101)",
        "annotation_id": 2,
        "task_id": 101,
    }
    assert counts.as_dict() == {
        "tasks": 4,
        "docs": 2,
        "accepted": 4,
        "rejected": 0,
        "ignored": 1,  # 103: its one annotation cancelled
        "tokens_reviewed": 13,
        "skipped": {"annotation not kept (--annotators last)": 1, "not annotated": 1},  # 101's first; 104
    }
    with pytest.raises(ValueError, match=r"export\.json task 2 \(id 102\): the spans 'Harvard University' .*overlap"):
        read_label_studio(path)
    LABEL_STUDIO[1]["annotations"][0]["result"][0]["value"]["labels"] = ["ORG"]
    path.write_text(json.dumps(LABEL_STUDIO), encoding="utf8")
    flat = read_label_studio(path)
    assert iob(flat[0]) == "B I O O O O B O" and ents(flat[0]) == [("Ada Lovelace", "PER"), ("London", "LOC")]
    assert iob(flat[1]) == "- - - - B I O O O"


# --- doccano ------------------------------------------------------------------


def test_doccano_both_forms(tmp_path):
    """An unlabelled record (``"label": []``) is skipped by default; read as
    reviewed with no entity it contradicts line 2 (same text, Cambridge LOC)."""
    lines = [
        {"id": 1, "text": ADA, "label": [[0, 12, "PER"], [36, 42, "LOC"]]},
        {"text": GRACE, "entities": [{"id": 9, "start_offset": 45, "end_offset": 54, "label": "LOC"}], "relations": []},
        {"text": GRACE, "label": []},
        {"text": TURING, "label": []},
    ]
    counts = ImportCounts()
    docs = read_doccano(write_lines(tmp_path / "doccano.jsonl", lines), counts=counts)
    assert [ents(doc) for doc in docs] == [[("Ada Lovelace", "PER"), ("London", "LOC")], [("Cambridge", "LOC")]]
    assert [iob(doc) for doc in docs] == ["B I O O O O B O", "O O O O O O O B O"]
    assert counts.skipped == {"unlabelled record (--unlabelled skip)": 2} and counts.docs == 2
    options = ImportOptions(unlabelled="outside")
    with pytest.raises(
        ValueError, match=r"doccano\.jsonl:2: span 'Cambridge' .* accepted here, but .*doccano\.jsonl:3 reviewed"
    ):
        read_doccano(tmp_path / "doccano.jsonl", options=options)
    docs = read_doccano(write_lines(tmp_path / "doccano.jsonl", lines[:1] + lines[3:]), options=options)
    assert [iob(doc) for doc in docs] == ["B I O O O O B O", "O O O O O O O"]


def test_the_given_tokenizer_decides_alignment(tmp_path):
    path = write_lines(tmp_path / "doccano.jsonl", [{"text": "Lovelace's notes", "label": [[0, 8, "PER"]]}])
    assert ents(read_doccano(path)[0]) == [("Lovelace", "PER")]  # blank English splits 's
    whitespace = spacy.blank("en")
    whitespace.tokenizer = Tokenizer(whitespace.vocab)
    with pytest.raises(
        ValueError, match=r"doccano\.jsonl:1: span 'Lovelace' \(PER, characters 0\.\.8\).*\[\"Lovelace's\"\]"
    ):
        read_doccano(path, whitespace)


def test_the_docbin_keeps_entities_missing_tokens_groups_and_meta(tmp_path):
    docs = read_prodigy(write_lines(tmp_path / "manual.jsonl", MANUAL_TASKS))
    write_annotation_docbin(docs, tmp_path / "manual.spacy")
    back = list(DocBin().from_disk(tmp_path / "manual.spacy").get_docs(NLP.vocab))
    assert [iob(doc) for doc in back] == ["B I O B I O B O", "- - - - - - -", "- - - - B I O B O"]
    assert [group(doc, "incorrect_spans") for doc in back] == [[], [(4, 6, "ORG")], []]
    assert back[2].user_data["meta"] == {
        "id": 4,
        "region": (4, 9),  # DocBin's msgpack reads lists as tuples
        "source": f"{tmp_path / 'manual.jsonl'}:4",
    }


# --- errors -------------------------------------------------------------------

GOOD = {"text": GRACE, "label": [[0, 12, "PER"]]}  # another text than the bad line's: not grouped with it
GOOD_LINES = {"doccano": GOOD, "prodigy": prodigy_task(GRACE, [(0, 2, "PER")], "accept")}
ADA_TOKENS = prodigy_task(ADA, [], "accept")["tokens"]


@pytest.mark.parametrize(
    "format, line, message",
    [
        (
            "doccano",
            {"text": ADA, "label": [[4, 11, "PER"]]},
            r"span 'Lovelac' \(PER, characters 4\.\.11\) does not fall on token boundaries.*re-tokenise",
        ),
        (
            "doccano",
            {"text": ADA, "label": [[36, 60, "LOC"]]},
            r"span 'LOC' at characters 36\.\.60 lies outside the text of 43 characters",
        ),
        ("doccano", {"text": ADA, "label": [[12, 0, "LOC"]]}, r"span 'LOC' at characters 12\.\.0 is empty or reversed"),
        ("doccano", {"text": ADA, "label": [["0", 3, "PER"]]}, r"a span start must be a whole number from 0, got '0'"),
        ("doccano", {"label": []}, r"the task has no text in \"text\" \(found none\)"),
        (
            "doccano",
            {"text": ADA, "label": ["POSITIVE"]},
            r"\"label\" \['POSITIVE'\] is not a list of .*export a sequence-labelling project",
        ),
        ("doccano", {"text": ADA, "label": [[0, 3, ""]]}, r"span label '' is not a label name"),
        ("doccano", [ADA], r"a doccano record must be a JSON object"),
        ("prodigy", prodigy_task(ADA, [], "maybe"), r"answer 'maybe' is not one of accept, reject, ignore"),
        ("prodigy", prodigy_task(ADA, [], "accept", "choice"), r"_view_id 'choice' is not an entity task"),
        (
            "prodigy",
            prodigy_task(ADA, [(0, 2, "PER"), (1, 3, "PER")], "accept"),
            r"the spans 'Ada Lovelace' .* and 'Lovelace met' .* overlap.*--mode nested",
        ),
        (
            "prodigy",
            {**prodigy_task(ADA, [], "accept"), "spans": [{"token_start": 7, "token_end": 9, "label": "X"}]},
            r"span 'X' at tokens 7\.\.9 lies outside the 8 tokens",
        ),
        (
            "prodigy",
            {
                **prodigy_task(ADA, [], "accept"),
                "spans": [{"start": 0, "end": 3, "token_start": 0, "token_end": 1, "label": "X"}],
            },
            r"span 'X' at characters 0\.\.3 is not its tokens 'Ada Lovelace'",
        ),
        (
            "prodigy",
            {**prodigy_task(ADA, [], "accept"), "spans": [{"start": 0, "end": 3, "text": "Bob", "label": "X"}]},
            r"span text 'Bob' is not the text at its place, 'Ada'",
        ),
        (
            "prodigy",
            {**prodigy_task(ADA, [], "accept"), "spans": [{"label": "X"}]},
            r"span \{'label': 'X'\} has neither start and end nor token_start and token_end",
        ),
        (
            "prodigy",
            {**prodigy_task(ADA, [], "accept"), "tokens": ADA_TOKENS[:1] + ADA_TOKENS[2:]},
            r"token 1 'met' says characters 13\.\.16, but the tokens before it spell the text up to character 4",
        ),
        (
            "prodigy",
            {**prodigy_task(ADA, [], "accept"), "tokens": ADA_TOKENS[:-1]},
            r"the tokens end at character 42 of the 43",
        ),
        (
            "prodigy",
            {**prodigy_task(ADA, [], "accept"), "tokens": [{"text": "Ada"}]},
            r"token 0 'Ada' has no \"ws\" and no \"start\"/\"end\" to derive it from",
        ),
        ("prodigy", prodigy_task(ADA, [], "accept", region=[2, 20]), r"region \[2, 20\) lies outside the 8 tokens"),
        (
            "prodigy",
            prodigy_task(ADA, [], "accept", region=[3, 3]),
            r"region \[3, 3\] is not \[token_start, token_end_exclusive\]",
        ),
        (
            "prodigy",
            prodigy_task(ADA, [(0, 2, "PER")], "accept", region=[2, 8]),
            r"span 'Ada Lovelace' .* lies outside the reviewed region \(2, 8\)",
        ),
    ],
)
def test_a_malformed_task_names_file_line_and_cause(tmp_path, format, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD_LINES[format]) + "\n\n" + json.dumps(line) + "\n", encoding="utf8")  # blank line 2
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: ") + message):
        read_annotations(format, path)


def test_contradicting_binary_answers_name_both_tasks(tmp_path):
    tasks = [BINARY_TASKS[0], {**BINARY_TASKS[0], "answer": "reject"}]
    path = write_lines(tmp_path / "teach.jsonl", tasks)
    with pytest.raises(
        ValueError, match=r"teach\.jsonl:2: span 'Ada Lovelace' .* is rejected here and accepted at .*teach\.jsonl:1"
    ):
        read_prodigy(path)
    other_text = {**BINARY_TASKS[0], "text": GRACE, "tokens": prodigy_task(GRACE, [], "accept")["tokens"], "spans": []}
    with pytest.raises(
        ValueError, match=r"teach\.jsonl:2: the task shares its input \(_input_hash.*with .*teach\.jsonl:1"
    ):
        read_prodigy(write_lines(path, [BINARY_TASKS[0], other_text]))


def test_malformed_json_names_its_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD) + '\n{"text": "a", \n', encoding="utf8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: not valid JSON")):
        read_doccano(path)
    export = tmp_path / "export.json"
    export.write_text('[\n  {"data": {"text": "a"}},\n  {"data": }\n]\n', encoding="utf8")
    with pytest.raises(ValueError, match=re.escape(f"{export}:3: not valid JSON") + ".*Export > JSON"):
        read_label_studio(export)
    export.write_text(json.dumps({"data": {"text": ADA}}), encoding="utf8")
    with pytest.raises(ValueError, match=r"a Label Studio export \(Export > JSON\) must be a JSON list"):
        read_label_studio(export)


def test_a_misaligned_label_studio_span_names_its_task(tmp_path):
    tasks = [
        LABEL_STUDIO[0],
        {"id": 7, "data": {"text": ADA}, "annotations": [{"result": [ls_result(4, 11, "Lovelac", "PER")]}]},
    ]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks), encoding="utf8")
    with pytest.raises(ValueError, match=re.escape(f"{export} task 2 (id 7): span 'Lovelac' (PER, characters 4..11)")):
        read_label_studio(export)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"format": "brat"}, r"Unknown annotation format 'brat': use one of prodigy, label-studio, doccano"),
        ({"mode": "deep"}, r"Unknown mode 'deep': use one of flat, nested"),
        ({"lang": "xx_unknown"}, r"spaCy has no language 'xx_unknown'"),
    ],
)
def test_unknown_format_mode_or_language(tmp_path, options, message):
    path = write_lines(tmp_path / "doccano.jsonl", [GOOD])
    with pytest.raises(ValueError, match=message):
        read_annotations(options.pop("format", "doccano"), path, **options)
