"""``hypergraph_ner``: overlapping and nested mentions of unbounded length by
a mention hypergraph (Lu & Roth 2015), in time linear in the sentence length
and in the number of types.

The model (``spacy_depner.TokenScorer.v1`` by default) scores, per token and
type, the five hyperedge kinds of the type's T and I nodes
(``structures.mention_hypergraph``, sec. 3.2): its output width is set to
n_types * n_kinds. The component trains by the negative log-likelihood of the
gold sub-hypergraph (sec. 3.3, eq. 2: the union of the gold mentions' paths)
and decodes, in ``predict``, the MAP sub-hypergraph of each sentence into
mentions, the type-I reading of ambiguous ones (sec. 3.2).

Settings read from the config each time the pipeline is built or loaded (so
``spacy.load(path, config=...)`` overrides them): ``mention_penalty``, added
to every T -> I hyperedge (sec. 3.5): raising it predicts more mentions;
``spacy_depner.evaluation.penalty_tuning`` sets it for the best F1 on
development data by the paper's fixed-step search (sec. 3.7); ``scores``: if
true, ``attrs["scores"]`` of the span group holds, per mention, the marginal
probability that a mention of its type starts at its first token (1 - the
T -> X hyperedge marginal, one inside-outside pass); false skips that pass
and writes no scores; ``spans_key``; ``ents``: also write a flat view of the
mentions to ``doc.ents`` (replacing what was there): null (default: none),
``"outermost"`` (the mentions inside no other; crossing mentions of two types,
or one span with two types, are resolved as spaCy's ``filter_spans`` does:
the longer, then the earlier, then the more probable type, then the type
first in the labels) or ``"most_probable"`` (the disjoint subset with the
largest sum of ``attrs["scores"]``; needs ``scores``), see
``structures.interval_selection``. Saved with the weights: ``heads`` (sec.
3.6: I nodes split into before / within / after the head, 17 hyperedge kinds;
each mention's head is learnt from and written to ``doc.spans[spans_key +
"_heads"]``, one span per mention, same order; the GUM reader puts GUM's
minspan there, and the scorer adds P/R/F of boundaries + type + head).

Confidence settings (``EntityPipe``): ``temperature`` divides the hyperedge
scores and the mention penalty before decoding, ``label_temperatures`` (type
to temperature) the hyperedge scores of a type instead; ``threshold`` drops the
mentions whose probability (``attrs["scores"]``) is below it, from the span
groups and the flat view; ``decoding = "posterior"`` (without heads) predicts
the mention set, among those a sub-hypergraph reads, with the largest sum of
(mention marginal - ``posterior_penalty``) (``hypergraph_posterior``).

Gold mentions whose set decodes to another set (type-II pairs) are counted in
the loss ``{name}_gold_ambiguous``.

The public interface used by the penalty search: ``hyperedge_scores(docs)``
(N, T, K), ``gold_mentions(examples, doc_offsets)``, ``cfg["heads"]``,
``spans_key`` and ``mention_penalty`` (the attribute is
``settings["mention_penalty"]``).
"""
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model
from thinc.types import Floats2d

from ..ml import token_scorer  # noqa: F401  (registers spacy_depner.TokenScorer.v1, the default model)
from ..structures import hypergraph_posterior, mention_hypergraph
from ..util.numbers import is_finite_number
from .doc_arrays import batch_offsets
from .confidence_settings import CONFIDENCE_DEFAULTS
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe
from .span_groups import check_flat_view, heads_key, write_flat_view, write_span_group

# The scorer's other settings are its defaults (hidden_width 128, maxout_pieces 2,
# no dependency features), which spaCy fills into nlp.config.
DEFAULT_MODEL = Config().from_str('[model]\n@architectures = "spacy_depner.TokenScorer.v1"\n' + DEFAULT_TOK2VEC)["model"]


