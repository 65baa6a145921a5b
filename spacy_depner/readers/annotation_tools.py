"""Annotation-tool exports (Prodigy, Label Studio, doccano: files or their
records, read as tasks by ``prodigy_format.py``, ``label_studio_format.py``
and ``doccano_format.py``) as spaCy Docs that the package's components train
on, and a DocBin of them.

**One Doc per input.** The tasks on one input (Prodigy's ``_input_hash``,
else the same text; Label Studio's ``--annotators each`` keeps one Doc per
annotation) make one Doc holding the union of their evidence: every span
accepted, every span rejected, every region reviewed. Evidence that
contradicts itself is a ValueError naming both places: a span accepted in one
task and rejected in another, an accepted span inside a region that another
task reviewed without it, two accepted spans that overlap in flat mode, or
two tasks of one input with different texts or tokens.

**Tokens.** A task's own tokens (Prodigy, ``rank`` records), else ``nlp``'s
tokenizer (default ``spacy.blank(lang)``). Spans are placed as
``annotation_alignment.py`` says (``--alignment-mode``, ``--offsets``);
every span off token boundaries is listed in one error at the end, with the
fixes that work for it, or skipped and counted with ``--skip-misaligned``
(an accepted span skipped in a manual task leaves that task's region
unreviewed: its tokens are not known to be outside an entity). A span that
is only whitespace is dropped and counted; its task's region stays reviewed.

**Evidence.** An accepted manual task (Prodigy ner_manual / spans_manual,
Label Studio, doccano) reviews its region (``region_chars``, ``region``, else
the whole text): its accepted spans are its entities, every other token of
the region is outside any, except the tokens its ``undecided`` spans touch
(annotators tied on them), which stay unreviewed. A binary task (Prodigy
ner.teach) reviews no token: it accepts or rejects its spans only. A
rejected manual task rejects its spans and reviews nothing. A span's own
answer overrides its task's.

Two modes:

* ``flat``: accepted spans are ``doc.ents``; the other tokens of the
  reviewed regions are O, every other token is missing (``ent_iob_ == ""``,
  what ``missing_entity_tokens`` reads).
* ``nested``: accepted spans are ``doc.spans[spans_key]``, the reviewed
  regions ``doc.spans[annotated_key]`` (disjoint; the nested component's
  ``annotated_key``, read by ``unannotated_tokens``). An accepted span outside
  them is an accepted mention, which ``nested_ner`` trains on exactly.

In both modes rejected spans are ``doc.spans[incorrect_spans_key]`` (spaCy's
``ner`` ``incorrect_spans_key`` convention). ``doc.user_data["meta"]`` is
the first task's meta with ``source`` ("FILE:LINE" or the Label Studio
task), ``task_id`` and ``annotator`` (where the tool gave them) of the first
task, and ``tasks`` (each one's source, task id and annotator) when several
tasks made the Doc; a key the tool's meta already has is kept, the import's
then named ``import_KEY``.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional

import spacy
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span

from .annotation_alignment import Misaligned, aligned_span, describe, reviewed_region
from .annotation_tasks import AdvisedError, ImportOptions, Task
from .doccano_format import doccano_tasks
from .label_studio_format import label_studio_tasks
from .prodigy_format import prodigy_tasks

FORMATS = {"prodigy": prodigy_tasks, "label-studio": label_studio_tasks, "doccano": doccano_tasks}
MODES = ("flat", "nested")
REGION_DROPPED = "region left unreviewed: one of its accepted spans misaligned"
WHITESPACE = "whitespace-only span"


@dataclass
class ImportCounts:
    """What an import read: tasks, Docs made, accepted and rejected spans,
    tasks the tool marked ignored (Prodigy's ignore, Label Studio's
    cancelled annotations), tokens in reviewed regions, and everything else
    left out, by reason."""

    tasks: int = 0
    docs: int = 0
    accepted: int = 0
    rejected: int = 0
    ignored: int = 0
    tokens_reviewed: int = 0
    skipped: Counter = field(default_factory=Counter)

    def as_dict(self) -> Dict:
        return {**self.__dict__, "skipped": dict(sorted(self.skipped.items()))}


@dataclass
class SpanKeys:
    """The span groups written: accepted spans (nested mode), reviewed
    regions (nested mode) and rejected spans (both modes)."""

    spans_key: str = "nested_ner"
    annotated_key: str = "annotated"
    incorrect_spans_key: str = "incorrect_spans"


def group_tokens(tasks: List[Task], nlp: Language) -> Doc:
    """The Doc of the text of ``tasks`` (one input): the tokens of the first
    task that has its own, else ``nlp``'s; tasks with another text or other
    tokens are a ValueError naming both."""
    base = next((task for task in tasks if task.words is not None), tasks[0])
    if base.words is not None:
        doc = Doc(nlp.vocab, words=base.words, spaces=base.spaces)
    else:
        doc = nlp.make_doc(base.text)
    for task in tasks:
        if task.text != base.text or (
            task.words is not None and (task.words, task.spaces) != (base.words, base.spaces)
        ):
            raise ValueError(
                f"{task.where}: the task shares its input (_input_hash, or else its text) with {base.where}, but "
                "not its text and tokens; give the tasks of one input the same text and tokens"
            )
    return doc


def doc_meta(tasks: List[Task]) -> dict:
    """The Doc's meta (module docstring); where the tool's meta has a key of
    the same name (``source`` is common), the import's goes under ``import_KEY``."""

    def ids(task: Task) -> dict:
        found = {"source": task.where, "task_id": task.task_id, "annotator": task.annotator}
        return {key: value for key, value in found.items() if value is not None}

    meta = dict(tasks[0].meta or {})
    own = ids(tasks[0])
    if len(tasks) > 1:
        own["tasks"] = [ids(task) for task in tasks]
    for key, value in own.items():
        meta[f"import_{key}" if key in meta else key] = value
    return meta


