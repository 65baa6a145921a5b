"""Prodigy's task format, read and written: its JSON lines (``prodigy
db-out``, the ``review`` recipe's output, and ``python -m spacy_depner
rank``'s records once answered; a file or the records themselves) read as
``Task``s (``annotation_tasks.py``), and ``rank``'s records written as
Prodigy tasks (``prodigy_task``).

A line is ``{"text", "tokens": [{"text", "start", "end", "id", "ws"}],
"spans": [{"start", "end", "token_start", "token_end", "label", "answer"}],
"answer", "_view_id", "_input_hash", "_task_hash", "_annotator_id",
"_session_id", "meta"}``, ``token_end`` inclusive (Prodigy's "Annotation task
formats" and "ner" interface docs). What Prodigy's documentation says and
this reader does with it:

* **Task kind.** ``_view_id`` "ner" is a binary task (``ner.teach``: one
  proposed span, accepted or rejected; no other token is reviewed);
  "ner_manual" and "spans_manual" are manual tasks (their spans are the whole
  annotation of the text, or of its region). The ``review`` recipe saves
  ``"_view_id": "review"`` with the reviewed interface in ``view_id`` (or in
  its ``versions``); the reviewed answer and spans are the task's own, the
  ``versions`` and ``sessions`` are not read. A line **without** ``_view_id``
  (older versions, exported datasets) takes ``--prodigy-kind``; with
  ``auto`` (the default) its content decides, in this order: a ``rank``
  record's ``meta.unit`` ("span" binary, "region" and "doc" manual); a
  ``region`` or ``region_chars`` makes it manual; a span with its own
  ``answer`` and a model's ``score`` makes it binary (``ner.teach``'s
  per-span decisions, however many spans; ``ner_manual`` writes neither); a
  task of exactly one span without ``token_start``/``token_end`` is binary
  (the ``ner_manual`` interface writes token indices for every span it
  records; ``ner.teach`` did not); one span with token indices and a
  model's ``score`` or ``rank`` is ambiguous (an error that asks for
  ``--prodigy-kind``); any other task is manual.
* **No spans.** An accepted manual task without ``"spans"`` (Prodigy leaves
  the key out where the annotator marked nothing) is a text with no entity.
  A binary task without them decides nothing, and a task with a
  ``"label"`` or ``"options"`` and no spans is another interface's
  (textcat, choice): both are errors.
* **Per-span answers.** A span's own ``answer`` (review and choice flows)
  decides that span: "reject" makes it a rejected span, "accept" an accepted
  one, "ignore" drops it; a span without one takes the task's answer.
* **Tokens.** ``ws`` missing: derived from the offsets (``start``/``end``
  of a token and of the next; the text between two tokens is nothing or one
  space). A last token with ``ws: true`` at the end of the text keeps no
  trailing space.
* **Input.** Tasks on one input (``_input_hash``, else the same text) are
  one Doc; ``_task_hash`` is the task id, ``_annotator_id`` (else
  ``_session_id``) the annotator.

Writing (``rank --format prodigy``, https://prodi.gy/docs/api-interfaces): a
``span`` record is a binary ``ner`` task (``"_view_id": "ner"``, as
``ner.teach`` streams it: one proposed span, its probability as ``score``,
accept or reject), a ``doc`` or ``region`` record a ``ner_manual`` one (its
region as ``region`` and ``region_chars``, at the top level and in
``meta``); every task has ``_input_hash`` (of its text: tasks on one text
share it) and ``_task_hash`` (of the text, the spans and the region), signed
32-bit integers as Prodigy's are (not Prodigy's own values: Prodigy keeps
hashes it is given).
"""

import hashlib
import json
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .annotation_tasks import (
    ANSWERS,
    ImportOptions,
    Task,
    TaskSpan,
    char_span,
    count,
    has_region,
    items,
    mapping,
    refuse_other_format,
    span_label,
    task_regions,
    task_text,
)
from .export_files import json_line_records

MANUAL_VIEWS = ("ner_manual", "spans_manual")
BINARY_VIEWS = ("ner",)
REVIEW_VIEW = "review"


def _token_offsets(token: dict, where: str, i: int) -> Tuple[Optional[int], Optional[int]]:
    start, end = token.get("start"), token.get("end")
    if start is None or end is None:
        return None, None
    return count(start, where, f"token {i}'s start"), count(end, where, f"token {i}'s end")


