"""Annotation-tool exports (Prodigy, Label Studio, doccano: read as tasks by
``annotation_tasks.py``) as spaCy Docs that the package's components train
on, and a DocBin of them.

Tokens: a task's own tokens (Prodigy, ``rank`` records), else ``nlp``'s
tokenizer (default ``spacy.blank(lang)``); every span must fall on token
boundaries. A manual task (Prodigy ner_manual / spans_manual, Label Studio,
doccano) makes one Doc; the binary tasks on one text (Prodigy ner.teach,
grouped by ``_input_hash``, else by text) make one Doc together. An ignored
task makes none; a rejected manual task rejects all its spans and reviews
no token.

Two modes:

* ``flat``: accepted spans are ``doc.ents``; the other tokens of the
  reviewed regions are O, every token outside them is missing
  (``ent_iob_ == ""``, what ``missing_entity_tokens`` reads). A binary Doc
  has its accepted spans as entities and every other token missing.
* ``nested``: accepted spans are ``doc.spans[spans_key]``, the reviewed
  regions ``doc.spans[annotated_key]`` (the nested component's
  ``annotated_key``; ``unannotated_tokens`` reads it). A binary Doc marks no
  region annotated: its accepted spans are accepted mentions on an otherwise
  unannotated Doc, which ``nested_ner`` trains on exactly (the analyses that
  hold them: ``structures.accepted``).

In both modes rejected spans are ``doc.spans[incorrect_spans_key]`` (the
convention of spaCy's ``ner`` ``incorrect_spans_key``), and a task's
``meta`` is ``doc.user_data["meta"]``.
"""

from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span

from .annotation_tasks import Task, TaskSpan, doccano_tasks, label_studio_tasks, prodigy_tasks

FORMATS = {"prodigy": prodigy_tasks, "label-studio": label_studio_tasks, "doccano": doccano_tasks}
MODES = ("flat", "nested")


@dataclass
class ImportCounts:
    """What an import read: tasks, Docs made, accepted and rejected spans,
    ignored tasks, and tokens in reviewed regions (binary tasks review none)."""

    tasks: int = 0
    docs: int = 0
    accepted: int = 0
    rejected: int = 0
    ignored: int = 0
    tokens_reviewed: int = 0

    def as_dict(self) -> Dict[str, int]:
        return dict(self.__dict__)


@dataclass
class SpanKeys:
    """The span groups written: accepted spans (nested mode), reviewed
    regions (nested mode) and rejected spans (both modes)."""

    spans_key: str = "nested_ner"
    annotated_key: str = "annotated"
    incorrect_spans_key: str = "incorrect_spans"


def task_doc(task: Task, nlp: Language) -> Doc:
    """The Doc of a task's text (its own tokens, else ``nlp``'s tokenizer), its ``meta`` in ``user_data``."""
    doc = Doc(nlp.vocab, words=task.words, spaces=task.spaces) if task.words is not None else nlp.make_doc(task.text)
    if task.meta is not None:
        doc.user_data["meta"] = task.meta
    return doc


def _describe(span: Span) -> str:
    return f"{span.text!r} ({span.label_}, tokens {span.start}..{span.end - 1}, characters {span.start_char}..{span.end_char})"


def aligned_span(doc: Doc, span: TaskSpan, where: str) -> Span:
    """``span`` as a Span of ``doc``: by its token indices if it has them
    (its character offsets, if any, must be theirs), else by its character
    offsets, which must fall on token boundaries; else a ValueError naming
    ``where``, the span and the fix."""
    if span.token_start is not None:
        if span.token_end > len(doc):
            raise ValueError(
                f"{where}: span {span.label!r} at tokens {span.token_start}..{span.token_end - 1} lies outside the "
                f"{len(doc)} tokens of the task; fix token_start and token_end"
            )
        result = Span(doc, span.token_start, span.token_end, label=span.label)
        if span.start is not None and (span.start, span.end) != (result.start_char, result.end_char):
            raise ValueError(
                f"{where}: span {span.label!r} at characters {span.start}..{span.end} is not its tokens "
                f"{_describe(result)}; fix the offsets or the token indices"
            )
    else:
        if span.end > len(doc.text):
            raise ValueError(
                f"{where}: span {span.label!r} at characters {span.start}..{span.end} lies outside the text of "
                f"{len(doc.text)} characters; fix the offsets"
            )
        result = doc.char_span(span.start, span.end, label=span.label, alignment_mode="strict")
        if result is None:
            tokens = doc.char_span(span.start, span.end, alignment_mode="expand")
            raise ValueError(
                f"{where}: span {doc.text[span.start : span.end]!r} ({span.label}, characters {span.start}..{span.end}) "
                f"does not fall on token boundaries (the tokens around it: {[t.text for t in tokens]}); re-tokenise with "
                "the pipeline's tokenizer (--model) or fix the offsets"
            )
    if span.text is not None and span.text != result.text:
        raise ValueError(
            f"{where}: span text {span.text!r} is not the text at its place, {_describe(result)}; fix the offsets"
        )
    return result


