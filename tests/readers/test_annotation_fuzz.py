"""A mutation fuzz of exports built from each tool's documented format: every
mutated export (a key dropped, a value of another type, an offset moved, a
label, answer or text changed, a task duplicated) is read either into a clear
ValueError or into Docs whose reviewed tokens carry exactly the labels the
export recorded; never another exception, never a reviewed token labelled
otherwise, never a token labelled O that no manual task reviewed.

The exports hold what real datasets hold: Prodigy ner.teach lines with
several spans (each its own answer and model score), manual tasks without
``spans``, Label Studio offsets in UTF-16 code units without ``text`` (read
with ``offsets="utf-16"``) and annotators who tie (``annotators="majority"``).

The oracle reads the mutated export on its own (not through the readers):
the spans each tool records as accepted on a text (Prodigy: a span's own
answer, else its task's; Label Studio: the labels results of annotations not
cancelled, every labels result and every result of the control "label"; doccano: every span), by character offsets (Prodigy token indices
through the task's token offsets; UTF-16 code units converted where read
so). Each entity of a Doc must be such a span of its text, with its label;
no token outside an entity may lie under one that is decided or tied (with
``majority``: marked by at least half of the annotations not cancelled);
and a token may be O only in a text that an accepted manual task reviewed
(Prodigy: ``_view_id`` ner_manual or spans_manual, or none and no span
with its own answer and a model score, the mark of ner.teach).
"""

import copy
import json
import random

import pytest
from annotation_docs import ADA, GRACE, NLP, prodigy_task

from spacy_depner.readers.annotation_tasks import ImportOptions
from spacy_depner.readers.annotation_tools import read_annotations

TURING = "Alan Turing worked at Bletchley Park near London."
KATHERINE = "Katherine Johnson computed orbits for NASA in Virginia."
RAIN = "It rained all day in the valley."
EMOJI = "\U0001f600\U0001f600 Bob met Alice in Paris."  # Bob: characters 3..6, UTF-16 code units 5..8


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
    teach_many = {k: v for k, v in prodigy_task(KATHERINE, [], "accept", _input_hash=2).items() if k != "_view_id"}
    teach_many["spans"] = [
        {"start": 0, "end": 17, "label": "PER", "answer": "accept", "score": 0.91, "rank": 0},
        {"start": 38, "end": 42, "label": "ORG", "answer": "reject", "score": 0.34, "rank": 1},
        {"start": 46, "end": 54, "label": "LOC", "answer": "accept", "score": 0.62, "rank": 2},
    ]
    no_spans = {k: v for k, v in prodigy_task(RAIN, [], "accept").items() if k != "spans"}
    ignored = prodigy_task(TURING, [(0, 2, "PER")], "ignore")
    return [teach, old_teach, review, region, ignored, teach_many, no_spans]


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


def labels_result(start: int, end: int, label: str, text=None) -> dict:
    value = {"start": start, "end": end, "labels": [label], **({} if text is None else {"text": text})}
    return {"from_name": "label", "to_name": "text", "type": "labels", "value": value}


