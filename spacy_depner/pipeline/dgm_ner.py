"""``dgm_ner``: flat NER by a semi-Markov CRF over a lattice of candidate spans.

The lattice comes from ``suggester``, any spaCy suggester (``[components.dgm_ner.suggester]``):
``spacy_depner.dgm_suggester.v1`` (DGM valid spans, the default),
``spacy_depner.dgm_s_suggester.v1`` (single-arc spans) or
``spacy_depner.all_spans_suggester.v1`` (every span up to ``max_length``: the
semi-Markov CRF) of Jie, Muis & Lu (2017), or e.g. spaCy's
``spacy.ngram_suggester.v1``. Every single token is always added to the
suggested spans: an O segment is one token, so each token must be a segment.
Entities go to ``doc.ents``; with ``scores``, the marginal probability of each
predicted entity goes to ``doc.spans[scores_key].attrs["scores"]``.

Confidence settings (``EntityPipe``): ``temperature`` divides the span scores
and the transitions before decoding, ``label_temperatures`` (label, or "O" for
the outside column, to a temperature) the span scores of a label instead;
``threshold`` drops the entities whose
marginal is below it from ``doc.ents`` and the span group; ``decoding =
"posterior"`` predicts the segmentation with the largest sum of (marginal -
``posterior_penalty``) over its entities (``segment_lattice.posterior_decode``).

The lattice of a Doc is decoded as independent chains, one per run of
sentences that no span of the lattice crosses: with the DGM or all-spans
suggester, sentence by sentence, as the paper decodes its sentences (no
transition links the last segment of a sentence to the first of the next),
so the marginals of a long Doc keep their accuracy (the score bound of
``structures.score_range`` applies to a chain's length).

Cost: a lattice whose spans are not bounded (``max_length = null`` of the DGM
or semi-Markov suggester, a suggester that states no ``spans_per_token``)
may have n (n + 1) / 2 spans in a sentence of n tokens. Such a sentence longer
than ``max_sentence_length`` is refused with a ValueError before any span is
made; with a bounded lattice (at most ``max_sentence_length`` spans per
token) memory and time grow linearly with the Doc.
"""
from typing import Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..structures import segment_lattice
from ..structures.candidate_spans import merge_spans, span_index
from .doc_arrays import Batch, batch_offsets, chain_offsets, covered_tokens, lattice, spans_per_doc
from .confidence_settings import CONFIDENCE_DEFAULTS
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe
from .span_groups import write_span_group
from .suggesters import DGM, build_dgm_suggester, check_sentence_lengths, component_limit, spans_per_token

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
        "suggester": {"@misc": DGM, "max_length": None},
        "add_gold_spans": True,
        "scores": True,
        "scores_key": "dgm_ner",
        "max_sentence_length": 500,
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.entity_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None, "ents_lattice_coverage": 0.0},
)
def make_dgm_ner(
    nlp: Language,
    name: str,
    model: Model,
    suggester: Callable,
    add_gold_spans: bool,
    scores: bool,
    scores_key: str,
    max_sentence_length: Optional[int],
    temperature: float,
    label_temperatures: Dict[str, float],
    threshold: float,
    decoding: str,
    posterior_penalty: float,
    scorer: Optional[Callable],
) -> "DependencyGuidedNER":
    """suggester: the candidate spans (any spaCy suggester; single tokens are
    always added); add_gold_spans: during training, add the gold entities that
    the lattice lacks so that the loss is defined; scores: compute the
    marginals and write them to doc.spans[scores_key].attrs["scores"] (false:
    Viterbi only, faster); max_sentence_length: with a lattice of unbounded
    span length, a longer sentence is an error (null: no limit); temperature
    (> 0): the scores are divided by it before decoding; label_temperatures:
    {label or "O": temperature > 0}, the divisor of that label's span scores
    instead; threshold (in [0, 1]): entities with a lower marginal are dropped; decoding: "map" or
    "posterior" (the segmentation with the most expected correct entities
    minus posterior_penalty (>= 0) each). A threshold above 0 or posterior
    decoding computes the marginals even with scores = false."""
    return DependencyGuidedNER(
        nlp.vocab, model, name, suggester=suggester, add_gold_spans=add_gold_spans,
        scores=scores, scores_key=scores_key, max_sentence_length=max_sentence_length, temperature=temperature,
        label_temperatures=label_temperatures, threshold=threshold, decoding=decoding,
        posterior_penalty=posterior_penalty, scorer=scorer,
    )