def reviewed_regions(doc: Doc, task: Task) -> List[Span]:
    """The reviewed regions of an accepted manual task: its ``region``, else the whole Doc."""
    if task.region is None:
        return [doc[:]]
    start, end = task.region
    if end > len(doc):
        raise ValueError(
            f"{task.where}: region [{start}, {end}) lies outside the {len(doc)} tokens of the task; "
            "fix the region (token indices, end exclusive)"
        )
    return [doc[start:end]]


def unique_spans(spans: Iterable[Span]) -> List[Span]:
    """``spans`` with each (start, end, label) once, in order."""
    kept: Dict = {}
    for span in spans:
        kept.setdefault((span.start, span.end, span.label_), span)
    return list(kept.values())


def check_flat(spans: List[Span], where: str) -> None:
    """A ValueError naming two of ``spans`` that overlap, if two do."""
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    for before, after in zip(ordered, ordered[1:]):
        if after.start < before.end:
            raise ValueError(
                f"{where}: the spans {_describe(before)} and {_describe(after)} overlap, and doc.ents holds no "
                "overlapping entities: import with --mode nested (span groups allow them) or fix the annotation"
            )


def unreviewed_stretches(doc: Doc, regions: List[Span]) -> List[Span]:
    """The stretches of ``doc`` outside every one of ``regions`` (disjoint, in order)."""
    stretches, position = [], 0
    for region in sorted(regions, key=lambda s: s.start):
        if region.start > position:
            stretches.append(doc[position : region.start])
        position = max(position, region.end)
    return stretches + ([doc[position:]] if position < len(doc) else [])


def annotate(doc: Doc, accepted, rejected, regions, where: str, mode: str, keys: SpanKeys, binary: bool) -> Doc:
    """Write the decisions into ``doc`` as ``mode`` says (module docstring)."""
    if mode == "flat":
        check_flat(accepted, where)
        if binary:
            doc.set_ents(accepted, default="missing")
        else:
            doc.set_ents(accepted, missing=unreviewed_stretches(doc, regions), default="outside")
    else:
        doc.spans[keys.spans_key] = accepted
        doc.spans[keys.annotated_key] = regions
    doc.spans[keys.incorrect_spans_key] = rejected
    return doc


def manual_doc(task: Task, nlp: Language, mode: str, keys: SpanKeys, counts: ImportCounts) -> Doc:
    """The Doc of an accepted or rejected manual task."""
    doc = task_doc(task, nlp)
    spans = unique_spans(aligned_span(doc, span, task.where) for span in task.spans)
    accepted, rejected = (spans, []) if task.answer == "accept" else ([], spans)
    regions = reviewed_regions(doc, task) if task.answer == "accept" else []
    for span in accepted:
        if not any(region.start <= span.start and span.end <= region.end for region in regions):
            raise ValueError(
                f"{task.where}: span {_describe(span)} lies outside the reviewed region {task.region}; "
                "widen the region or drop the span"
            )
    counts.accepted += len(accepted)
    counts.rejected += len(rejected)
    counts.tokens_reviewed += sum(len(region) for region in regions)
    return annotate(doc, accepted, rejected, regions, task.where, mode, keys, binary=False)


