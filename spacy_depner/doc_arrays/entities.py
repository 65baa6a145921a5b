"""Entities between Docs and arrays: the gold entities of a batch of
Examples as arrays, and arrays of predicted entities as spaCy Spans."""

from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Span
from spacy.training import Example

from ..structures.partial import touching_missing


def gold_entities(
    examples: Sequence[Example],
    doc_offsets: np.ndarray,
    labels: Sequence[str],
    spans_key: Optional[str] = None,
    component: str = "",
) -> Tuple[np.ndarray, np.ndarray]:
    """The reference entities (``doc.ents``, or the span group ``spans_key``,
    overlaps allowed) aligned to the predicted Docs: (M, 2) first and last
    token in batch coordinates, and label ids (M,) counted from 1 in
    ``labels``; an unknown label is a ValueError naming ``component``."""
    label_ids = {label: i + 1 for i, label in enumerate(labels)}
    where = "doc.ents" if spans_key is None else f"doc.spans[{spans_key!r}]"
    starts, ends, ids = [], [], []
    for offset, eg in zip(doc_offsets, examples):
        if spans_key is None:
            aligned = eg.get_aligned_spans_y2x(eg.reference.ents, allow_overlap=False)
        else:
            aligned = (
                eg.get_aligned_spans_y2x(eg.reference.spans[spans_key], allow_overlap=True)
                if spans_key in eg.reference.spans
                else []
            )
        for span in aligned:
            if span.label_ not in label_ids:
                raise ValueError(
                    f"Unknown label {span.label_!r} in the gold {where} for '{component}' "
                    f"(labels: {list(labels)}). Add it with initialize(labels=...)."
                )
            starts.append(offset + span.start)
            ends.append(offset + span.end - 1)
            ids.append(label_ids[span.label_])
    return np.array([starts, ends], dtype=np.int64).T.reshape(-1, 2), np.array(ids, dtype=np.int64)


def scored_entity_spans(
    docs,
    doc_offsets: np.ndarray,
    spans: np.ndarray,
    label_ids: np.ndarray,
    labels: Sequence[str],
    scores: Optional[np.ndarray] = None,
) -> List[Tuple[List[Span], Optional[np.ndarray]]]:
    """Per Doc, its Spans from ``spans`` (M, 2) [first, last] in batch
    coordinates with ``label_ids`` (M,) from 1 in ``labels`` (each Doc's in
    their order in ``spans``), and their rows of ``scores`` (M,) (None
    without scores): the batch is split by Doc once, with one stable sort."""
    doc_of = np.searchsorted(doc_offsets, spans[:, 0], side="right") - 1
    order = np.argsort(doc_of, kind="stable")
    bounds = np.searchsorted(doc_of[order], np.arange(len(docs) + 1)).tolist()
    starts = (spans[order, 0] - doc_offsets[doc_of[order]]).tolist()
    ends = (spans[order, 1] - doc_offsets[doc_of[order]] + 1).tolist()
    names = [labels[i - 1] for i in np.asarray(label_ids)[order].tolist()]
    doc_scores = [None] * len(docs) if scores is None else np.split(np.asarray(scores)[order], bounds[1:-1])
    return [
        ([Span(doc, starts[m], ends[m], label=names[m]) for m in range(bounds[d], bounds[d + 1])], doc_scores[d])
        for d, doc in enumerate(docs)
    ]


def missing_entity_tokens(examples: Sequence[Example], doc_offsets: np.ndarray) -> Optional[np.ndarray]:
    """(N,) bool: the predicted tokens whose entity annotation is missing in
    the reference ``doc.ents`` (spaCy's convention: ``ent_iob_ == ""``, "-"
    in BILUO tags; ``Example.get_aligned_ner`` gives them as None, with the
    tokens that align to no reference token), or None when no reference
    token is missing (misaligned tokens then count as outside, as before)."""
    if not any((eg.reference.to_array("ENT_IOB") == 0).any() for eg in examples if len(eg.reference)):
        return None
    missing = np.zeros(int(doc_offsets[-1]), dtype=bool)
    for offset, eg in zip(doc_offsets, examples):
        tags = eg.get_aligned_ner()
        missing[offset : offset + len(tags)] = [tag is None for tag in tags]
    return missing


def unannotated_tokens(
    examples: Sequence[Example],
    doc_offsets: np.ndarray,
    annotated_key: Optional[str],
    mentions: np.ndarray,
    component: str = "",
) -> Optional[np.ndarray]:
    """(N,) bool: the predicted tokens outside every span of the reference span
    group ``annotated_key`` (the annotated regions of a Doc; a Doc without
    that group is annotated throughout), or None when ``annotated_key`` is
    None or every token is annotated. A gold mention of ``mentions`` (M, 2)
    [first, last] (batch coordinates) wholly on unannotated tokens is an
    accepted mention (known present, all else there unknown: the caller's);
    one partly on them is a ValueError naming the Doc and the mention."""
    if annotated_key is None:
        return None
    missing = np.zeros(int(doc_offsets[-1]), dtype=bool)
    for offset, eg in zip(doc_offsets, examples):
        if annotated_key not in eg.reference.spans:
            continue
        doc_missing = np.ones(len(eg.predicted), dtype=bool)
        for span in eg.get_aligned_spans_y2x(eg.reference.spans[annotated_key], allow_overlap=True):
            doc_missing[span.start : span.end] = False
        missing[offset : offset + len(eg.predicted)] = doc_missing
    if not missing.any():
        return None
    mentions = np.asarray(mentions, dtype=np.int64).reshape(-1, 2)
    bad = np.flatnonzero(touching_missing(mentions, missing) & touching_missing(mentions, ~missing))
    if bad.shape[0]:
        first, last = (int(v) for v in mentions[bad[0]])
        d = int(np.searchsorted(doc_offsets, first, side="right") - 1)
        doc = examples[d].predicted
        raise ValueError(
            f"'{component}': the gold mention {doc[first - doc_offsets[d] : last - doc_offsets[d] + 1].text!r} (tokens "
            f"{first - doc_offsets[d]}..{last - doc_offsets[d]} of Doc {d} of the batch, {doc.text[:60]!r}) lies partly "
            f"outside the annotated regions doc.spans[{annotated_key!r}]: widen the region to cover the mention, "
            "shrink it off the mention (a mention wholly outside the regions is accepted as present), or drop it"
        )
    return missing


def preset_entities(
    docs: Sequence, doc_offsets: np.ndarray, labels: Sequence[str]
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entities the Docs already have in ``doc.ents`` (set by an earlier
    component, e.g. an entity ruler): (M, 2) first and last token in batch
    coordinates and label ids (M,) from 1 in ``labels`` of those whose label
    is one of ``labels``, and (N,) bool the tokens of every one of them."""
    label_ids = {label: i + 1 for i, label in enumerate(labels)}
    tokens = np.zeros(int(doc_offsets[-1]), dtype=bool)
    starts, ends, ids = [], [], []
    for offset, doc in zip(doc_offsets.tolist(), docs):
        for ent in doc.ents:
            tokens[offset + ent.start : offset + ent.end] = True
            if ent.label_ in label_ids:
                starts.append(offset + ent.start)
                ends.append(offset + ent.end - 1)
                ids.append(label_ids[ent.label_])
    return np.array([starts, ends], dtype=np.int64).T.reshape(-1, 2), np.array(ids, dtype=np.int64), tokens