def prodigy_tokens(tokens, text: str, where: str) -> Tuple[List[str], List[bool]]:
    """The words and spaces of a Prodigy task's ``tokens`` (module
    docstring); tokens that do not spell ``text`` are a ValueError naming the
    first token that does not and what the text has there."""
    tokens = items(tokens, where, '"tokens"')
    words, spaces, position = [], [], 0
    for i, token in enumerate(tokens):
        token = mapping(token, where, f"token {i}")
        word, space = token.get("text"), token.get("ws")
        if not isinstance(word, str) or not word or (space is not None and not isinstance(space, bool)):
            raise ValueError(f'{where}: token {i} {token!r} needs a non-empty "text" and a true/false "ws"')
        start, end = _token_offsets(token, where, i)
        if start is not None and (start, end) != (position, position + len(word)):
            raise ValueError(
                f"{where}: token {i} {word!r} says characters {start}..{end}, but the tokens before it spell the "
                f"text up to character {position}; fix its start and end"
            )
        if text[position : position + len(word)] != word:
            raise ValueError(
                f"{where}: token {i} {word!r} is not the text at character {position}, which has "
                f"{text[position : position + len(word)]!r}: the tokens must spell the text; fix the tokens or "
                "drop them to tokenise the text again"
            )
        after = position + len(word)
        if space is None:
            if start is None:
                raise ValueError(f'{where}: token {i} {word!r} has no "ws" and no "start"/"end" to derive it from')
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            next_start = following.get("start") if isinstance(following, dict) else len(text)
            if not isinstance(next_start, int) or text[after:next_start] not in ("", " "):
                raise ValueError(
                    f'{where}: token {i} {word!r} has no "ws", and the text between it and the next token '
                    f"({text[after:next_start] if isinstance(next_start, int) else next_start!r}) is not "
                    'nothing or one space; give each token its "ws"'
                )
            space = next_start > after
        elif space and after == len(text) and i == len(tokens) - 1:
            space = False  # a trailing space at the end of the text: nothing follows
        elif space and text[after : after + 1] != " ":
            raise ValueError(
                f"{where}: token {i} {word!r} has ws true, but the text after it (character {after}) is "
                f"{text[after : after + 1]!r}, not a space; fix its ws"
            )
        words.append(word)
        spaces.append(space)
        position = after + space
    if position != len(text):
        raise ValueError(f"{where}: the tokens end at character {position} of the {len(text)} of the text")
    return words, spaces


def prodigy_span(span, where: str) -> TaskSpan:
    """A span of a Prodigy task: character offsets, token indices
    (``token_end`` inclusive, made exclusive), or both; its own answer."""
    span = mapping(span, where, "a span")
    label = span_label(span.get("label"), where)
    answer = span.get("answer")
    if answer is not None and answer not in ANSWERS:
        raise ValueError(f"{where}: span {span!r} has answer {answer!r}, not one of {', '.join(ANSWERS)}")
    chars = [span.get(key) for key in ("start", "end")]
    tokens = [span.get(key) for key in ("token_start", "token_end")]
    if None in chars and None in tokens:
        raise ValueError(f"{where}: span {span!r} has neither start and end nor token_start and token_end")
    if None not in chars:
        result = char_span(label, *chars, where, span.get("text"), answer)
    else:
        result = TaskSpan(label, answer=answer)
    if None not in tokens:
        first, last = count(tokens[0], where, "token_start"), count(tokens[1], where, "token_end")
        if first > last:
            raise ValueError(f"{where}: span {label!r} has token_start {first} after token_end {last} (inclusive)")
        result.token_start, result.token_end = first, last + 1
    return result


def reviewed_view(record: dict) -> Optional[str]:
    """The interface a task was annotated in: ``_view_id``, or for the
    ``review`` recipe's output the reviewed interface (``view_id``, else
    the versions' ``_view_id``)."""
    view = record.get("_view_id")
    if view != REVIEW_VIEW:
        return view
    if record.get("view_id") is not None:
        return record["view_id"]
    versions = record.get("versions") if isinstance(record.get("versions"), list) else []
    views = {version.get("_view_id") for version in versions if isinstance(version, dict)} - {None}
    return views.pop() if len(views) == 1 else None