def merged_regions(doc: Doc, regions: List[Span]) -> List[Span]:
    """``regions`` joined where they overlap or touch: disjoint, in order."""
    merged: List[List[int]] = []
    for region in sorted(regions, key=lambda s: s.start):
        if merged and region.start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], region.end)
        else:
            merged.append([region.start, region.end])
    return [doc[start:end] for start, end in merged]


def uncovered_stretches(doc: Doc, spans: List[Span], within: Optional[Span] = None) -> List[Span]:
    """The stretches of ``within`` (default: all of ``doc``) outside every one of ``spans`` (disjoint, in order)."""
    within = doc[:] if within is None else within
    stretches, position = [], within.start
    for span in sorted(spans, key=lambda s: s.start):
        if span.start > position:
            stretches.append(doc[position : min(span.start, within.end)])
        position = max(position, span.end)
    return stretches + ([doc[position : within.end]] if position < within.end else [])


def check_flat(accepted: List, where: Dict) -> None:
    """A ValueError naming two accepted spans that overlap, and where each was accepted, if two do."""
    ordered = sorted(accepted, key=lambda s: (s.start, s.end))
    for before, after in zip(ordered, ordered[1:]):
        if after.start < before.end:
            places = {where[before], where[after]}
            cause = (
                f"{' and '.join(sorted(places))}: the spans {describe(before)} and {describe(after)} overlap, and "
                "doc.ents holds no overlapping entities"
            )
            raise AdvisedError(lambda fixes: f"{cause}: {fixes['overlap'][1]}")


def placed(doc: Doc, task: Task, task_span, mode: str, counts, options, misaligned):
    """``task_span`` on ``doc``'s tokens (``aligned_span``); a whitespace-only
    one is counted (None), a misaligned one counted and listed in
    ``misaligned`` as (place, ``Misaligned``)."""
    span = aligned_span(doc, task_span, task.where, mode, options.offsets)
    if span is None:
        counts.skipped[WHITESPACE] += 1
    elif isinstance(span, Misaligned):
        misaligned.append((task.place, span))
        counts.skipped[span.reason] += 1
    return span