@Language.factory(
    "hypergraph_ner",
    assigns=["doc.spans", "doc.ents"],
    default_config={
        "model": DEFAULT_MODEL,
        "mention_penalty": 0.0,
        "heads": False,
        "scores": True,
        "spans_key": "hypergraph_ner",
        "ents": None,
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.nested_scorer.v1"},
    },
    default_score_weights={"spans_hypergraph_ner_f": 1.0, "spans_hypergraph_ner_p": 0.0, "spans_hypergraph_ner_r": 0.0},
)
def make_hypergraph_ner(nlp: Language, name: str, model: Model, mention_penalty: float, heads: bool, scores: bool,
                        spans_key: str, ents: Optional[str], temperature: float, label_temperatures: Dict[str, float],
                        threshold: float, decoding: str, posterior_penalty: float,
                        scorer: Optional[Callable]) -> "HypergraphNER":
    """model: a per-token scorer ``List[Doc] -> Floats2d`` (``spacy_depner.TokenScorer.v1``;
    its output width is set to n_types * the number of hyperedge kinds, 5 or
    17 with heads); mention_penalty: the bias of every T -> I hyperedge
    (higher: more mentions); heads: also find each mention's head (sec. 3.6),
    read from and written to ``doc.spans[spans_key + "_heads"]``; scores:
    write each mention's probability to ``attrs["scores"]`` (false: skip the
    inside-outside pass); ents: null, "outermost" or "most_probable", the flat
    view written to doc.ents (needs scores); temperature (> 0): the hyperedge
    scores and the mention penalty are divided by it before decoding;
    label_temperatures: {type: temperature > 0}, the divisor of that type's
    hyperedge scores instead; threshold (in [0, 1]): mentions with a lower probability (attrs["scores"])
    are dropped; decoding: "map" or "posterior" (the mention set with the most
    expected correct mentions minus posterior_penalty (>= 0) each). A
    threshold above 0 or posterior decoding computes the probabilities even
    with scores = false."""
    return HypergraphNER(nlp.vocab, model, name, mention_penalty=mention_penalty, heads=heads, scores=scores,
                         spans_key=spans_key, ents=ents, temperature=temperature,
                         label_temperatures=label_temperatures, threshold=threshold, decoding=decoding,
                         posterior_penalty=posterior_penalty, scorer=scorer)


class HypergraphPrediction(NamedTuple):
    """What ``predict`` decodes: doc_offsets (B + 1,); mentions (M, 3)
    [first, last, type] in batch coordinates (M, 5 with heads: and
    head_first, head_last); probabilities (M,) or None without ``scores``."""

    doc_offsets: np.ndarray
    mentions: np.ndarray
    probabilities: Optional[np.ndarray]


