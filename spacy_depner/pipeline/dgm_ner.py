"""``dgm_ner``: flat NER by a semi-Markov CRF over a lattice of candidate spans.

The lattice is chosen by ``structure`` (Jie, Muis & Lu 2017): ``dgm`` (DGM
valid spans), ``dgm_s`` (single-arc spans) or ``semi_markov`` (every span up to
``max_length``). Entities go to ``doc.ents``; the marginal probability of each
predicted entity goes to ``doc.spans[scores_key].attrs["scores"]``.
"""
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, SpanGroup
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..structures import segment_lattice
from ..structures.candidate_spans import merge_spans, span_index
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe
from .doc_arrays import Batch, covered_tokens, make_batch, require_parse, spans_per_doc

STRUCTURES = ("dgm", "dgm_s", "semi_markov")

DEFAULT_MODEL = Config().from_str(
    """
[model]
@architectures = "spacy_depner.SpanScorer.v1"
hidden_width = 128
maxout_pieces = 2
width_buckets = 8
dependency_features = false
dependency_width = 32
"""
    + DEFAULT_TOK2VEC
)["model"]


@Language.factory(
    "dgm_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type", "doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "structure": "dgm",
        "max_length": None,
        "add_gold_spans": True,
        "scores_key": "dgm_ner",
        "scorer": {"@scorers": "spacy_depner.entity_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None, "ents_lattice_coverage": 0.0},
)
def make_dgm_ner(
    nlp: Language,
    name: str,
    model: Model,
    structure: str,
    max_length: Optional[int],
    add_gold_spans: bool,
    scores_key: str,
    scorer: Optional[Callable],
) -> "DependencyGuidedNER":
    """structure: "dgm" | "dgm_s" | "semi_markov"; max_length: longest entity in
    tokens (null: unbounded); add_gold_spans: during training, add the gold
    entities that the lattice lacks so that the loss is defined."""
    return DependencyGuidedNER(
        nlp.vocab, model, name, structure=structure, max_length=max_length,
        add_gold_spans=add_gold_spans, scores_key=scores_key, scorer=scorer,
    )


class DependencyGuidedNER(EntityPipe):
    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "dgm_ner",
        *,
        structure: str = "dgm",
        max_length: Optional[int] = None,
        add_gold_spans: bool = True,
        scores_key: str = "dgm_ner",
        scorer: Optional[Callable] = None,
    ) -> None:
        self.setup(
            vocab, model, name, scorer, {"structure": STRUCTURES}, (f"{name}_gold_outside_lattice",),
            structure=structure, max_length=max_length, add_gold_spans=add_gold_spans, scores_key=scores_key,
        )

    def _batch(self, docs: List[Doc]) -> Batch:
        return make_batch(docs, self.cfg["structure"], self.cfg["max_length"], self.name)

    def predict(self, docs: Iterable[Doc]):
        """Viterbi segmentation and marginals: (batch, labels (S,), marginals (S, K))."""
        docs = list(docs)
        if self.model.attrs.get("dependency_features"):
            require_parse(docs, self.name)
        batch = self._batch(docs)
        scores, transitions = self.model.predict((docs, batch.spans))
        scores = self.model.ops.to_numpy(scores)
        transitions = self.model.ops.to_numpy(transitions)
        args = (batch.spans, batch.span_offsets, batch.doc_offsets, scores, transitions)
        _, labels = segment_lattice.viterbi(*args)
        _, span_marginals, _ = segment_lattice.marginals(*args)
        return batch, labels, span_marginals

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        batch, labels, span_marginals = predictions
        rows = np.flatnonzero(labels > 0)
        probabilities = span_marginals[rows, labels[rows]].astype(np.float32)
        doc_of_row = np.searchsorted(batch.doc_offsets, batch.spans[rows, 0], side="right") - 1
        for d, (doc, ents) in enumerate(zip(docs, self.entity_spans(docs, batch.doc_offsets, batch.spans[rows], labels[rows]))):
            doc.set_ents(ents, default="outside")
            group = SpanGroup(doc, name=self.cfg["scores_key"], spans=ents)
            group.attrs["scores"] = probabilities[doc_of_row == d]
            doc.spans[self.cfg["scores_key"]] = group

    def _gold(self, examples: List[Example], batch: Batch) -> Tuple[Batch, np.ndarray, int]:
        """Per-span gold labels (S,) (-1: not a gold segment) on a lattice that,
        with add_gold_spans, holds every gold entity; and the number of gold
        entities the candidate spans lacked."""
        entities, ids = self.gold_entities(examples, batch.doc_offsets)
        missing = span_index(batch.spans, entities, batch.n_tokens) < 0
        if self.cfg["add_gold_spans"] and missing.any():
            spans = merge_spans(batch.spans, entities[missing], batch.n_tokens)
            batch = batch._replace(spans=spans, span_offsets=spans_per_doc(spans, batch.doc_offsets))
        elif missing.any():
            entities, ids = entities[~missing], ids[~missing]
        gold = np.full(batch.spans.shape[0], -1, dtype=np.int64)
        gold[span_index(batch.spans, entities, batch.n_tokens)] = ids
        singles = np.flatnonzero(covered_tokens(entities, batch.n_tokens) == 0)
        gold[span_index(batch.spans, np.stack([singles, singles], axis=1), batch.n_tokens)] = 0
        return batch, gold, int(missing.sum())

    def learn_from(self, examples: List[Example], docs: List[Doc]) -> Tuple[float, Dict[str, float]]:
        batch = self._batch(docs)
        batch, gold, n_missing = self._gold(examples, batch)
        (scores, transitions), backprop = self.model.begin_update((docs, batch.spans))
        loss, d_scores, d_transitions = self.get_loss(examples, (batch, gold, scores, transitions))
        backprop((self.model.ops.asarray2f(d_scores), self.model.ops.asarray2f(d_transitions)))
        return loss, {f"{self.name}_gold_outside_lattice": n_missing}

    def get_loss(self, examples, predictions) -> Tuple[float, np.ndarray, np.ndarray]:
        """Negative log-likelihood of the gold segmentation (eq. 4 without the L2
        term) and its gradient: marginals minus gold counts."""
        batch, gold, scores, transitions = predictions
        scores = np.asarray(self.model.ops.to_numpy(scores), dtype=np.float64)
        transitions = np.asarray(self.model.ops.to_numpy(transitions), dtype=np.float64)
        K = scores.shape[1]
        log_z, span_marginals, transition_marginals = segment_lattice.marginals(
            batch.spans, batch.span_offsets, batch.doc_offsets, scores, transitions
        )
        rows = np.flatnonzero(gold >= 0)
        gold_counts = segment_lattice.transition_counts(batch.spans, batch.span_offsets, gold, K)
        gold_score = scores[rows, gold[rows]].sum() + (gold_counts * transitions).sum()
        d_scores = span_marginals
        d_scores[rows, gold[rows]] -= 1.0
        return float(log_z.sum() - gold_score), d_scores.astype(np.float32), (transition_marginals - gold_counts).astype(np.float32)