def group_doc(tasks: List[Task], nlp: Language, mode: str, keys: SpanKeys, counts, options, misaligned) -> Doc:
    """The Doc of the tasks on one input (module docstring); spans off token
    boundaries are appended to ``misaligned``, (place, ``Misaligned``)."""
    doc = group_tokens(tasks, nlp)
    decisions: Dict = {}  # (start, end, label) -> (answer, where, Span)
    reviews = []  # (the reviewed stretches, where, the keys its task accepted)
    for task in tasks:
        reviewed, own = task.answer == "accept" and not task.binary, set()
        for task_span in task.spans:
            answer = task_span.answer or task.answer
            if answer == "ignore":
                counts.skipped["span answered ignore"] += 1
                continue
            span = placed(doc, task, task_span, options.alignment_mode, counts, options, misaligned)
            if span is None or isinstance(span, Misaligned):
                if isinstance(span, Misaligned) and answer == "accept" and reviewed:
                    reviewed = False
                    counts.skipped[REGION_DROPPED] += 1
                continue
            key = (span.start, span.end, span.label_)
            if key in decisions and decisions[key][0] != answer:
                raise ValueError(
                    f"{task.where}: span {describe(span)} is {answer}ed here and {decisions[key][0]}ed at "
                    f"{decisions[key][1]}; drop one of the two answers"
                )
            decisions.setdefault(key, (answer, task.where, span))
            if answer == "accept":
                own.add(key)
        if reviewed:
            region = reviewed_region(doc, task)
            for key in own:
                span = decisions[key][2]
                if not (region.start <= span.start and span.end <= region.end):
                    shown = task.region if task.region_chars is None else f"region_chars {task.region_chars}"
                    raise ValueError(
                        f"{task.where}: span {describe(span)} lies outside the reviewed region {shown}; "
                        "widen the region or drop the span"
                    )
            holes = [placed(doc, task, tie, "expand", counts, options, misaligned) for tie in task.undecided]
            if not any(isinstance(hole, Misaligned) for hole in holes):
                holes = [hole for hole in holes if hole is not None]
                reviews.append((uncovered_stretches(doc, holes, region), task.where, own))
            else:
                counts.skipped[REGION_DROPPED] += 1
    for stretches, where, own in reviews:
        for key, (answer, place, span) in decisions.items():
            if (
                answer == "accept"
                and key not in own
                and any(span.start < region.end and region.start < span.end for region in stretches)
            ):
                raise ValueError(
                    f"{place}: span {describe(span)} is accepted here, but {where} reviewed tokens "
                    f"{stretches[0].start}..{stretches[-1].end - 1} without it; drop one of the two annotations"
                )
    accepted = [span for answer, _, span in decisions.values() if answer == "accept"]
    rejected = [span for answer, _, span in decisions.values() if answer == "reject"]
    regions = merged_regions(doc, [region for stretches, _, _ in reviews for region in stretches])
    if mode == "flat":
        check_flat(accepted, {span: where for answer, where, span in decisions.values()})
        doc.set_ents(accepted, missing=uncovered_stretches(doc, regions + accepted), default="outside")
    else:
        doc.spans[keys.spans_key] = accepted
        doc.spans[keys.annotated_key] = regions
    doc.spans[keys.incorrect_spans_key] = rejected
    doc.user_data["meta"] = doc_meta(tasks)
    counts.accepted += len(accepted)
    counts.rejected += len(rejected)
    counts.tokens_reviewed += sum(len(region) for region in regions)
    return doc


def misaligned_error(misaligned: List) -> AdvisedError:
    """One error listing every span off token boundaries ((place,
    ``Misaligned``)), and the fixes that work for them: none that snaps
    offsets that look like UTF-16 code units, no contract for a span with no
    whole token inside."""
    kinds = sorted({found.fix for _, found in misaligned})
    listed = [f"{place}: {found.what}" for place, found in misaligned]

    def compose(fixes) -> str:
        if len(kinds) == 1:
            fix = fixes[kinds[0]][1]
        else:
            fix = "; ".join(f"for {fixes[kind][0]}, {fixes[kind][1]}" for kind in kinds)
        if len(listed) == 1:
            return f"{listed[0]}; {fix}"
        return f"{len(listed)} spans do not fall on token boundaries: {'; '.join(listed)}. To fix: {fix}"

    return AdvisedError(compose)


