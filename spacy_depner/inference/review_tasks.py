"""The tasks ``python -m spacy_depner rank --unit`` writes: what a person is
asked to review, in the record format annotation tools read (Prodigy's
``ner_manual`` and binary ``ner.teach`` tasks; each tool's own format
written by its module in ``readers``: ``ranking.TASK_FORMATS``), which
``import-annotations`` reads back. A served model's predictions are made of
the same mentions and span records (``predicted_mentions``, ``span_record``).

A task is ``{"text", "tokens": [{"text", "start", "end", "id", "ws"}],
"spans": [{"start", "end", "token_start", "token_end", "label", "text",
"score"}], "score", "meta"}``, offsets relative to the task's text; a span's
``score`` is its marginal probability, the task's ``score`` what ``rank``
orders by. Units:

* ``doc``: the whole document, its predicted mentions; score the document's
  measure (``pipeline.uncertainty``).
* ``span``: one task per *proposal* (a mention of the component's space whose
  marginal p is at least ``PROPOSAL_FLOOR`` and at most 1 - that), the
  sentence(s) holding it as text, the proposal its one span: accept or
  reject (a binary task, ``"_view_id": "ner"`` as Prodigy's ``ner.teach`` writes it). Score min(p, 1 - p): the chance that deciding it by
  its marginal is wrong.
* ``region``: the stretches of tokens covered by overlapping or touching
  proposals that hold at least one uncertain proposal (as for ``span``), each
  widened by ``pad`` tokens on both sides within its sentences, which are
  the task's text; ``"region": [token_start, token_end_exclusive]`` marks the
  tokens to review (annotate completely), and ``"region_chars": [start_char,
  end_char_exclusive]`` the same stretch as character offsets of the task's
  text (also in ``meta``), which an importer maps back whatever its tokenizer;
  its predicted mentions are the pre-annotations. Score: the sum of min(p, 1 - p) over the region's proposals.

Whitespace is never a mention: every predicted mention and proposal loses the
whitespace tokens at its edges (spaCy's tokens for double spaces and line
breaks), one that is only whitespace is dropped, and of mentions that then
coincide the most probable is kept; a region loses its edge whitespace tokens
too. A person who accepts the pre-annotations unchanged thus writes only
spans an importer reads back as they are.

``meta`` holds the input's meta, the document's measures, the ``unit`` and
``token_offset``: the first token of the task's text in the input document.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc, Span

from ..pipeline.uncertainty import MEASURES, PROPOSAL_FLOOR, DocUncertainty

UNITS = ("doc", "span", "region")
REGION_PAD = 1  # tokens added on each side of a region (within its sentences)


def task_record(
    context: Span,
    mentions: Sequence[Tuple[int, int, int]],
    probabilities: Sequence[float],
    labels: Sequence[str],
    score: float,
    meta: Dict[str, Any],
    region: Optional[Tuple[int, int]] = None,
) -> Dict[str, Any]:
    """One task whose text is ``context``: ``mentions`` [start, end exclusive,
    label index] in Doc tokens (inside the context) with their ``probabilities``;
    ``region`` [start, end exclusive] in Doc tokens, or None."""
    first, offset = context.start, context.start_char
    doc = context.doc
    spans = [
        span_record(Span(doc, start, end, label=labels[label]), probability, context)
        for (start, end, label), probability in zip(mentions, probabilities)
    ]
    last = context.end - 1  # the text ends at the context's last token: no whitespace after it
    tokens = [
        {
            "text": t.text,
            "start": t.idx - offset,
            "end": t.idx - offset + len(t.text),
            "id": t.i - first,
            "ws": bool(t.whitespace_) and t.i < last,
        }
        for t in context
    ]
    record = {"text": context.text, "tokens": tokens, "spans": spans}
    meta = {**meta, "token_offset": first}
    if region is not None:
        reviewed = doc[region[0] : region[1]]
        record["region"] = [region[0] - first, region[1] - first]
        record["region_chars"] = [reviewed.start_char - offset, reviewed.end_char - offset]
        meta["region_chars"] = record["region_chars"]
    record["score"] = round(float(score), 6)
    record["meta"] = meta
    return record


def span_record(span: Span, probability: float, context: Optional[Span] = None) -> Dict[str, Any]:
    """A labelled ``span`` as a task's span record (module docstring), its
    offsets relative to ``context`` (default: the whole Doc)."""
    first, offset = (0, 0) if context is None else (context.start, context.start_char)
    return {
        "start": span.start_char - offset,
        "end": span.end_char - offset,
        "token_start": span.start - first,
        "token_end": span.end - 1 - first,
        "label": span.label_,
        "text": span.text,
        "score": round(float(probability), 6),
    }


def task_measures(uncertainty: DocUncertainty) -> Dict[str, float]:
    """Every measure of a document (``pipeline.uncertainty.MEASURES``), rounded as tasks hold them."""
    return {name: round(float(getattr(uncertainty, name)), 6) for name in MEASURES}


def predicted_mentions(doc: Doc, uncertainty: DocUncertainty, labels: Sequence[str]) -> List[Tuple[Span, float]]:
    """The component's predicted mentions of ``doc`` as labelled Spans, each
    with its marginal probability, never whitespace (``without_whitespace``)."""
    mentions, probabilities = without_whitespace(doc, uncertainty.mentions, uncertainty.probabilities)
    return [
        (Span(doc, start, end, label=labels[label]), probability)
        for (start, end, label), probability in zip(mentions.tolist(), probabilities.tolist())
    ]


def without_whitespace(doc: Doc, mentions: np.ndarray, probabilities: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """``mentions`` (M, 3) [start, end exclusive, label] of ``doc`` without
    the whitespace tokens at their edges, those that are only whitespace
    dropped, and of those that then coincide the most probable kept (in
    the order of the mentions); with their ``probabilities``."""
    mentions = mentions.reshape(-1, 3)
    space = doc.to_array("IS_SPACE").astype(bool).reshape(-1)
    positions = np.arange(len(doc) + 1)
    # first non-space token at or after each token; end after the last non-space token at or before each end
    first_word = np.minimum.accumulate(np.where(np.append(~space, True), positions, len(doc))[::-1])[::-1]
    last_end = np.maximum.accumulate(np.where(np.insert(~space, 0, True), positions, 0))
    starts, ends = first_word[mentions[:, 0]], last_end[mentions[:, 1]]
    index = np.flatnonzero(starts < ends)  # the others are only whitespace
    labels = mentions[index, 2]
    order = np.lexsort((index, -probabilities[index], labels, ends[index], starts[index]))
    key = np.stack([starts[index], ends[index], labels], axis=1)[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (key[1:] != key[:-1]).any(axis=1)
    kept = np.sort(index[order][first])
    trimmed = np.stack([starts, ends, mentions[:, 2]], axis=1).astype(mentions.dtype, copy=False)
    return trimmed[kept], probabilities[kept]


def trimmed_region(doc: Doc, start: int, end: int) -> Tuple[int, int]:
    """Tokens [start, end) without the whitespace tokens at their edges (as they are if only whitespace)."""
    first, last = start, end
    while first < last and doc[first].is_space:
        first += 1
    while last > first and doc[last - 1].is_space:
        last -= 1
    return (first, last) if first < last else (start, end)


def context_of(doc: Doc, start: int, end: int) -> Span:
    """The sentences of ``doc`` that hold tokens [start, end) (the whole Doc without sentence boundaries)."""
    if not doc.has_annotation("SENT_START"):
        return doc[:]
    return doc[doc[start].sent.start : doc[end - 1].sent.end]


def uncertain(probabilities: np.ndarray) -> np.ndarray:
    """(P,) bool: proposals whose marginal is within [PROPOSAL_FLOOR, 1 - PROPOSAL_FLOOR]."""
    return (probabilities >= PROPOSAL_FLOOR) & (probabilities <= 1.0 - PROPOSAL_FLOOR)


def doc_tasks(
    doc: Doc, meta, uncertainty: DocUncertainty, labels, measure: str, unit: str, pad: int = REGION_PAD
) -> List[Dict]:
    """The tasks of one document for ``unit`` (module docstring)."""
    measures = task_measures(uncertainty)
    meta = {**meta, **measures, "unit": unit} if unit != "doc" else {**meta, **measures}
    if unit == "doc":
        mentions, probabilities = without_whitespace(doc, uncertainty.mentions, uncertainty.probabilities)
        return [task_record(doc[:], mentions.tolist(), probabilities.tolist(), labels, measures[measure], meta)]
    proposals, probabilities = without_whitespace(doc, uncertainty.proposals, uncertainty.proposal_probabilities)
    doubt = np.minimum(probabilities, 1.0 - probabilities)
    if unit == "span":
        chosen = uncertain(probabilities)
        return [
            {**task_record(context_of(doc, start, end), [(start, end, label)], [p], labels, d, meta), "_view_id": "ner"}
            for (start, end, label), p, d in zip(
                proposals[chosen].tolist(), probabilities[chosen].tolist(), doubt[chosen].tolist()
            )
        ]
    if unit != "region":
        raise ValueError(f"Unknown review unit {unit!r}: use one of {', '.join(UNITS)}")
    predicted, predicted_probabilities = without_whitespace(doc, uncertainty.mentions, uncertainty.probabilities)
    tasks = []
    for start, end in review_regions(proposals, uncertain(probabilities)):
        inside = (proposals[:, 0] >= start) & (proposals[:, 1] <= end)
        context = context_of(doc, start, end)
        start, end = trimmed_region(doc, max(start - pad, context.start), min(end + pad, context.end))
        shown = (predicted[:, 0] >= start) & (predicted[:, 1] <= end)
        tasks.append(
            task_record(
                context,
                predicted[shown].tolist(),
                predicted_probabilities[shown].tolist(),
                labels,
                doubt[inside].sum(),
                meta,
                (start, end),
            )
        )
    return tasks


def review_regions(proposals: np.ndarray, doubtful: np.ndarray) -> List[Tuple[int, int]]:
    """[start, end exclusive) of each maximal stretch of tokens covered by
    overlapping or touching ``proposals`` (P, 3) [start, end exclusive, label]
    that holds a ``doubtful`` (P,) one."""
    if proposals.shape[0] == 0:
        return []
    order = np.argsort(proposals[:, 0], kind="stable")
    starts, ends, flagged = proposals[order, 0], proposals[order, 1], doubtful[order]
    reach = np.maximum.accumulate(ends)
    new = np.concatenate([[True], starts[1:] > reach[:-1]])
    group = np.cumsum(new) - 1
    group_start = starts[new]
    group_end = np.maximum.reduceat(ends, np.flatnonzero(new))
    keep = np.zeros(group_start.shape[0], dtype=bool)
    keep[group[flagged]] = True
    return [(int(s), int(e)) for s, e in zip(group_start[keep], group_end[keep])]