class HypergraphNER(EntityPipe):
    def __init__(self, vocab: Vocab, model: Model, name: str = "hypergraph_ner", *, mention_penalty: float = 0.0,
                 heads: bool = False, scores: bool = True, spans_key: str = "hypergraph_ner",
                 ents: Optional[str] = None, temperature: float = 1.0,
                 label_temperatures: Optional[Dict[str, float]] = None, threshold: float = 0.0, decoding: str = "map",
                 posterior_penalty: float = 0.5, scorer: Optional[Callable] = None) -> None:
        check_flat_view(name, ents, scores)
        self.setup(vocab, model, name, scorer, extra_losses=(f"{name}_gold_ambiguous",), saved=dict(heads=bool(heads)),
                   settings=dict(mention_penalty=float(mention_penalty), scores=bool(scores), spans_key=spans_key,
                                 ents=ents, temperature=temperature, label_temperatures=label_temperatures,
                                 threshold=threshold, decoding=decoding, posterior_penalty=posterior_penalty))
        if heads and decoding == "posterior":
            raise ValueError(f"'{name}' has heads = true and decoding = \"posterior\": posterior decoding is available "
                             "without heads only (the reading of a sub-hypergraph also assigns heads). "
                             "Use decoding = \"map\", or a model trained with heads = false.")

    @property
    def mention_penalty(self) -> float:
        """The bias of every T -> I hyperedge in decoding and training
        (``settings["mention_penalty"]``, from the config)."""
        return self.settings["mention_penalty"]

    @mention_penalty.setter
    def mention_penalty(self, penalty: float) -> None:
        if not is_finite_number(penalty):
            raise ValueError(f"mention_penalty must be a finite number, not {penalty!r}")
        self.settings["mention_penalty"] = float(penalty)

    @property
    def spans_key(self) -> str:
        return self.settings["spans_key"]

    def score_labels(self) -> List[str]:
        """Hyperedge score axis 1 (T): the types."""
        return list(self.labels)

    @property
    def n_kinds(self) -> int:
        return mention_hypergraph.n_kinds(self.cfg["heads"])

    def _forward(self, docs: List[Doc], is_train: bool):
        """The model's token scores (N, T * K) and, in training, their backprop;
        the parse check of a model with dependency features."""
        self.check_parse(docs)
        if is_train:
            return self.model.begin_update(docs)
        return self.model.predict(docs), None

    def _edge_scores(self, scores: Floats2d) -> np.ndarray:
        """(N, T, K) hyperedge scores on the CPU from the model's (N, T * K) output."""
        return self.model.ops.to_numpy(scores).reshape(scores.shape[0], len(self.labels), self.n_kinds)

    def hyperedge_scores(self, docs: List[Doc]) -> np.ndarray:
        """(N, T, K) float32 hyperedge scores of the batch, K = ``n_kinds``
        (what the penalty search decodes with other penalties): the model's
        own, which ``decode`` divides by the temperature, with the penalty."""
        scores, _ = self._forward(list(docs), is_train=False)
        return self._edge_scores(scores)

    def predict(self, docs: Iterable[Doc]) -> HypergraphPrediction:
        """The MAP mentions of each sentence, and with ``scores`` their probabilities."""
        docs = list(docs)
        doc_offsets, sentence_offsets = batch_offsets(docs)
        mentions, probabilities = self.decode(sentence_offsets, self.hyperedge_scores(docs), self.mention_penalty,
                                              self.needs_marginals)
        return HypergraphPrediction(doc_offsets, mentions, probabilities)

    def decode(self, sentence_offsets: np.ndarray, edge_scores: np.ndarray, penalty: float,
               with_probabilities: bool = True) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """The mentions (M, 3) [first, last, type] (M, 5 with heads: and
        head_first, head_last) of the MAP sub-hypergraph, or with ``decoding =
        "posterior"`` the posterior mentions (``hypergraph_posterior``: the
        readable mention set with the largest sum of (mention marginal -
        ``posterior_penalty``)), and, if ``with_probabilities``, for each the
        probability that a mention of its type starts at its first token
        (1 - the T -> X marginal), else None. The edge scores are divided by
        their type's temperature first, ``penalty`` by ``temperature`` (one
        temperature does not change the MAP)."""
        heads = self.cfg["heads"]
        edge_scores, penalty = self.tempered((edge_scores, penalty))
        if self.settings["decoding"] == "posterior":
            _, mentions, _ = hypergraph_posterior.posterior_decode(edge_scores, sentence_offsets, penalty, heads,
                                                                   self.settings["posterior_penalty"])
        else:
            _, edges = mention_hypergraph.viterbi(edge_scores, sentence_offsets, penalty, heads)
            mentions = mention_hypergraph.edges_to_mentions(edges, sentence_offsets)
        if not with_probabilities:
            return mentions, None
        _, edge_marginals = mention_hypergraph.marginals(edge_scores, sentence_offsets, penalty, heads)
        return mentions, 1.0 - edge_marginals[mentions[:, 0], mentions[:, 2], mention_hypergraph.KIND_T_X]

    def set_annotations(self, docs: Iterable[Doc], predictions: HypergraphPrediction) -> None:
        docs = list(docs)
        doc_offsets, mentions, probabilities = predictions
        probabilities, mentions = self.confident(probabilities, mentions)
        probabilities = self.written_scores(probabilities)
        key = self.spans_key
        spans = self.scored_entity_spans(docs, doc_offsets, mentions[:, :2], mentions[:, 2] + 1, probabilities)
        head_spans = self.entity_spans(docs, doc_offsets, mentions[:, 3:5], mentions[:, 2] + 1) if self.cfg["heads"] else None
        for d, (doc, (doc_spans, doc_probabilities)) in enumerate(zip(docs, spans)):
            write_span_group(doc, key, doc_spans, doc_probabilities)
            if head_spans is not None:
                write_span_group(doc, heads_key(key), head_spans[d])
        write_flat_view(self, docs, doc_offsets, mentions[:, :2], mentions[:, 2] + 1, probabilities)

    def gold_mentions(self, examples: List[Example], doc_offsets: np.ndarray) -> np.ndarray:
        """(M, 3) [first, last, type] of the reference mentions in batch
        coordinates; with heads (M, 5), the heads from ``spans_key + "_heads"``."""
        key = self.spans_key
        entities, ids = self.gold_entities(examples, doc_offsets, key)
        mentions = np.concatenate([entities, (ids - 1)[:, None]], axis=1).astype(np.int64)
        if not self.cfg["heads"]:
            return mentions
        if any(len(eg.reference.spans.get(key, [])) and heads_key(key) not in eg.reference.spans for eg in examples):
            raise ValueError(f"'{self.name}' has heads = true: the reference Docs need the mentions' heads in "
                             f"doc.spans[{heads_key(key)!r}], one per mention of doc.spans[{key!r}], in the same order")
        head_rows, _ = self.gold_entities(examples, doc_offsets, heads_key(key))
        return np.concatenate([mentions, head_rows], axis=1)

    def _gold_edges(self, examples: List[Example], doc_offsets: np.ndarray, sentence_offsets: np.ndarray):
        """The gold sub-hypergraph (N, T, K) and the number of distinct gold
        mentions it does not give back."""
        mentions = self.gold_mentions(examples, doc_offsets)
        entities = mentions[:, :2]
        sentence = np.searchsorted(sentence_offsets, entities[:, 0], side="right") - 1
        if np.any(entities[:, 1] >= sentence_offsets[np.minimum(sentence + 1, len(sentence_offsets) - 1)]):
            raise ValueError(f"'{self.name}': a gold mention crosses a sentence boundary of its Doc")
        edges = mention_hypergraph.mentions_to_edges(mentions, sentence_offsets, len(self.labels))
        decoded = np.unique(mention_hypergraph.edges_to_mentions(edges, sentence_offsets), axis=0)
        # |gold ∪ decoded| - |decoded| = the gold rows that are not decoded rows
        n_lost = np.unique(np.concatenate([mentions, decoded]), axis=0).shape[0] - decoded.shape[0]
        return edges, int(n_lost)

    def learn_from(self, examples: List[Example], docs: List[Doc]) -> Tuple[float, Dict[str, float]]:
        scores, backprop = self._forward(docs, is_train=True)
        loss, d_scores, n_ambiguous = self._loss(examples, scores)
        backprop(d_scores)
        return loss, {f"{self.name}_gold_ambiguous": n_ambiguous}

    def get_loss(self, examples: Iterable[Example], scores: Floats2d) -> Tuple[float, Floats2d]:
        """Negative log-likelihood of the gold sub-hypergraph (eq. 2 without
        the L2 term, which the optimizer applies) and its gradient with
        respect to the model's output ``scores`` (N, T * K): edge marginals
        minus the gold edge indicators (eq. 3)."""
        loss, d_scores, _ = self._loss(list(examples), scores)
        return loss, d_scores

    def _loss(self, examples: List[Example], scores: Floats2d) -> Tuple[float, Floats2d, int]:
        """``get_loss`` and the number of gold mentions the gold sub-hypergraph loses."""
        doc_offsets, sentence_offsets = batch_offsets([eg.predicted for eg in examples])
        gold, n_ambiguous = self._gold_edges(examples, doc_offsets, sentence_offsets)
        edge_scores = self._edge_scores(scores)
        penalty = self.mention_penalty
        log_z, edge_marginals = mention_hypergraph.marginals(edge_scores, sentence_offsets, penalty, self.cfg["heads"])
        gold = gold.astype(np.float64)
        gold_score = float((edge_scores.astype(np.float64) * gold).sum() + penalty * self._opened(gold))
        d_scores = (edge_marginals - gold).astype(np.float32).reshape(scores.shape)
        return float(log_z.sum()) - gold_score, self.model.ops.asarray2f(d_scores), n_ambiguous

    def _opened(self, edges: np.ndarray) -> float:
        """Mentions opened by the T hyperedges of a sub-hypergraph: the number
        of times the penalty is added (twice for T -> B, W with heads)."""
        if not self.cfg["heads"]:
            return float(edges[:, :, mention_hypergraph.KIND_T_I].sum())
        return float(edges[:, :, [mention_hypergraph.HEAD_T_B, mention_hypergraph.HEAD_T_W]].sum()
                     + 2 * edges[:, :, mention_hypergraph.HEAD_T_BW].sum())

    def reference_labels(self, example: Example) -> Iterable[str]:
        return (span.label_ for span in example.reference.spans.get(self.spans_key, []))

    def initialize_model(self, sample: List[Doc]) -> None:
        """Output width n_types * the number of hyperedge kinds."""
        self.model.set_dim("nO", len(self.labels) * self.n_kinds)
        self.model.initialize(X=sample if sample else None)
