"""The registered scorers of the components: P/R/F of `doc.ents` with the
lattice coverage of dgm_ner, and P/R/F of nested mentions (with heads, and
of their flat view in `doc.ents` when the component writes one).

The nested scorer also gives the P/R/F of ``doc.spans[KEY]`` under short
names, ``p_KEY``, ``r_KEY``, ``f_KEY`` (``pipeline/score_names.py``), the
names of the components' default score weights, which spaCy's training log
can tell apart."""

from typing import Any, Callable, Dict, Iterable, Optional

from spacy.pipeline.spancat import spancat_score
from spacy.scorer import get_ner_prf
from spacy.training import Example
from spacy.util import registry

from ..doc_arrays.spans import heads_key, suggested_spans, with_single_tokens
from ..doc_arrays.tokens import doc_offsets_of
from ..pipeline.score_names import log_keys
from ..structures.trees.candidate_spans import span_index
from .metrics import prf_from_counts
from .significance import item_counts


def lattice_coverage(examples: Iterable[Example], suggester: Callable) -> Optional[float]:
    """Fraction of gold entities that are spans of the lattice ``dgm_ner``
    builds with ``suggester`` on the predicted Docs (the suggested spans and
    every single token); None without gold entities."""
    examples = list(examples)
    docs = [eg.predicted for eg in examples]
    doc_offsets = doc_offsets_of(docs)
    n_tokens = int(doc_offsets[-1])
    spans = with_single_tokens(suggested_spans(docs, suggester, doc_offsets), n_tokens)
    entities = [
        (offset + span.start, offset + span.end - 1)
        for offset, eg in zip(doc_offsets, examples)
        for span in eg.get_aligned_spans_y2x(eg.reference.ents, allow_overlap=False)
    ]
    n_gold = sum(len(eg.reference.ents) for eg in examples)
    if not n_gold:
        return None
    found = span_index(spans, entities, n_tokens) >= 0 if entities else []
    return float(sum(found)) / n_gold


@registry.scorers("spacy_depner.entity_scorer.v1")
def make_entity_scorer() -> Callable[..., Dict[str, Any]]:
    """The scorer of dgm_ner and chain_ner (``score_entities``): P/R/F of doc.ents, overall and per type, and the
    share of gold entities in the component's lattice."""
    return score_entities


def score_entities(examples: Iterable[Example], suggester: Optional[Callable] = None, **kwargs) -> Dict[str, Any]:
    """P/R/F of doc.ents overall and per type (``ents_p``, ``ents_r``, ``ents_f``,
    ``ents_per_type``), and, given the component's suggester, the coverage of
    the gold entities by its lattice (``ents_lattice_coverage``)."""
    examples = list(examples)
    scores = get_ner_prf(examples)
    if suggester is not None:
        scores["ents_lattice_coverage"] = lattice_coverage(examples, suggester)
    return scores


@registry.scorers("spacy_depner.nested_scorer.v1")
def make_nested_scorer() -> Callable[..., Dict[str, Any]]:
    """The scorer of nested_ner and hypergraph_ner (``score_nested_component``): P/R/F of the mentions in the
    component's span group, overall and per label, and of doc.ents when the component writes a flat view."""
    return score_nested_component


def score_nested_component(
    examples: Iterable[Example], spans_key: str = "nested_ner", ents: Optional[str] = None, **kwargs
) -> Dict[str, Any]:
    """``score_nested``, with the span P/R/F also under their short names
    (``log_keys``): the scorer of nested_ner and hypergraph_ner, and of the
    configs' spancat (whose settings give ``spans_key``)."""
    scores = score_nested(examples, spans_key=spans_key, ents=ents)
    scores.update({short: scores[long] for long, short in log_keys(spans_key).items()})
    return scores


def score_nested(
    examples: Iterable[Example], spans_key: str = "nested_ner", ents: Optional[str] = None, **kwargs
) -> Dict[str, Any]:
    """P/R/F of the mentions in ``doc.spans[spans_key]``, overall and per label
    (``spans_{key}_p``, ``_r``, ``_f``, ``_per_type``), overlaps allowed. When
    the references have the mentions' heads (``doc.spans[spans_key + "_heads"]``,
    one per mention, in the same order), also P/R/F of boundaries + type + head
    (``spans_{key}_head_p``, ``_r``, ``_f``), if the predictions have heads too.
    When the component writes a flat view (``ents`` not None), also spaCy's
    entity scores (``ents_p``, ``_r``, ``_f``, ``_per_type``) of ``doc.ents``
    against the references' ``doc.ents`` (None when no reference has entity
    annotation), as spaCy's ``ner`` reports them."""
    examples = list(examples)
    scores = spancat_score(examples, spans_key=spans_key)
    if ents is not None:
        scores.update(get_ner_prf(examples))
    key = heads_key(spans_key)
    if any(key in eg.reference.spans for eg in examples) and any(key in eg.predicted.spans for eg in examples):
        counts = item_counts(
            [_with_heads(eg.reference, spans_key) for eg in examples],
            [_with_heads(eg.predicted, spans_key) for eg in examples],
        )
        scores.update({f"spans_{spans_key}_head_{k}": v for k, v in prf_from_counts(counts).items()})
    return scores


def _with_heads(doc, spans_key: str) -> set:
    """(start, end, label, head_start, head_end) of the Doc's mentions with heads (empty without)."""
    key = heads_key(spans_key)
    if spans_key not in doc.spans or key not in doc.spans:
        return set()
    return {(m.start, m.end, m.label_, h.start, h.end) for m, h in zip(doc.spans[spans_key], doc.spans[key])}
