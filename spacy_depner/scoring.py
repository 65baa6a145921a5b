"""Registered scorers."""
from typing import Any, Callable, Dict, Iterable, Optional

from spacy.pipeline.spancat import spancat_score
from spacy.scorer import get_ner_prf
from spacy.training import Example
from spacy.util import registry

from .pipeline.doc_arrays import make_batch
from .readers.genia import heads_key
from .significance import item_counts
from .structures.candidate_spans import span_index


def lattice_coverage(examples: Iterable[Example], structure: str, max_length: Optional[int]) -> Optional[float]:
    """Fraction of gold entities that are candidate spans of the predicted Docs'
    lattice (their trees, for dgm and dgm_s); None without gold entities."""
    examples = list(examples)
    batch = make_batch([eg.predicted for eg in examples], structure, max_length)
    entities = [
        (offset + span.start, offset + span.end - 1)
        for offset, eg in zip(batch.doc_offsets, examples)
        for span in eg.get_aligned_spans_y2x(eg.reference.ents, allow_overlap=False)
    ]
    n_gold = sum(len(eg.reference.ents) for eg in examples)
    if not n_gold:
        return None
    found = span_index(batch.spans, entities, batch.n_tokens) >= 0 if entities else []
    return float(sum(found)) / n_gold


@registry.scorers("spacy_depner.entity_scorer.v1")
def make_entity_scorer() -> Callable[..., Dict[str, Any]]:
    return score_entities


def score_entities(examples: Iterable[Example], structure: Optional[str] = None, max_length: Optional[int] = None, **kwargs) -> Dict[str, Any]:
    """P/R/F of doc.ents overall and per type (``ents_p``, ``ents_r``, ``ents_f``,
    ``ents_per_type``), and, given the component's structure, the coverage of
    the gold entities by its lattice (``ents_lattice_coverage``)."""
    examples = list(examples)
    scores = get_ner_prf(examples)
    if structure is not None:
        scores["ents_lattice_coverage"] = lattice_coverage(examples, structure, max_length)
    return scores


@registry.scorers("spacy_depner.nested_scorer.v1")
def make_nested_scorer() -> Callable[..., Dict[str, Any]]:
    return score_nested


def score_nested(examples: Iterable[Example], spans_key: str = "nested_ner", **kwargs) -> Dict[str, Any]:
    """P/R/F of the mentions in ``doc.spans[spans_key]``, overall and per label
    (``spans_{key}_p``, ``_r``, ``_f``, ``_per_type``), overlaps allowed. When
    the references have the mentions' heads (``doc.spans[spans_key + "_heads"]``,
    one per mention, in the same order), also P/R/F of boundaries + type + head
    (``spans_{key}_head_p``, ``_r``, ``_f``), if the predictions have heads too."""
    examples = list(examples)
    scores = spancat_score(examples, spans_key=spans_key)
    key = heads_key(spans_key)
    if any(key in eg.reference.spans for eg in examples) and any(key in eg.predicted.spans for eg in examples):
        counts = item_counts([_with_heads(eg.reference, spans_key) for eg in examples],
                             [_with_heads(eg.predicted, spans_key) for eg in examples])
        tp, fp, fn = counts.sum(axis=0) if len(counts) else (0, 0, 0)
        p, r = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
        scores.update({f"spans_{spans_key}_head_p": p, f"spans_{spans_key}_head_r": r,
                       f"spans_{spans_key}_head_f": 2 * p * r / max(p + r, 1e-12)})
    return scores


def _with_heads(doc, spans_key: str) -> set:
    """(start, end, label, head_start, head_end) of the Doc's mentions with heads (empty without)."""
    key = heads_key(spans_key)
    if spans_key not in doc.spans or key not in doc.spans:
        return set()
    return {(m.start, m.end, m.label_, h.start, h.end) for m, h in zip(doc.spans[spans_key], doc.spans[key])}