def is_binary(record: dict, spans: List[TaskSpan], where: str, stated: str) -> bool:
    """Whether a Prodigy task is binary (module docstring's rule)."""
    view = reviewed_view(record)
    if view in BINARY_VIEWS:
        return True
    if view in MANUAL_VIEWS:
        return False
    if view is not None:
        raise ValueError(
            f"{where}: _view_id {view!r} is not an entity task: give tasks of "
            f"{', '.join(MANUAL_VIEWS + BINARY_VIEWS)} (or their review)"
        )
    if record.get("_view_id") == REVIEW_VIEW:
        raise ValueError(f'{where}: a review task without "view_id" or versions of one interface; add its view_id')
    if stated != "auto":
        return stated == "binary"
    meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
    if meta.get("unit") in ("span", "region", "doc"):
        return meta["unit"] == "span"
    if has_region(record):
        return False
    raw_spans = record.get("spans") or []
    if any(isinstance(raw, dict) and "answer" in raw and "score" in raw for raw in raw_spans):
        return True
    if len(spans) != 1:
        return False
    (raw,) = raw_spans
    if raw.get("token_start") is None:
        return True
    if "score" in raw or "rank" in raw:
        raise ValueError(
            f"{where}: a task without _view_id whose one span has token indices and a model's score: it may be a "
            "binary decision (ner.teach) or a manual annotation; state which with --prodigy-kind binary or manual"
        )
    return False


def refuse_without_spans(record: dict, where: str, binary: bool) -> None:
    """A ValueError for a task without ``"spans"`` that is not a manual
    task's text with no entity (module docstring)."""
    other = [key for key in ("label", "options") if key in record]
    if other:
        raise ValueError(
            f'{where}: a textcat or choice task (its "{other[0]}"), not an entity task: import the tasks of '
            f"{', '.join(MANUAL_VIEWS + BINARY_VIEWS)} (or their review)"
        )
    if binary:
        raise ValueError(
            f'{where}: a binary (ner) task without "spans" decides nothing; give it its proposed span, or drop the line'
        )


def prodigy_tasks(source, options: Optional[ImportOptions] = None) -> Iterator[Task]:
    """The tasks of a Prodigy JSON-lines export, a file or its records
    (module docstring); a task without an answer (e.g. an unreviewed
    ``rank`` record) is an error."""
    options = ImportOptions() if options is None else options
    for where, value in json_line_records(source, "Prodigy"):
        refuse_other_format(value, where, "Prodigy")
        record = mapping(value, where, "a Prodigy task")
        answer = record.get("answer")
        if answer not in ANSWERS:
            raise ValueError(
                f"{where}: answer {answer!r} is not one of {', '.join(ANSWERS)}; annotate the task "
                '(a rank record has none until then) or set its "answer"'
            )
        if answer == "ignore":
            yield Task(where, "", answer)  # of any interface, whatever it holds
            continue
        spans = [prodigy_span(span, where) for span in items(record.get("spans", []), where, '"spans"')]
        binary = is_binary(record, spans, where, options.prodigy_kind)
        if "spans" not in record:
            refuse_without_spans(record, where, binary)
        text = task_text(record.get("text"), where, '"text"')
        words, spaces = prodigy_tokens(record["tokens"], text, where) if "tokens" in record else (None, None)
        region, region_chars = task_regions(record, where)
        meta = record.get("meta")
        yield Task(
            where,
            text,
            answer,
            spans,
            words,
            spaces,
            region,
            region_chars,
            binary=binary,
            group=f"input hash:{record['_input_hash']}" if "_input_hash" in record else None,
            meta=meta if isinstance(meta, dict) else None,
            task_id=record.get("_task_hash"),
            annotator=record.get("_annotator_id", record.get("_session_id")),
        )


def signed_hash(value: Any) -> int:
    """A signed 32-bit integer hash of ``value``'s canonical JSON (the range of Prodigy's hashes)."""
    payload = json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf8")
    return int.from_bytes(hashlib.blake2b(payload, digest_size=4).digest(), "big", signed=True)


def prodigy_task(record: Dict[str, Any]) -> Dict[str, Any]:
    """A ``rank`` record as a Prodigy task (module docstring): a span task
    stays a binary ``ner`` task, the others become ``ner_manual`` tasks."""
    input_hash = signed_hash({"text": record["text"]})
    view = record.get("_view_id", "ner_manual")
    spans = [[span["start"], span["end"], span["label"]] for span in record["spans"]]
    task_hash = signed_hash({"input": input_hash, "spans": spans, "region": record.get("region_chars"), "view": view})
    return {**record, "_input_hash": input_hash, "_task_hash": task_hash, "_view_id": view}
