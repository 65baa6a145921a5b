"""Writing predicted spans to a Doc: the one span-group writer of every component."""
from typing import Optional, Sequence

import numpy as np
from spacy.tokens import Doc, Span, SpanGroup


def heads_key(spans_key: str) -> str:
    """The span group that holds the heads of the mentions of ``spans_key``
    (one head span per mention, in the same order)."""
    return f"{spans_key}_heads"


def write_span_group(doc: Doc, key: str, spans: Sequence[Span], scores: Optional[np.ndarray] = None) -> SpanGroup:
    """Set ``doc.spans[key]`` to ``spans``; with ``scores`` (one per span),
    ``attrs["scores"]`` holds them as float32, as spaCy's spancat does."""
    group = SpanGroup(doc, name=key, spans=list(spans))
    if scores is not None:
        scores = np.asarray(scores, dtype=np.float32)
        if scores.shape != (len(group),):
            raise ValueError(f"{len(group)} spans for doc.spans[{key!r}] but {scores.shape} scores")
        group.attrs["scores"] = scores
    doc.spans[key] = group
    return group
