"""Writing predicted spans to a Doc: the one span-group writer of every
component, and the flat view (``doc.ents``) of nested or overlapping mentions."""

from typing import List, Optional, Sequence

import numpy as np
from spacy.tokens import Doc, Span, SpanGroup

from ..structures import interval_selection


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


def in_span_order(probabilities: Optional[np.ndarray], mentions: np.ndarray):
    """``(probabilities, mentions)`` with the rows of ``mentions`` (M, >= 3:
    first, last in batch coordinates, label id, ...) and of ``probabilities``
    (M,) or None sorted by (first, last, label id): since the Docs of a batch
    lie one after another, each Doc's mentions in (start, end, label) order,
    the same whatever the other Docs of its batch (empty ones included)."""
    mentions = np.asarray(mentions)
    order = np.lexsort((mentions[:, 2], mentions[:, 1], mentions[:, 0]))
    return (None if probabilities is None else np.asarray(probabilities)[order]), mentions[order]


def keeping_preset(doc: Doc, spans: Sequence[Span]) -> List[Span]:
    """The entities ``doc.ents`` already has (set by an earlier component),
    then those of ``spans`` that overlap none of them: what a component that
    honours preset entities writes to ``doc.ents``."""
    preset = list(doc.ents)
    taken = np.zeros(len(doc) + 1, dtype=np.int64)
    for ent in preset:
        taken[ent.start] += 1
        taken[ent.end] -= 1
    covered = np.cumsum(taken)[:-1] > 0
    return preset + [span for span in spans if not covered[span.start : span.end].any()]


# The flat views of nested or overlapping mentions a component can write to doc.ents.
FLAT_VIEWS = ("outermost", "most_probable")


def check_flat_view(name: str, ents: Optional[str], probabilities: bool) -> None:
    """A ValueError unless ``ents`` is None or one of ``FLAT_VIEWS``, and
    "most_probable" comes with ``probabilities`` (it needs them)."""
    if ents is not None and ents not in FLAT_VIEWS:
        raise ValueError(
            f'Unknown ents {ents!r} for \'{name}\': use null (doc.ents untouched), "outermost" or "most_probable"'
        )
    if ents == "most_probable" and not probabilities:
        raise ValueError(
            f"'{name}' has ents = \"most_probable\" and probabilities = false: the most probable flat view "
            'needs the mentions\' probabilities. Set probabilities = true, or ents = "outermost".'
        )


def flat_view(ents: str, spans: np.ndarray, label_ids: np.ndarray, probabilities: Optional[np.ndarray]) -> np.ndarray:
    """The rows of ``spans`` (M, 2) (first, last, batch coordinates; label ids
    (M,), probabilities (M,) or None) that the flat view ``ents`` keeps, in
    their order: pairwise disjoint. One range given with several labels: the
    more probable label, then the one first in the component's labels."""
    weights = np.zeros(spans.shape[0]) if probabilities is None else np.asarray(probabilities, dtype=np.float64)
    rank = np.empty(spans.shape[0], dtype=np.int64)
    rank[np.lexsort((np.asarray(label_ids), -weights))] = np.arange(spans.shape[0])
    if ents == "outermost":
        return np.flatnonzero(interval_selection.outermost(spans, rank))
    return np.flatnonzero(interval_selection.most_probable(spans, weights, rank))


def write_flat_view(
    settings,
    docs: Sequence[Doc],
    doc_offsets: np.ndarray,
    spans: np.ndarray,
    label_ids: np.ndarray,
    probabilities: Optional[np.ndarray],
    doc_spans: Sequence[Sequence[Span]],
) -> None:
    """Write the flat view ``settings["ents"]`` of the batch's mentions (as
    ``flat_view``) to each Doc's ``doc.ents``: beside the entities it
    already has (``keeping_preset``), or in their place with
    ``settings["overwrite_ents"]``; nothing when the view is None.
    ``doc_spans``: the Spans already made of the rows of ``spans``, per Doc
    in their order in ``spans`` (``doc_arrays.entities.scored_entity_spans``),
    which the view takes rather than making them again."""
    ents = settings["ents"]
    if ents is None:
        return
    kept = flat_view(ents, spans, label_ids, probabilities)
    doc_of = np.searchsorted(doc_offsets, spans[:, 0], side="right") - 1
    made = np.empty(spans.shape[0], dtype=np.int64)  # row -> its place among the made Spans, Doc after Doc
    made[np.argsort(doc_of, kind="stable")] = np.arange(spans.shape[0])
    kept = kept[np.argsort(doc_of[kept], kind="stable")]
    bounds = np.searchsorted(doc_of[kept], np.arange(len(docs) + 1)).tolist()
    every = [span for spans_of_doc in doc_spans for span in spans_of_doc]
    chosen = [every[i] for i in made[kept].tolist()]
    for d, doc in enumerate(docs):
        doc_ents = chosen[bounds[d] : bounds[d + 1]]
        doc.ents = doc_ents if settings["overwrite_ents"] else keeping_preset(doc, doc_ents)