def binary_doc(tasks: List[Task], nlp: Language, mode: str, keys: SpanKeys, counts: ImportCounts) -> Doc:
    """The Doc of the answered binary tasks on one text: the decision on each span."""
    first = tasks[0]
    doc = task_doc(first, nlp)
    decisions = {}
    for task in tasks:
        if task.text != first.text or (task.words is not None and (task.words, task.spaces) != doc_words(doc)):
            raise ValueError(
                f"{task.where}: the task shares its _input_hash (or, without one, its text) with {first.where}, "
                "but not its text and tokens; give the tasks of one text the same text and tokens"
            )
        for span in (aligned_span(doc, span, task.where) for span in task.spans):
            key = (span.start, span.end, span.label_)
            if decisions.get(key, (task.answer,))[0] != task.answer:
                raise ValueError(
                    f"{task.where}: span {_describe(span)} is {task.answer}ed here and {decisions[key][0]}ed at "
                    f"{decisions[key][1]}; drop one of the two answers"
                )
            decisions[key] = (task.answer, task.where, span)
    accepted = [span for answer, _, span in decisions.values() if answer == "accept"]
    rejected = [span for answer, _, span in decisions.values() if answer == "reject"]
    counts.accepted += len(accepted)
    counts.rejected += len(rejected)
    return annotate(doc, accepted, rejected, [], first.where, mode, keys, binary=True)


def doc_words(doc: Doc):
    """The words and spaces of ``doc``."""
    return [t.text for t in doc], [bool(t.whitespace_) for t in doc]


def tasks_to_docs(
    tasks: Iterable[Task],
    nlp: Language,
    mode: str = "flat",
    keys: Optional[SpanKeys] = None,
    counts: Optional[ImportCounts] = None,
) -> List[Doc]:
    """The Docs of ``tasks`` (module docstring), in the order of each Doc's
    first task, the span groups named by ``keys`` (default ``SpanKeys()``);
    ``counts``, if given, counts them."""
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}: use one of {', '.join(MODES)}")
    keys = SpanKeys() if keys is None else keys
    counts = ImportCounts() if counts is None else counts
    made: List = []
    groups: Dict[str, List[Task]] = {}
    for task in tasks:
        counts.tasks += 1
        if task.answer == "ignore":
            counts.ignored += 1
        elif not task.binary:
            made.append(manual_doc(task, nlp, mode, keys, counts))
        elif task.group in groups:
            groups[task.group].append(task)
        else:
            groups[task.group] = [task]
            made.append(groups[task.group])
    docs = [item if isinstance(item, Doc) else binary_doc(item, nlp, mode, keys, counts) for item in made]
    counts.docs += len(docs)
    return docs


def read_annotations(
    format: str,
    path,
    nlp: Optional[Language] = None,
    *,
    lang: str = "en",
    mode: str = "flat",
    spans_key: str = "nested_ner",
    annotated_key: str = "annotated",
    incorrect_spans_key: str = "incorrect_spans",
    counts: Optional[ImportCounts] = None,
) -> List[Doc]:
    """The Docs of the export ``path`` in ``format`` (prodigy, label-studio,
    doccano), tokenised by ``nlp`` where a task has no tokens (default
    ``spacy.blank(lang)``), in ``mode`` (flat or nested) with the span
    groups named; ``counts``, if given, counts what was read."""
    if format not in FORMATS:
        raise ValueError(f"Unknown annotation format {format!r}: use one of {', '.join(FORMATS)}")
    if nlp is None:
        try:
            nlp = spacy.blank(lang)
        except ImportError:
            raise ValueError(f"spaCy has no language {lang!r}: give a language code such as en or de") from None
    keys = SpanKeys(spans_key, annotated_key, incorrect_spans_key)
    return tasks_to_docs(FORMATS[format](path), nlp, mode, keys, counts)


def read_prodigy(path, nlp: Optional[Language] = None, **options) -> List[Doc]:
    """``read_annotations`` of a Prodigy JSON-lines export (or answered ``rank`` records)."""
    return read_annotations("prodigy", path, nlp, **options)


def read_label_studio(path, nlp: Optional[Language] = None, **options) -> List[Doc]:
    """``read_annotations`` of a Label Studio JSON export."""
    return read_annotations("label-studio", path, nlp, **options)


def read_doccano(path, nlp: Optional[Language] = None, **options) -> List[Doc]:
    """``read_annotations`` of a doccano JSON-lines export."""
    return read_annotations("doccano", path, nlp, **options)


def write_annotation_docbin(docs: Iterable[Doc], output) -> None:
    """Write ``docs`` with their user data (the tasks' meta; DocBin reads its
    lists back as tuples) to the DocBin file ``output``."""
    DocBin(store_user_data=True, docs=docs).to_disk(output)
