"""Annotation-tool exports read as ``Task``s: what each task of an export
says (its text, tokens, spans, answer, reviewed region), before any Doc is
made (``annotation_tools.py`` makes them).

* Prodigy JSON lines (``prodigy db-out``, and the task records of
  ``python -m spacy_depner rank`` once answered): ``{"text", "tokens":
  [{"text", "ws", ...}], "spans": [{"start", "end", "token_start",
  "token_end", "label"}], "answer", "_view_id", "_input_hash", "meta"}``,
  ``token_end`` inclusive. ``_view_id`` "ner" is a binary task (ner.teach:
  one span, accepted or rejected); "ner_manual", "spans_manual" or none is a
  manual task (its spans are the whole annotation of the text).
* Label Studio's JSON export: one list of tasks ``{"id", "data": {"text"},
  "annotations": [{"result": [{"type": "labels", "value": {"start", "end",
  "text", "labels"}}], "was_cancelled"}], "predictions"}``: the last
  annotation not cancelled is the task's (a task without one is ignored);
  predictions are not read.
* doccano JSON lines: ``{"text", "label": [[start, end, "LABEL"], ...]}``, or
  ``{"text", "entities": [{"start_offset", "end_offset", "label"}]}``.

Character offsets count Unicode characters, end exclusive. A task may
cover a region of its text: ``"region": [token_start, token_end_exclusive]``
at the top level or in ``meta`` (Prodigy, doccano), or in ``data`` (Label
Studio). Every error names the task ("FILE:LINE", or "FILE task N" in a
Label Studio export) and the fix.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..util.text_lines import json_lines, readable_file

ANSWERS = ("accept", "reject", "ignore")
MANUAL_VIEWS = ("ner_manual", "spans_manual")
BINARY_VIEWS = ("ner",)


@dataclass
class TaskSpan:
    """One span of a task: its label and its place, as character offsets
    (``start``, ``end`` exclusive), token indices (``token_start``,
    ``token_end`` exclusive) or both; ``text`` as the tool wrote it, if it did."""

    label: str
    start: Optional[int] = None
    end: Optional[int] = None
    token_start: Optional[int] = None
    token_end: Optional[int] = None
    text: Optional[str] = None


@dataclass
class Task:
    """One task of an export: ``where`` it is ("FILE:LINE"), its ``text``,
    the ``answer`` (accept, reject or ignore), its spans, its own tokens
    (``words`` and ``spaces``, or None: the tokenizer's), the reviewed
    ``region`` [first, end) in tokens (None: the whole text), whether it is
    ``binary`` (a decision on its spans only), the ``group`` of binary tasks
    on one text, and its ``meta``."""

    where: str
    text: str
    answer: str
    spans: List[TaskSpan] = field(default_factory=list)
    words: Optional[List[str]] = None
    spaces: Optional[List[bool]] = None
    region: Optional[Tuple[int, int]] = None
    binary: bool = False
    group: Optional[str] = None
    meta: Optional[Dict[str, Any]] = None


def _mapping(value, where: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: {what} must be a JSON object, got {type(value).__name__} {str(value)[:60]!r}")
    return value


def _items(value, where: str, what: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{where}: {what} must be a JSON list, got {type(value).__name__} {str(value)[:60]!r}")
    return value


def _count(value, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: {what} must be a whole number from 0, got {value!r}")
    return value


def _text(value, where: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        found = "none" if value is None else repr(value)[:60]
        raise ValueError(
            f"{where}: the task has no text in {what} (found {found}); every task needs its non-empty text"
        )
    return value


def _label(value, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: span label {value!r} is not a label name; give every span its label")
    return value


def _region(value, where: str) -> Optional[Tuple[int, int]]:
    """[token_start, token_end_exclusive] as a pair, None for None."""
    if value is None:
        return None
    pair = _items(value, where, '"region"')
    if len(pair) != 2 or _count(pair[0], where, "a region start") >= _count(pair[1], where, "a region end"):
        raise ValueError(f"{where}: region {value!r} is not [token_start, token_end_exclusive] with start < end")
    return pair[0], pair[1]


def _char_span(label, start, end, where: str, text: Optional[str] = None) -> TaskSpan:
    start, end = _count(start, where, "a span start"), _count(end, where, "a span end")
    if start >= end:
        raise ValueError(f"{where}: span {label!r} at characters {start}..{end} is empty or reversed (start < end)")
    return TaskSpan(_label(label, where), start, end, text=text)


def prodigy_tokens(tokens, text: str, where: str) -> Tuple[List[str], List[bool]]:
    """The words and spaces of a Prodigy task's ``tokens``; tokens that do not
    spell ``text`` (their ``text`` each followed by a space where ``ws``) are
    a ValueError naming the first token that does not."""
    words, spaces, position = [], [], 0
    for i, token in enumerate(_items(tokens, where, '"tokens"')):
        token = _mapping(token, where, f"token {i}")
        word, space = token.get("text"), token.get("ws")
        if not isinstance(word, str) or not word or not isinstance(space, bool):
            raise ValueError(f'{where}: token {i} {token!r} needs a non-empty "text" and a true/false "ws"')
        if text[position : position + len(word)] != word or (
            space and text[position + len(word) : position + len(word) + 1] != " "
        ):
            raise ValueError(
                f"{where}: token {i} {word!r} (ws {space}) is not the text at character {position} "
                f"({text[position : position + len(word) + 1]!r}): the tokens must spell the text; "
                "fix the tokens or drop them to tokenise the text again"
            )
        words.append(word)
        spaces.append(space)
        position += len(word) + space
    if position != len(text):
        raise ValueError(f"{where}: the tokens end at character {position} of the {len(text)} of the text")
    return words, spaces


def prodigy_span(span, where: str) -> TaskSpan:
    """A span of a Prodigy task: character offsets, token indices
    (``token_end`` inclusive, made exclusive), or both."""
    span = _mapping(span, where, "a span")
    label = _label(span.get("label"), where)
    chars = [span.get(key) for key in ("start", "end")]
    tokens = [span.get(key) for key in ("token_start", "token_end")]
    if None in chars and None in tokens:
        raise ValueError(f"{where}: span {span!r} has neither start and end nor token_start and token_end")
    result = _char_span(label, *chars, where, span.get("text")) if None not in chars else TaskSpan(label)
    if None not in tokens:
        first, last = _count(tokens[0], where, "token_start"), _count(tokens[1], where, "token_end")
        if first > last:
            raise ValueError(f"{where}: span {label!r} has token_start {first} after token_end {last} (inclusive)")
        result.token_start, result.token_end = first, last + 1
    return result


def prodigy_tasks(path) -> Iterator[Task]:
    """The tasks of a Prodigy JSON-lines export (module docstring); a task
    without an answer (e.g. an unreviewed ``rank`` record) is an error."""
    for _, where, value in json_lines(path, "Prodigy"):
        record = _mapping(value, where, "a Prodigy task")
        answer, view = record.get("answer"), record.get("_view_id")
        if answer not in ANSWERS:
            raise ValueError(
                f"{where}: answer {answer!r} is not one of {', '.join(ANSWERS)}; annotate the task "
                '(a rank record has none until then) or set its "answer"'
            )
        if view is not None and view not in MANUAL_VIEWS + BINARY_VIEWS:
            raise ValueError(
                f"{where}: _view_id {view!r} is not an entity task: give tasks of {', '.join(MANUAL_VIEWS + BINARY_VIEWS)}"
            )
        if answer == "ignore":
            yield Task(where, "", answer)
            continue
        text = _text(record.get("text"), where, '"text"')
        words, spaces = prodigy_tokens(record["tokens"], text, where) if "tokens" in record else (None, None)
        meta = record.get("meta")
        region = record.get("region", meta.get("region") if isinstance(meta, dict) else None)
        yield Task(
            where,
            text,
            answer,
            [prodigy_span(span, where) for span in _items(record.get("spans", []), where, '"spans"')],
            words,
            spaces,
            _region(region, where),
            binary=view in BINARY_VIEWS,
            group=str(record["_input_hash"]) if "_input_hash" in record else text,
            meta=meta,
        )


def label_studio_export(path) -> list:
    """The list of tasks of a Label Studio JSON export file."""
    path = readable_file(path, "Label Studio JSON")
    try:
        export = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text; export the project again as JSON") from None
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}:{error.lineno}: not valid JSON ({error.msg} at column {error.colno}); "
            "a Label Studio export is one JSON list of tasks (Export > JSON)"
        ) from None
    return _items(export, str(path), "a Label Studio export (Export > JSON)")


def label_studio_spans(result, where: str) -> List[TaskSpan]:
    """The spans of an annotation's ``result`` (its ``labels`` items, one span per label)."""
    spans = []
    for item in _items(result, where, '"result"'):
        if _mapping(item, where, "a result item").get("type") != "labels":
            continue
        value = _mapping(item.get("value"), where, "a labels result's value")
        for label in _items(value.get("labels"), where, '"labels"'):
            spans.append(_char_span(label, value.get("start"), value.get("end"), where, value.get("text")))
    return spans


def label_studio_tasks(path) -> Iterator[Task]:
    """The tasks of a Label Studio JSON export (module docstring): accepted,
    or ignored when every annotation was cancelled or there is none."""
    for index, record in enumerate(label_studio_export(path), start=1):
        record = _mapping(record, f"{path} task {index}", "a task")
        where = f"{path} task {index}" + (f" (id {record['id']})" if "id" in record else "")
        data = _mapping(record.get("data"), where, '"data"')
        annotations = [
            annotation
            for annotation in _items(record.get("annotations", []), where, '"annotations"')
            if not _mapping(annotation, where, "an annotation").get("was_cancelled")
        ]
        if not annotations:
            yield Task(where, "", "ignore")
            continue
        yield Task(
            where,
            _text(data.get("text"), where, '"data.text"'),
            "accept",
            label_studio_spans(annotations[-1].get("result", []), where),
            region=_region(data.get("region"), where),
            meta=record.get("meta") or data.get("meta"),
        )


def doccano_spans(record: dict, where: str) -> List[TaskSpan]:
    """The spans of a doccano record: ``entities`` objects or ``label`` triples."""
    if "entities" in record:
        spans = []
        for entity in _items(record["entities"], where, '"entities"'):
            entity = _mapping(entity, where, "an entity")
            spans.append(_char_span(entity.get("label"), entity.get("start_offset"), entity.get("end_offset"), where))
        return spans
    triples = _items(record.get("label", []), where, '"label"')
    if any(not isinstance(triple, list) or len(triple) != 3 for triple in triples):
        raise ValueError(
            f'{where}: "label" {triples!r} is not a list of [start, end, "LABEL"]: export a sequence-labelling project'
        )
    return [_char_span(label, start, end, where) for start, end, label in triples]


def doccano_tasks(path) -> Iterator[Task]:
    """The tasks of a doccano JSON-lines export (module docstring), all accepted."""
    for _, where, value in json_lines(path, "doccano"):
        record = _mapping(value, where, "a doccano record")
        meta = record.get("meta")
        region = record.get("region", meta.get("region") if isinstance(meta, dict) else None)
        text = _text(record.get("text"), where, '"text"')
        yield Task(where, text, "accept", doccano_spans(record, where), region=_region(region, where), meta=meta)
