"""Entities between Docs and arrays: the gold entities of a batch of
Examples as arrays, and arrays of predicted entities as spaCy Spans."""
from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.tokens import Span
from spacy.training import Example


def gold_entities(examples: Sequence[Example], doc_offsets: np.ndarray, labels: Sequence[str],
                  spans_key: Optional[str] = None, component: str = "") -> Tuple[np.ndarray, np.ndarray]:
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
            aligned = eg.get_aligned_spans_y2x(eg.reference.spans[spans_key], allow_overlap=True) if spans_key in eg.reference.spans else []
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


def scored_entity_spans(docs, doc_offsets: np.ndarray, spans: np.ndarray, label_ids: np.ndarray, labels: Sequence[str],
                        scores: Optional[np.ndarray] = None) -> List[Tuple[List[Span], Optional[np.ndarray]]]:
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
