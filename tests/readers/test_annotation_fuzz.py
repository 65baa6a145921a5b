"""A mutation fuzz of exports built from each tool's documented format: every
mutated export (a key dropped, a value of another type, an offset moved, a
label, answer or text changed, a task duplicated) is read either into a clear
ValueError or into Docs whose reviewed tokens carry exactly the labels the
export recorded; never another exception, never a reviewed token labelled
otherwise.

The oracle reads the mutated export on its own (not through the readers):
the spans each tool records as accepted on a text (Prodigy: a span's own
answer, else its task's; Label Studio: the labels results of annotations not
cancelled, every labels result and every result of the control "label"; doccano: every span), by character offsets (Prodigy token indices
through the task's token offsets). Each entity of a Doc must be such a span
of its text, with its label; no token outside an entity may lie under one."""

import copy
import json
import random

import pytest
from annotation_docs import ADA, GRACE, NLP, prodigy_task

from spacy_depner.readers.annotation_tools import read_annotations

TURING = "Alan Turing worked at Bletchley Park near London."


def prodigy_export() -> list:
    teach = prodigy_task(ADA, [(6, 7, "LOC")], "accept", "ner", _input_hash=1)
    old_teach = {k: v for k, v in prodigy_task(ADA, [], "reject", _input_hash=1).items() if k != "_view_id"}
    old_teach["spans"] = [{"start": 17, "end": 32, "label": "ORG", "score": 0.4, "text": "Charles Babbage"}]
    review = {
        **prodigy_task(GRACE, [(0, 2, "PER"), (4, 6, "ORG")], "accept", "review"),
        "view_id": "ner_manual",
        "versions": [],
        "sessions": ["a", "b"],
    }
    review["spans"][1]["answer"] = "reject"
    region = prodigy_task(TURING, [(4, 6, "LOC")], "accept", region=[3, 6], region_chars=[19, 36])
    for token in region["tokens"]:
        del token["ws"]
    return [teach, old_teach, review, region, prodigy_task(TURING, [(0, 2, "PER")], "ignore")]


def label_studio_export() -> list:
    def result(text, start, word, label):
        value = {"start": start, "end": start + len(word), "text": word, "labels": [label]}
        assert text[start : start + len(word)] == word
        return {"from_name": "label", "to_name": "text", "type": "labels", "value": value}

    return [
        {
            "id": 1,
            "data": {"text": ADA, "region_chars": [0, 43]},
            "annotations": [{"id": 1, "completed_by": 3, "result": [result(ADA, 0, "Ada Lovelace", "PER")]}],
        },
        {
            "id": 2,
            "data": {"text": GRACE},
            "annotations": [
                {
                    "id": 2,
                    "result": [result(GRACE, 23, "Harvard University", "ORG"), result(GRACE, 45, "Cambridge", "LOC")],
                }
            ],
        },
        {"id": 3, "data": {"text": TURING}, "annotations": [{"id": 3, "result": [], "was_cancelled": True}]},
    ]


def doccano_export() -> list:
    return [
        {"id": 1, "text": ADA, "label": [[0, 12, "PER"], [36, 42, "LOC"]]},
        {"id": 2, "text": GRACE, "entities": [{"id": 1, "start_offset": 45, "end_offset": 54, "label": "LOC"}]},
        {"id": 3, "text": TURING, "label": [[22, 36, "LOC"]], "meta": {"region_chars": [22, 49]}},
        {"id": 4, "text": TURING + " Again.", "label": []},
    ]


REPLACEMENTS = [None, "", "x", -1, 0, 1, 7, 999, 2.5, True, [], {}, [1, 2], "accept", "reject", "ignore", "ORG"]


def paths(value, prefix=()):
    """Every place in a JSON value, as a tuple of keys and indices."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, prefix + (index,))


def mutated(export: list, rng: random.Random) -> list:
    """``export`` with one to three random mutations."""
    export = copy.deepcopy(export)
    for _ in range(rng.randint(1, 3)):
        place = rng.choice([p for p in paths(export) if p])
        *parent_path, last = place
        parent = export
        for step in parent_path:
            parent = parent[step]
        value = parent[last]
        roll = rng.random()
        if roll < 0.25 and isinstance(parent, dict):
            del parent[last]
        elif roll < 0.5 and isinstance(value, int) and not isinstance(value, bool):
            parent[last] = max(0, value + rng.choice([-3, -2, -1, 1, 2, 3]))
        elif roll < 0.6 and isinstance(value, str):
            parent[last] = value[:-1] if rng.random() < 0.5 else value + rng.choice([" ", "x", "."])
        elif roll < 0.7 and isinstance(parent, list):
            parent.insert(rng.randrange(len(parent) + 1), copy.deepcopy(value))
        else:
            parent[last] = copy.deepcopy(rng.choice(REPLACEMENTS))
    return export


def _offsets(record: dict, span: dict):
    """A Prodigy span's character offsets: its own, else its token indices' through the task's tokens."""
    if isinstance(span.get("start"), int) and isinstance(span.get("end"), int):
        return span["start"], span["end"]
    try:
        tokens = record["tokens"]
        return tokens[span["token_start"]]["start"], tokens[span["token_end"]]["end"]
    except (KeyError, IndexError, TypeError):
        return None


