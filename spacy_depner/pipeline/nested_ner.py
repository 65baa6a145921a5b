"""``nested_ner``: nested mentions by a span-based CRF (Corro 2023).

``structure`` chooses the dynamic program: ``semi_markov`` (non-overlapping
mentions), ``cyk`` (nested, no partial overlap, O(n^3)) or ``quadratic``
(nested, each mention with at most one child longer than one word, O(n^2)).
``suggester`` (any spaCy suggester) chooses the spans that may be mentions:
by default every span of each sentence
(``spacy_depner.all_spans_suggester.v1``, ``max_length = null``);
``spacy_depner.dgm_suggester.v1`` restricts them to the DGM valid spans of the
Doc's trees (Jie, Muis & Lu 2017); a ``max_length`` of the suggester bounds the
mentions' length. Suggested spans that cross a sentence end are dropped. The
model scores the suggested spans only. Each sentence is one analysis; the
mentions go to ``doc.spans[spans_key]``, with ``scores`` their marginal
probabilities in ``attrs["scores"]``. ``ents`` also writes a flat view of
them to ``doc.ents`` (replacing what was there), for displaCy's "ent" style,
spaCy's entity scores and every reader of ``doc.ents``: null (default: none,
``doc.ents`` untouched), ``"outermost"`` (the mentions inside no other: every
analysis is laminar, so they never overlap) or ``"most_probable"`` (the
disjoint subset with the largest sum of marginal probabilities, the expected
number of correct entities; needs ``scores``); see
``structures.interval_selection``.

Confidence settings (``EntityPipe``): ``temperature`` divides the mention
scores before decoding, ``label_temperatures`` (label to temperature) the
scores of a label's mentions instead; ``threshold`` drops the mentions whose marginal is
below it from the span group and the flat view; ``decoding = "posterior"``
predicts the analysis of the structure with the largest sum of (marginal -
``posterior_penalty``) over its mentions (``nested_mentions.posterior_decode``).

A gold mention set the search space cannot hold is reduced, for the loss, to
its largest subset that it can hold (found by the structure's own Viterbi);
the dropped mentions are counted in the loss ``{name}_gold_outside_space``.
With ``add_gold_spans``, gold spans the suggester lacks are first added to the
allowed spans during training.
"""
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..structures import nested_mentions
from ..structures.candidate_spans import merge_spans
from .doc_arrays import batch_offsets, suggested_spans
from .confidence_settings import CONFIDENCE_DEFAULTS
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe
from .span_groups import check_flat_view, write_flat_view, write_span_group
from .suggesters import ALL_SPANS, build_all_spans_suggester, check_sentence_lengths, component_limit

STRUCTURES = nested_mentions.STRUCTURES

DEFAULT_MODEL = Config().from_str(
    """
[model]
@architectures = "spacy_depner.MentionScorer.v1"
"""
    + DEFAULT_TOK2VEC
)["model"]


class SentenceBatch(NamedTuple):
    """Sentences of a batch of Docs as the structure's documents: doc_offsets
    (B + 1,) of the Docs, sentence_offsets (U + 1,); spans (S, 2) the spans the
    model scores (first, last in batch coordinates, sorted by (last, first));
    rows (S,) their rows in the structure's dense layout of n_dense rows, and
    mask (n_dense,) bool; both None when every span is allowed (then spans is
    the dense layout itself)."""

    doc_offsets: np.ndarray
    sentence_offsets: np.ndarray
    spans: np.ndarray
    rows: Optional[np.ndarray]
    mask: Optional[np.ndarray]
    n_dense: int


@Language.factory(
    "nested_ner",
    assigns=["doc.spans", "doc.ents"],
    default_config={
        "model": DEFAULT_MODEL,
        "suggester": {"@misc": ALL_SPANS, "max_length": None},
        "structure": "quadratic",
        "add_gold_spans": True,
        "scores": True,
        "spans_key": "nested_ner",
        "ents": None,
        "max_sentence_length": 500,
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.nested_scorer.v1"},
    },
    default_score_weights={"spans_nested_ner_f": 1.0, "spans_nested_ner_p": 0.0, "spans_nested_ner_r": 0.0},
)
def make_nested_ner(
    nlp: Language,
    name: str,
    model: Model,
    suggester: Callable,
    structure: str,
    add_gold_spans: bool,
    scores: bool,
    spans_key: str,
    ents: Optional[str],
    max_sentence_length: Optional[int],
    temperature: float,
    label_temperatures: Dict[str, float],
    threshold: float,
    decoding: str,
    posterior_penalty: float,
    scorer: Optional[Callable],
) -> "NestedNER":
    """suggester: the spans that may be mentions (default every span of each
    sentence; spacy_depner.dgm_suggester.v1: the DGM valid spans, needs a
    parse); structure: "semi_markov" | "cyk" | "quadratic"; scores: compute the
    marginals for attrs["scores"] (false: Viterbi only, faster); ents: null,
    "outermost" or "most_probable", the flat view written to doc.ents (needs
    scores); max_sentence_length: a longer sentence is an error (the spans of a
    sentence are n (n + 1) / 2; null: no limit); temperature (> 0): the scores
    are divided by it before decoding; label_temperatures: {label:
    temperature > 0}, the divisor of that label's scores instead; threshold
    (in [0, 1]): mentions with a
    lower marginal are dropped; decoding: "map" or "posterior" (the analysis
    with the most expected correct mentions minus posterior_penalty (>= 0)
    each). A threshold above 0 or posterior decoding computes the marginals
    even with scores = false."""
    return NestedNER(
        nlp.vocab, model, name, suggester=suggester, structure=structure, add_gold_spans=add_gold_spans,
        scores=scores, spans_key=spans_key, ents=ents, max_sentence_length=max_sentence_length,
        temperature=temperature, label_temperatures=label_temperatures, threshold=threshold, decoding=decoding,
        posterior_penalty=posterior_penalty, scorer=scorer,
    )