def chains(spans: np.ndarray, doc_offsets: np.ndarray, sentence_offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The lattice as independent chains for ``segment_lattice``: the Docs
    cut at every sentence start that no span crosses (a span [f, l] crosses
    b if f < b <= l). spans (S, 2) sorted by (last, first); doc_offsets
    (B + 1,), sentence_offsets (U + 1,) in batch coordinates. Returns
    span_offsets (C + 1,) and chain_offsets (C + 1,)."""
    offsets = chain_offsets(spans, doc_offsets, sentence_offsets)
    return spans_per_doc(spans, offsets), offsets


class DependencyGuidedNER(EntityPipe):
    """Settings (all read from the config at load): ``suggester``,
    ``add_gold_spans``, ``scores``, ``scores_key``, ``max_sentence_length``
    and the confidence settings. ``cfg``: the labels."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "dgm_ner",
        *,
        suggester: Optional[Callable] = None,
        add_gold_spans: bool = True,
        scores: bool = True,
        scores_key: str = "dgm_ner",
        max_sentence_length: Optional[int] = 500,
        temperature: float = 1.0,
        label_temperatures: Optional[Dict[str, float]] = None,
        threshold: float = 0.0,
        decoding: str = "map",
        posterior_penalty: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        if suggester is None:
            suggester = build_dgm_suggester()
        self.setup(
            vocab, model, name, scorer, extra_losses=(f"{name}_gold_outside_lattice",),
            settings=dict(suggester=suggester, add_gold_spans=add_gold_spans, scores=scores, scores_key=scores_key,
                          max_sentence_length=max_sentence_length, temperature=temperature,
                          label_temperatures=label_temperatures, threshold=threshold, decoding=decoding,
                          posterior_penalty=posterior_penalty),
        )

    @property
    def suggester(self) -> Callable:
        return self.settings["suggester"]

    def score_labels(self) -> List[str]:
        """Span score columns (K + 1): "O", then the labels."""
        return ["O", *self.labels]

    def _batch(self, docs: List[Doc]) -> Batch:
        """The lattice of the Docs (the one place that checks for a parse,
        besides the suggester itself, and the sentence lengths)."""
        self.check_parse(docs)
        check_sentence_lengths(*batch_offsets(docs), spans_per_token(self.suggester), self.settings["max_sentence_length"],
                               f"'{self.name}'", component_limit(self.name))
        return lattice(docs, self.suggester, self.model.ops)

    def predict(self, docs: Iterable[Doc]):
        """The segmentation (Viterbi, or posterior with ``decoding =
        "posterior"``) of the scores divided by the temperatures, and, when
        ``needs_marginals``, the marginals: (lattice, labels (S,), marginals
        (S, K) or None)."""
        docs = list(docs)
        batch = self._batch(docs)
        scores, transitions = self.tempered(self.model.predict((docs, batch.spans)))
        args = (batch.spans, *chains(batch.spans, batch.doc_offsets, batch_offsets(docs)[1]),
                self.model.ops.to_numpy(scores), self.model.ops.to_numpy(transitions))
        span_marginals = segment_lattice.marginals(*args)[1] if self.needs_marginals else None
        if self.settings["decoding"] == "posterior":
            _, labels = segment_lattice.posterior_decode(*args[:3], span_marginals, self.settings["posterior_penalty"])
        else:
            _, labels = segment_lattice.viterbi(*args)
        return batch, labels, span_marginals

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        docs = list(docs)
        batch, labels, span_marginals = predictions
        rows = np.flatnonzero(labels > 0)
        probabilities = None if span_marginals is None else span_marginals[rows, labels[rows]]
        probabilities, spans, ids = self.confident(probabilities, batch.spans[rows], labels[rows])
        for doc, (ents, doc_probabilities) in zip(docs, self.scored_entity_spans(docs, batch.doc_offsets, spans, ids,
                                                                                  self.written_scores(probabilities))):
            doc.set_ents(ents, default="outside")
            write_span_group(doc, self.settings["scores_key"], ents, doc_probabilities)

    def training_lattice(self, examples: List[Example]) -> Tuple[Batch, np.ndarray, int]:
        """The lattice of the examples' predicted Docs, with add_gold_spans
        augmented by every gold entity it lacks; per-span gold labels (S,)
        (-1: not a gold segment); the number of gold entities the
        suggester's lattice lacked."""
        batch = self._batch([eg.predicted for eg in examples])
        entities, ids = self.gold_entities(examples, batch.doc_offsets)
        missing = span_index(batch.spans, entities, batch.n_tokens) < 0
        if self.settings["add_gold_spans"] and missing.any():
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
        training = self.training_lattice(examples)
        scores, backprop = self.model.begin_update((docs, training[0].spans))
        loss, (d_scores, d_transitions) = self.get_loss(examples, scores, training=training)
        backprop((self.model.ops.asarray2f(d_scores), self.model.ops.asarray2f(d_transitions)))
        return loss, {f"{self.name}_gold_outside_lattice": training[2]}

    def get_loss(self, examples: Iterable[Example], scores, *, training=None) -> Tuple[float, Tuple[np.ndarray, np.ndarray]]:
        """Negative log-likelihood of the gold segmentation (eq. 4 without the
        L2 term) and its gradient with respect to what the model returned,
        ``scores`` = (span scores (S, K), transitions): (loss, (d_scores,
        d_transitions)), marginals minus gold counts. The model scored the
        spans of ``training_lattice(examples)`` (``training``: that lattice,
        when the caller has it already)."""
        examples = list(examples)
        batch, gold, _ = self.training_lattice(examples) if training is None else training
        span_scores, transitions = scores
        span_scores = np.asarray(self.model.ops.to_numpy(span_scores), dtype=np.float64)
        transitions = np.asarray(self.model.ops.to_numpy(transitions), dtype=np.float64)
        if span_scores.shape[0] != batch.spans.shape[0]:
            raise ValueError(f"'{self.name}': {span_scores.shape[0]} span scores for a lattice of "
                             f"{batch.spans.shape[0]} spans (score the spans of training_lattice(examples))")
        K = span_scores.shape[1]
        span_offsets, chain_offsets = chains(batch.spans, batch.doc_offsets, batch_offsets([eg.predicted for eg in examples])[1])
        log_z, span_marginals, transition_marginals = segment_lattice.marginals(
            batch.spans, span_offsets, chain_offsets, span_scores, transitions
        )
        rows = np.flatnonzero(gold >= 0)
        gold_counts = segment_lattice.transition_counts(batch.spans, span_offsets, gold, K)
        gold_score = span_scores[rows, gold[rows]].sum() + (gold_counts * transitions).sum()
        d_scores = span_marginals
        d_scores[rows, gold[rows]] -= 1.0
        return float(log_z.sum() - gold_score), (d_scores.astype(np.float32), (transition_marginals - gold_counts).astype(np.float32))