def accepted_spans(format: str, export: list):
    """{text: [(start, end, label), ...]} of the spans the export records as accepted (module docstring)."""
    found = {}

    def add(text, offsets, label):
        if isinstance(text, str) and isinstance(label, str) and offsets is not None:
            found.setdefault(text, []).append((*offsets, label))

    for record in export if isinstance(export, list) else []:
        if not isinstance(record, dict):
            continue
        if format == "prodigy":
            for span in record.get("spans") or [] if isinstance(record.get("spans"), list) else []:
                if isinstance(span, dict) and (span.get("answer") or record.get("answer")) == "accept":
                    add(record.get("text"), _offsets(record, span), span.get("label"))
        elif format == "label-studio":
            data = record.get("data") if isinstance(record.get("data"), dict) else {}
            for annotation in record.get("annotations") if isinstance(record.get("annotations"), list) else []:
                if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
                    continue
                for item in annotation.get("result") if isinstance(annotation.get("result"), list) else []:
                    if not isinstance(item, dict) or (
                        item.get("type") != "labels" and item.get("from_name") != "label"
                    ):
                        continue  # another control's result
                    value = item.get("value")
                    if isinstance(value, dict) and isinstance(value.get("labels"), list):
                        for label in value["labels"]:
                            add(data.get("text"), (value.get("start"), value.get("end")), label)
        else:
            spans = record.get("entities", record.get("label"))
            for span in spans if isinstance(spans, list) else []:
                if isinstance(span, list) and len(span) == 3:
                    add(record.get("text"), (span[0], span[1]), span[2])
                elif isinstance(span, dict):
                    add(record.get("text"), (span.get("start_offset"), span.get("end_offset")), span.get("label"))
    return found


def stripped(text: str, start, end):
    if not (isinstance(start, int) and isinstance(end, int)):
        return None
    while start < end and text[start : start + 1].isspace():
        start += 1
    while end > start and text[end - 1 : end].isspace():
        end -= 1
    return start, end


def check_docs(docs, spans_by_text, where: str) -> None:
    """Every entity a recorded accepted span of its text, no O token under one."""
    for doc in docs:
        recorded = [(stripped(doc.text, s, e), label) for s, e, label in spans_by_text.get(doc.text, [])]
        for ent in doc.ents:
            assert ((ent.start_char, ent.end_char), ent.label_) in recorded, (where, doc.text, ent)
        for token in doc:
            if token.ent_iob_ == "O":
                for offsets, label in recorded:
                    if offsets is not None and offsets[0] < token.idx + len(token) and token.idx < offsets[1]:
                        raise AssertionError((where, doc.text, token.i, offsets, label))


BASES = {"prodigy": prodigy_export, "label-studio": label_studio_export, "doccano": doccano_export}


def write(format: str, export: list, path) -> None:
    if format == "label-studio":
        path.write_text(json.dumps(export), encoding="utf8")
    else:
        path.write_text("".join(json.dumps(record) + "\n" for record in export), encoding="utf8")


@pytest.mark.parametrize("format, texts", [("prodigy", 3), ("label-studio", 2), ("doccano", 3)])
def test_the_unmutated_exports_read(tmp_path, format, texts):
    export = BASES[format]()
    path = tmp_path / "export"
    write(format, export, path)
    docs = read_annotations(format, path, NLP)
    assert len(docs) == texts and all(doc.ents for doc in docs)
    check_docs(docs, accepted_spans(format, export), "unmutated")


@pytest.mark.parametrize("format", list(BASES))
def test_mutated_exports_give_a_clear_error_or_exactly_the_recorded_labels(tmp_path, format):
    rng = random.Random(45)
    outcomes = {"error": 0, "docs": 0}
    path = tmp_path / "export"
    for trial in range(300):
        export = mutated(BASES[format](), rng)
        write(format, export, path)
        try:
            docs = read_annotations(format, path, NLP)
        except ValueError as error:
            assert str(error).strip(), trial
            outcomes["error"] += 1
            continue
        check_docs(docs, accepted_spans(format, export), f"trial {trial}: {json.dumps(export)[:2000]}")
        outcomes["docs"] += 1
    assert outcomes["error"] > 20 and outcomes["docs"] > 20, outcomes  # both kinds of outcome were exercised
