"""What one task of an annotation tool's export says, before any Doc is made:
the ``Task`` and ``TaskSpan`` records that the readers of each tool
(``prodigy_format.py``, ``label_studio_format.py``, ``doccano_format.py``: each
tool's format, read and written, in one module) make and
``annotation_tools.py`` turns into Docs, the import options, the checks every
reader shares, and the rule of a task's reviewed region, read and written.

Character offsets count Unicode characters, end exclusive. A task may say
which part of its text was reviewed: ``"region_chars": [start_char,
end_char_exclusive]`` (character offsets of its own text, what survives any
re-tokenisation) or ``"region": [token_start, token_end_exclusive]``
(tokens), at the top level or in ``meta`` (Prodigy, doccano), or in ``data``
(Label Studio); with both, ``region_chars`` decides (the token region must
then match it where the task has its own tokens:
``annotation_alignment.reviewed_region``). Every error names the task ("FILE:LINE", or "FILE task N (id
ID)" in a Label Studio JSON export) and the fix.
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

ANSWERS = ("accept", "reject", "ignore")
PRODIGY_KINDS = ("auto", "binary", "manual")
ANNOTATOR_POLICIES = ("last", "first", "ground-truth", "each", "majority")
UNLABELLED_POLICIES = ("skip", "outside")
ALIGNMENT_MODES = ("strict", "contract", "expand")
OFFSET_UNITS = ("characters", "utf-16")


IMPORT_FIXES = {  # kind: (what it is for, the fix that import-annotations' options give)
    "strict": (
        "the spans off token boundaries",
        "re-tokenise with the pipeline's tokenizer (--model), snap the spans with --alignment-mode contract or "
        "expand, skip them with --skip-misaligned, or fix the offsets",
    ),
    "no-whole-token": (
        "the spans with no whole token inside",
        "snap the spans to the tokens they touch with --alignment-mode expand, re-tokenise with the pipeline's "
        "tokenizer (--model), skip them with --skip-misaligned, or fix the offsets",
    ),
    "utf-16": (
        "the spans whose offsets look like UTF-16 code units",
        "read the offsets as UTF-16 code units with --offsets utf-16, or skip these spans with --skip-misaligned",
    ),
    "overlap": ("overlapping spans", "import with --mode nested (span groups allow them) or fix the annotation"),
    "text-key": ("a text under another key", "give the key of the text with --text-key"),
    "controls": ("several Labels controls", "choose the NER one with --from-name (and --to-name)"),
}


class AdvisedError(ValueError):
    """An import error whose fix depends on the program that reads: its
    message is ``compose(fixes)`` with ``IMPORT_FIXES`` (import-annotations'
    options); ``advised(fixes)`` says it with another program's fixes for the
    same kinds (``serve``'s, which has other options)."""

    def __init__(self, compose: Callable[[Dict[str, Tuple[str, str]]], str]):
        self.compose = compose
        super().__init__(compose(IMPORT_FIXES))

    def advised(self, fixes: Dict[str, Tuple[str, str]]) -> str:
        return self.compose({**IMPORT_FIXES, **fixes})


@dataclass
class ImportOptions:
    """How to read what the export leaves open (the command's options):

    * ``prodigy_kind``: the kind of a Prodigy task without ``_view_id``:
      ``auto`` (told from its content, ``prodigy_format.py``), ``binary`` or ``manual``.
    * ``text_key``: the key of the text in a Label Studio task's ``data``.
    * ``from_name`` / ``to_name``: the Label Studio ``Labels`` control read
      (default: the only one in the export).
    * ``annotators``: of several Label Studio annotations of a task, keep the
      ``last``, the ``first``, the ``ground-truth`` one, ``each`` (one Doc
      each) or the ``majority`` (the spans more than half of them marked).
    * ``unlabelled``: a doccano record with no span: ``skip`` it (counted)
      or read it as reviewed with no entity (``outside``).
    * ``alignment_mode``: spaCy's ``Doc.char_span`` mode for character spans
      off token boundaries; ``skip_misaligned``: skip those spans (counted)
      instead of stopping at the end of the import with all of them listed.
    * ``offsets``: what a span's character offsets count: ``characters``
      (code points, as Python counts; Label Studio offsets whose ``text``
      shows them to be UTF-16 code units are converted) or ``utf-16`` (code
      units, what a browser counts: a character beyond U+FFFF is two).
    """

    prodigy_kind: str = "auto"
    text_key: str = "text"
    from_name: Optional[str] = None
    to_name: Optional[str] = None
    annotators: str = "last"
    unlabelled: str = "skip"
    alignment_mode: str = "strict"
    skip_misaligned: bool = False
    offsets: str = "characters"

    def __post_init__(self):
        for name, allowed in (
            ("offsets", OFFSET_UNITS),
            ("prodigy_kind", PRODIGY_KINDS),
            ("annotators", ANNOTATOR_POLICIES),
            ("unlabelled", UNLABELLED_POLICIES),
            ("alignment_mode", ALIGNMENT_MODES),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"Unknown {name} {getattr(self, name)!r}: use one of {', '.join(allowed)}")


@dataclass
class TaskSpan:
    """One span of a task: its label and its place, as character offsets
    (``start``, ``end`` exclusive), token indices (``token_start``,
    ``token_end`` exclusive) or both; ``text`` as the tool wrote it, if it
    did; its own ``answer`` (accept or reject; None: the task's); ``votes``,
    the annotators who marked it (a majority)."""

    label: str
    start: Optional[int] = None
    end: Optional[int] = None
    token_start: Optional[int] = None
    token_end: Optional[int] = None
    text: Optional[str] = None
    answer: Optional[str] = None
    votes: Optional[int] = None


@dataclass
class Task:
    """One task of an export: ``where`` it is ("FILE:LINE"), its ``text``,
    the ``answer`` (accept, reject or ignore), its spans, its own tokens
    (``words`` and ``spaces``, or None: the tokenizer's), the reviewed
    ``region`` [first, end) in tokens or ``region_chars`` [start, end) in
    characters (both None: the whole text), whether it is ``binary`` (a
    decision on its spans only, no token reviewed), the ``group`` of tasks on
    one input (one Doc), its ``meta`` and the tool's ``task_id`` and
    ``annotator``. A task with a ``skip`` reason makes nothing and is counted
    under that reason; ``also_skipped`` counts parts of it left out, by reason.
    ``new_record`` is False for the second and later Tasks of one record of
    the export (Label Studio's ``--annotators each``): one task read.
    ``undecided`` spans (annotators tied on them) leave the tokens they touch
    unreviewed."""

    where: str
    text: str
    answer: str
    spans: List[TaskSpan] = field(default_factory=list)
    words: Optional[List[str]] = None
    spaces: Optional[List[bool]] = None
    region: Optional[Tuple[int, int]] = None
    region_chars: Optional[Tuple[int, int]] = None
    binary: bool = False
    group: Optional[str] = None
    meta: Optional[Dict[str, Any]] = None
    task_id: Any = None
    annotator: Any = None
    skip: Optional[str] = None
    also_skipped: Dict[str, int] = field(default_factory=dict)
    new_record: bool = True
    undecided: List[TaskSpan] = field(default_factory=list)

    def __post_init__(self):
        if self.group is None:
            self.group = "text:" + self.text

    @property
    def place(self) -> str:
        """``where``, with the tool's task id where ``where`` does not name it."""
        if self.task_id is None or self.where.endswith(f"(id {self.task_id})"):
            return self.where
        return f"{self.where} (task id {self.task_id})"


def skipped(where: str, reason: str) -> Task:
    """A task that makes nothing, counted under ``reason``."""
    return Task(where, "", "ignore", skip=reason)


def mapping(value, where: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: {what} must be a JSON object, got {type(value).__name__} {str(value)[:60]!r}")
    return value


def items(value, where: str, what: str) -> list:
    if not isinstance(value, list):
        raise ValueError(f"{where}: {what} must be a JSON list, got {type(value).__name__} {str(value)[:60]!r}")
    return value


def count(value, where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{where}: {what} must be a whole number from 0, got {value!r}")
    return value


def task_text(value, where: str, what: str) -> str:
    if not isinstance(value, str) or not value:
        found = "none" if value is None else repr(value)[:60]
        raise ValueError(
            f"{where}: the task has no text in {what} (found {found}); every task needs its non-empty text"
        )
    return value


def span_label(value, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: span label {value!r} is not a label name; give every span its label")
    return value


def offset_pair(value, where: str, key: str, unit: str) -> Optional[Tuple[int, int]]:
    """``value`` [start, end_exclusive] (``unit``: tokens or characters) as a pair, None for None."""
    if value is None:
        return None
    pair = items(value, where, f'"{key}"')
    if len(pair) != 2 or count(pair[0], where, f"a {key} start") >= count(pair[1], where, f"a {key} end"):
        raise ValueError(f"{where}: {key} {value!r} is not [{unit}_start, {unit}_end_exclusive] with start < end")
    return pair[0], pair[1]


REGION_KEYS = ("region", "region_chars")  # the reviewed region in tokens, in characters


def task_regions(record: dict, where: str, inner: str = "meta"):
    """(region in tokens, region in characters) of a task: ``region`` and
    ``region_chars`` at the top level of ``record`` or in ``record[inner]``
    (``rank`` writes both; ``region_chars`` decides, ``annotation_alignment.reviewed_region``)."""
    nested = record.get(inner) if isinstance(record.get(inner), dict) else {}
    region = offset_pair(record.get("region", nested.get("region")), where, "region", "token")
    chars = offset_pair(record.get("region_chars", nested.get("region_chars")), where, "region_chars", "char")
    return region, chars


def has_region(record: dict, inner: str = "meta") -> bool:
    """Whether a task names a reviewed region (either key, where ``task_regions`` looks): it reviews that region only."""
    nested = record.get(inner) if isinstance(record.get(inner), dict) else {}
    return any(key in record or key in nested for key in REGION_KEYS)


def region_fields(record: dict) -> Dict[str, Any]:
    """The region keys a ``rank`` record has, as a tool's task carries them (read back by ``task_regions``)."""
    return {key: record[key] for key in REGION_KEYS if key in record}


def char_span(label, start, end, where: str, text: Optional[str] = None, answer=None) -> TaskSpan:
    start, end = count(start, where, "a span start"), count(end, where, "a span end")
    if start >= end:
        raise ValueError(f"{where}: span {label!r} at characters {start}..{end} is empty or reversed (start < end)")
    return TaskSpan(span_label(label, where), start, end, text=text, answer=answer)


PRODIGY_KEYS = ("_input_hash", "_task_hash", "_view_id", "tokens", "spans", "answer")
LABEL_STUDIO_KEYS = ("annotations", "predictions", "completions")
LABEL_STUDIO_MIN_KEYS = ("annotation_id", "lead_time")
DOCCANO_KEYS = ("label", "entities")


def looks_like(record) -> Optional[str]:
    """The format a record's keys plainly belong to: "Label Studio" (``data``
    with ``annotations`` or ``predictions``), "Prodigy" (``spans``,
    ``tokens``, ``answer`` or an ``_input_hash``), "doccano" (``label`` or
    ``entities`` and none of Prodigy's keys), or None. A Label Studio
    JSON-MIN or CSV record (``annotation_id``, ``lead_time``) is Label Studio."""
    if not isinstance(record, dict):
        return None
    if "data" in record and any(key in record for key in LABEL_STUDIO_KEYS):
        return "Label Studio"
    if any(key in record for key in LABEL_STUDIO_MIN_KEYS):
        return "Label Studio"
    if any(key in record for key in PRODIGY_KEYS):
        return "Prodigy"
    if any(key in record for key in DOCCANO_KEYS):
        return "doccano"
    return None


FORMAT_ARGUMENTS = {"Label Studio": "label-studio", "Prodigy": "prodigy", "doccano": "doccano"}


def refuse_other_format(record, where: str, expected: str) -> None:
    """A ValueError when ``record`` is plainly another tool's than ``expected``, naming it."""
    found = looks_like(record)
    if found is not None and found != expected:
        keys = ", ".join(sorted(record)[:8])
        raise ValueError(
            f"{where}: this looks like a {found} record (keys {keys}), not {expected}: import it as "
            f"{FORMAT_ARGUMENTS[found]} (FORMAT argument)"
        )