class NestedNER(EntityPipe):
    """Settings (all read from the config at load): ``suggester``,
    ``structure``, ``add_gold_spans``, ``scores``, ``spans_key``, ``ents``,
    ``max_sentence_length`` and the confidence settings. ``cfg``: the labels."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "nested_ner",
        *,
        suggester: Optional[Callable] = None,
        structure: str = "quadratic",
        add_gold_spans: bool = True,
        scores: bool = True,
        spans_key: str = "nested_ner",
        ents: Optional[str] = None,
        max_sentence_length: Optional[int] = 500,
        temperature: float = 1.0,
        label_temperatures: Optional[Dict[str, float]] = None,
        threshold: float = 0.0,
        decoding: str = "map",
        posterior_penalty: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        if suggester is None:
            suggester = build_all_spans_suggester()
        check_flat_view(name, ents, scores)
        self.setup(
            vocab, model, name, scorer, choices={"structure": STRUCTURES}, extra_losses=(f"{name}_gold_outside_space",),
            settings=dict(suggester=suggester, structure=structure, add_gold_spans=add_gold_spans, scores=scores,
                          spans_key=spans_key, ents=ents, max_sentence_length=max_sentence_length,
                          temperature=temperature, label_temperatures=label_temperatures,
                          threshold=threshold, decoding=decoding, posterior_penalty=posterior_penalty),
        )

    @property
    def suggester(self) -> Callable:
        return self.settings["suggester"]

    def score_labels(self) -> List[str]:
        """Mention score columns (T): the labels."""
        return list(self.labels)

    def initialize_model(self, sample: List[Doc]) -> None:
        """One mention score per label: nO = number of labels."""
        self.model.set_dim("nO", len(self.labels))
        self.model.initialize(X=(sample, None) if sample else None)

    def _batch(self, docs: List[Doc]) -> SentenceBatch:
        """The sentences and allowed spans of the Docs (the one place that
        checks for a parse, besides the suggester itself)."""
        self.check_parse(docs)
        doc_offsets, sentence_offsets = batch_offsets(docs)
        check_sentence_lengths(doc_offsets, sentence_offsets, None, self.settings["max_sentence_length"],
                               f"'{self.name}'", component_limit(self.name), dense=True)
        spans = suggested_spans(docs, self.suggester, doc_offsets, self.model.ops)
        sentence_of = np.searchsorted(sentence_offsets, spans, side="right") - 1
        spans = spans[sentence_of[:, 0] == sentence_of[:, 1]]
        return self._with_spans(doc_offsets, sentence_offsets, spans)

    @staticmethod
    def _with_spans(doc_offsets: np.ndarray, sentence_offsets: np.ndarray, spans: np.ndarray) -> SentenceBatch:
        """The batch whose allowed spans are ``spans`` (within sentences, sorted by (last, first))."""
        n_dense = int(nested_mentions.dense_span_offsets(sentence_offsets)[-1])
        if spans.shape[0] == n_dense:
            return SentenceBatch(doc_offsets, sentence_offsets, spans, None, None, n_dense)
        rows = nested_mentions.dense_rows(spans, sentence_offsets)
        mask = np.zeros(n_dense, dtype=bool)
        mask[rows] = True
        return SentenceBatch(doc_offsets, sentence_offsets, spans, rows, mask, n_dense)

    def _decode_args(self, batch: SentenceBatch, scores) -> Tuple:
        """The structure's arguments: dense scores (n_dense, T) (0 on the spans
        not allowed, which the mask excludes), sentences, structure, mask."""
        scores = self.model.ops.to_numpy(scores)
        if batch.rows is not None:
            dense = np.zeros((batch.n_dense, scores.shape[1]), dtype=scores.dtype)
            dense[batch.rows] = scores
            scores = dense
        return scores, batch.sentence_offsets, self.settings["structure"], None, batch.mask

    def predict(self, docs: Iterable[Doc]):
        """The analysis (MAP, or posterior with ``decoding = "posterior"``) of
        the scores divided by the temperatures and, when ``needs_marginals``,
        the marginals: (batch, label of each dense span (n_dense,) -1 for
        none, marginals (n_dense, T) or None)."""
        docs = list(docs)
        batch = self._batch(docs)
        args = self._decode_args(batch, self.tempered(self.model.predict((docs, batch.spans))))
        span_marginals = nested_mentions.marginals(*args)[1] if self.needs_marginals else None
        if self.settings["decoding"] == "posterior":
            _, labels = nested_mentions.posterior_decode(span_marginals, *args[1:], self.settings["posterior_penalty"])
        else:
            _, labels = nested_mentions.viterbi(*args)
        return batch, labels, span_marginals

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        docs = list(docs)
        batch, labels, span_marginals = predictions
        rows = np.flatnonzero(labels >= 0)
        spans = batch.spans[rows if batch.rows is None else np.searchsorted(batch.rows, rows)]
        probabilities = None if span_marginals is None else span_marginals[rows, labels[rows]]
        probabilities, spans, ids = self.confident(probabilities, spans, labels[rows] + 1)
        key = self.settings["spans_key"]
        written = self.written_scores(probabilities)
        for doc, (mentions, doc_probabilities) in zip(docs, self.scored_entity_spans(docs, batch.doc_offsets, spans,
                                                                                       ids, written)):
            write_span_group(doc, key, mentions, doc_probabilities)
        write_flat_view(self, docs, batch.doc_offsets, spans, ids, written)

    def training_batch(self, examples: List[Example]) -> Tuple[SentenceBatch, np.ndarray, int]:
        """The batch of the examples' predicted Docs (with add_gold_spans, the
        gold mentions added to the allowed spans), the target (n_dense, T): the
        largest subset of the gold mentions the space holds, and the number of
        gold mentions it cannot hold."""
        batch = self._batch([eg.predicted for eg in examples])
        entities, ids = self.gold_entities(examples, batch.doc_offsets, self.settings["spans_key"])
        sentence_of = np.searchsorted(batch.sentence_offsets, entities, side="right") - 1
        if np.any(sentence_of[:, 0] != sentence_of[:, 1]):
            raise ValueError(f"'{self.name}': a gold mention crosses a sentence boundary of its Doc")
        if batch.rows is not None and self.settings["add_gold_spans"] and entities.shape[0]:
            spans = merge_spans(batch.spans, entities, int(batch.doc_offsets[-1]))
            batch = self._with_spans(batch.doc_offsets, batch.sentence_offsets, spans)
        gold_rows = nested_mentions.dense_rows(entities, batch.sentence_offsets)
        gold = np.zeros((batch.n_dense, len(self.labels)))
        gold[gold_rows, ids - 1] = 1.0
        # the largest subset of the gold mentions the space holds: MAP with +1 per gold mention
        on_gold = np.zeros(batch.n_dense, dtype=bool)
        on_gold[gold_rows] = True
        kept_mask = on_gold if batch.mask is None else on_gold & batch.mask
        _, kept = nested_mentions.viterbi(2.0 * gold - 1.0, batch.sentence_offsets, self.settings["structure"], None, kept_mask)
        target = np.zeros_like(gold)
        chosen = np.flatnonzero(kept >= 0)
        target[chosen, kept[chosen]] = 1.0
        return batch, target, int(gold.sum() - target.sum())

    def learn_from(self, examples: List[Example], docs: List[Doc]) -> Tuple[float, Dict[str, float]]:
        training = self.training_batch(examples)
        scores, backprop = self.model.begin_update((docs, training[0].spans))
        loss, d_scores = self.get_loss(examples, scores, training=training)
        backprop(self.model.ops.asarray2f(d_scores))
        return loss, {f"{self.name}_gold_outside_space": training[2]}

    def get_loss(self, examples: Iterable[Example], scores, *, training=None) -> Tuple[float, np.ndarray]:
        """Negative log-likelihood of the gold analysis and its gradient with
        respect to ``scores`` (S, T), the mention scores the model gave the
        spans of ``training_batch(examples)`` (``training``: that batch, when the
        caller has it already): (loss, marginals minus the gold indicator)."""
        batch, target, _ = self.training_batch(list(examples)) if training is None else training
        if scores.shape[0] != batch.spans.shape[0]:
            raise ValueError(f"'{self.name}': {scores.shape[0]} mention scores for {batch.spans.shape[0]} spans "
                             "(score the spans of training_batch(examples))")
        args = self._decode_args(batch, scores)
        log_z, span_marginals = nested_mentions.marginals(*args)
        loss = float(log_z.sum() - (np.asarray(args[0], dtype=np.float64) * target).sum())
        d_scores = span_marginals - target
        if batch.rows is not None:
            d_scores = d_scores[batch.rows]
        return loss, d_scores.astype(np.float32)

    def reference_labels(self, example: Example) -> Iterable[str]:
        return (span.label_ for span in example.reference.spans.get(self.settings["spans_key"], []))