def label_studio_majority_export() -> list:
    """Two annotators who tie on London, and offsets in UTF-16 code units without text."""
    return [
        {
            "id": 1,
            "data": {"text": ADA},
            "annotations": [
                {"id": 1, "completed_by": 1, "result": [labels_result(0, 12, "PER"), labels_result(36, 42, "LOC")]},
                {"id": 2, "completed_by": 2, "result": [labels_result(0, 12, "PER", "Ada Lovelace")]},
            ],
        },
        {
            "id": 2,
            "data": {"text": EMOJI},
            "annotations": [{"id": 3, "result": [labels_result(5, 8, "PER"), labels_result(22, 27, "LOC")]}],
        },
        {"id": 3, "data": {"text": GRACE}, "annotations": [{"id": 4, "result": [labels_result(45, 54, "LOC")]}]},
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


def from_utf16(text: str, unit):
    """The character offset of UTF-16 code unit ``unit`` of ``text`` (None inside a pair or past the end)."""
    units = 0
    for index, character in enumerate(text + "\0"):
        if units == unit:
            return index
        units += 2 if ord(character) > 0xFFFF else 1
    return None


def label_studio_results(record: dict):
    """(annotation number, value) of each labels result of the annotations of ``record`` not cancelled."""
    annotations = record.get("annotations") if isinstance(record.get("annotations"), list) else []
    for number, annotation in enumerate(annotations):
        if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
            continue
        for item in annotation.get("result") if isinstance(annotation.get("result"), list) else []:
            if isinstance(item, dict) and (item.get("type") == "labels" or item.get("from_name") == "label"):
                if isinstance(item.get("value"), dict) and isinstance(item["value"].get("labels"), list):
                    yield number, item["value"]


def recorded_spans(format: str, export: list, utf16: bool = False, majority: bool = False):
    """({text: [(start, end, label), ...]} of the spans the export records as
    accepted, {text: those no token of which may be O}) (module docstring)."""
    found, binding = {}, {}

    def add(text, offsets, label, binds=True):
        if isinstance(text, str) and isinstance(label, str) and offsets is not None:
            found.setdefault(text, []).append((*offsets, label))
            if binds:
                binding.setdefault(text, []).append((*offsets, label))

    for record in export if isinstance(export, list) else []:
        if not isinstance(record, dict):
            continue
        if format == "prodigy":
            for span in record.get("spans") or [] if isinstance(record.get("spans"), list) else []:
                if isinstance(span, dict) and (span.get("answer") or record.get("answer")) == "accept":
                    add(record.get("text"), _offsets(record, span), span.get("label"))
        elif format == "label-studio":
            data = record.get("data") if isinstance(record.get("data"), dict) else {}
            text = data.get("text")
            annotations = record.get("annotations") if isinstance(record.get("annotations"), list) else []
            voters = sum(isinstance(a, dict) and not a.get("was_cancelled") for a in annotations)
            votes, places = {}, {}
            for number, value in label_studio_results(record):
                offsets = (value.get("start"), value.get("end"))
                if utf16 and isinstance(text, str) and all(isinstance(o, int) for o in offsets):
                    offsets = (from_utf16(text, offsets[0]), from_utf16(text, offsets[1]))
                    offsets = None if None in offsets else offsets
                for label in value["labels"]:
                    votes.setdefault((offsets, label), set()).add(number)
                    places[offsets, label] = offsets
            for (offsets, label), numbers in votes.items():
                add(text, places[offsets, label], label, not majority or 2 * len(numbers) >= voters)
        else:
            spans = record.get("entities", record.get("label"))
            for span in spans if isinstance(spans, list) else []:
                if isinstance(span, list) and len(span) == 3:
                    add(record.get("text"), (span[0], span[1]), span[2])
                elif isinstance(span, dict):
                    add(record.get("text"), (span.get("start_offset"), span.get("end_offset")), span.get("label"))
    return found, binding


def manual_texts(format: str, export: list):
    """The texts an accepted manual task reviewed: where a token may be O (module docstring); None: any text."""
    if format != "prodigy":
        return None
    texts = set()
    for record in export if isinstance(export, list) else []:
        if not isinstance(record, dict) or record.get("answer") != "accept":
            continue
        view = record.get("view_id") if record.get("_view_id") == "review" else record.get("_view_id")
        spans = record.get("spans") if isinstance(record.get("spans"), list) else []
        teach = any(isinstance(span, dict) and "answer" in span and "score" in span for span in spans)
        if view in ("ner_manual", "spans_manual") or (view is None and not teach):
            texts.add(record.get("text"))
    return texts


def stripped(text: str, start, end):
    if not (isinstance(start, int) and isinstance(end, int)):
        return None
    while start < end and text[start : start + 1].isspace():
        start += 1
    while end > start and text[end - 1 : end].isspace():
        end -= 1
    return start, end


def check_docs(docs, recorded, where: str, reviewable=None) -> None:
    """Every entity a recorded accepted span of its text, no O token under a
    binding one, O tokens only in ``reviewable`` texts (None: any)."""
    spans_by_text, binding = recorded
    for doc in docs:
        accepted = [(stripped(doc.text, s, e), label) for s, e, label in spans_by_text.get(doc.text, [])]
        for ent in doc.ents:
            assert ((ent.start_char, ent.end_char), ent.label_) in accepted, (where, doc.text, ent)
        for token in doc:
            if token.ent_iob_ != "O":
                continue
            assert reviewable is None or doc.text in reviewable, (where, doc.text, "O never reviewed", token.i)
            for s, e, label in binding.get(doc.text, []):
                offsets = stripped(doc.text, s, e)
                if offsets is not None and offsets[0] < token.idx + len(token) and token.idx < offsets[1]:
                    raise AssertionError((where, doc.text, token.i, offsets, label))


BASES = {  # case: (format, export, what the import is told)
    "prodigy": ("prodigy", prodigy_export, ImportOptions()),
    "label-studio": ("label-studio", label_studio_export, ImportOptions()),
    "label-studio majority utf-16": (
        "label-studio",
        label_studio_majority_export,
        ImportOptions(annotators="majority", offsets="utf-16"),
    ),
    "doccano": ("doccano", doccano_export, ImportOptions()),
}


def oracle(case: str, export: list):
    format, _, options = BASES[case]
    recorded = recorded_spans(format, export, options.offsets == "utf-16", options.annotators == "majority")
    return recorded, manual_texts(format, export)


def write(format: str, export: list, path) -> None:
    if format == "label-studio":
        path.write_text(json.dumps(export), encoding="utf8")
    else:
        path.write_text("".join(json.dumps(record) + "\n" for record in export), encoding="utf8")


@pytest.mark.parametrize(
    "case, texts, with_entities",
    [("prodigy", 5, 4), ("label-studio", 2, 2), ("label-studio majority utf-16", 3, 3), ("doccano", 3, 3)],
)
def test_the_unmutated_exports_read(tmp_path, case, texts, with_entities):
    format, base, options = BASES[case]
    export = base()
    path = tmp_path / "export"
    write(format, export, path)
    docs = read_annotations(format, path, NLP, options=options)
    assert len(docs) == texts and sum(bool(doc.ents) for doc in docs) == with_entities
    recorded, reviewable = oracle(case, export)
    check_docs(docs, recorded, "unmutated", reviewable)
    by_text = {doc.text: " ".join(t.ent_iob_ or "-" for t in doc) for doc in docs}
    if case == "prodigy":  # the teach line reviews no token; the manual task without spans all of its own
        assert by_text[KATHERINE] == "B I - - - - - B -" and by_text[RAIN] == "O O O O O O O O"
    if case == "label-studio majority utf-16":  # London tied; Bob and Paris at their UTF-16 offsets
        assert by_text[ADA] == "B I O O O O - O" and by_text[EMOJI] == "O O B O O O B O"


@pytest.mark.parametrize("case", list(BASES))
def test_mutated_exports_give_a_clear_error_or_exactly_the_recorded_labels(tmp_path, case):
    format, base, options = BASES[case]
    rng = random.Random(45)
    outcomes = {"error": 0, "docs": 0}
    path = tmp_path / "export"
    for trial in range(300):
        export = mutated(base(), rng)
        write(format, export, path)
        try:
            docs = read_annotations(format, path, NLP, options=options)
        except ValueError as error:
            assert str(error).strip(), trial
            outcomes["error"] += 1
            continue
        recorded, reviewable = oracle(case, export)
        check_docs(docs, recorded, f"trial {trial}: {json.dumps(export)[:2000]}", reviewable)
        outcomes["docs"] += 1
    assert outcomes["error"] > 20 and outcomes["docs"] > 20, outcomes  # both kinds of outcome were exercised