def tasks_to_docs(
    tasks: Iterable[Task],
    nlp: Language,
    mode: str = "flat",
    keys: Optional[SpanKeys] = None,
    counts: Optional[ImportCounts] = None,
    options: Optional[ImportOptions] = None,
) -> List[Doc]:
    """The Docs of ``tasks`` (module docstring), one per input in the order
    of its first task, the span groups named by ``keys`` (default
    ``SpanKeys()``); ``counts``, if given, counts them."""
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}: use one of {', '.join(MODES)}")
    keys = SpanKeys() if keys is None else keys
    counts = ImportCounts() if counts is None else counts
    options = ImportOptions() if options is None else options
    groups: Dict[str, List[Task]] = {}
    for task in tasks:
        counts.tasks += task.new_record
        counts.skipped.update(task.also_skipped)
        if task.skip is not None:
            counts.skipped[task.skip] += 1
        elif task.answer == "ignore":
            counts.ignored += 1
        else:
            groups.setdefault(task.group, []).append(task)
    misaligned: List = []
    docs = [group_doc(group, nlp, mode, keys, counts, options, misaligned) for group in groups.values()]
    if misaligned and not options.skip_misaligned:
        raise misaligned_error(misaligned)
    counts.docs += len(docs)
    return docs


def read_annotations(
    format: str,
    source,
    nlp: Optional[Language] = None,
    *,
    lang: str = "en",
    mode: str = "flat",
    spans_key: str = "nested_ner",
    annotated_key: str = "annotated",
    incorrect_spans_key: str = "incorrect_spans",
    counts: Optional[ImportCounts] = None,
    options: Optional[ImportOptions] = None,
) -> List[Doc]:
    """The Docs of the export ``source`` (a file's path, or its records: a
    list of the objects it holds) in ``format`` (prodigy, label-studio,
    doccano), tokenised by ``nlp`` where a task has no tokens (default
    ``spacy.blank(lang)``), in ``mode`` (flat or nested) with the span
    groups named, read as ``options`` say (``ImportOptions``); ``counts``,
    if given, counts what was read."""
    if format not in FORMATS:
        raise ValueError(f"Unknown annotation format {format!r}: use one of {', '.join(FORMATS)}")
    if mode not in MODES:
        raise ValueError(f"Unknown mode {mode!r}: use one of {', '.join(MODES)}")
    if nlp is None:
        try:
            nlp = spacy.blank(lang)
        except ImportError:
            raise ValueError(f"spaCy has no language {lang!r}: give a language code such as en or de") from None
    options = ImportOptions() if options is None else options
    keys = SpanKeys(spans_key, annotated_key, incorrect_spans_key)
    return tasks_to_docs(FORMATS[format](source, options), nlp, mode, keys, counts, options)


def read_prodigy(source, nlp: Optional[Language] = None, **options) -> List[Doc]:
    """``read_annotations`` of a Prodigy JSON-lines export (or answered ``rank`` records)."""
    return read_annotations("prodigy", source, nlp, **options)


def read_label_studio(source, nlp: Optional[Language] = None, **options) -> List[Doc]:
    """``read_annotations`` of a Label Studio JSON, JSON-MIN or CSV export (or its tasks)."""
    return read_annotations("label-studio", source, nlp, **options)


def read_doccano(source, nlp: Optional[Language] = None, **options) -> List[Doc]:
    """``read_annotations`` of a doccano JSON-lines export (or its records)."""
    return read_annotations("doccano", source, nlp, **options)


def write_annotation_docbin(docs: Iterable[Doc], output) -> None:
    """Write ``docs`` with their user data (the tasks' meta; DocBin reads its
    lists back as tuples) to the DocBin file ``output``."""
    DocBin(store_user_data=True, docs=docs).to_disk(output)
