"""``hypergraph_ner``: overlapping and nested mentions of unbounded length by
a mention hypergraph (Lu & Roth 2015), in time linear in the sentence length
and in the number of types.

The model scores, per token and type, the five hyperedge kinds of the
type's T and I nodes (``structures.mention_hypergraph``, sec. 3.2); the
component trains by the negative log-likelihood of the gold sub-hypergraph
(sec. 3.3, eq. 2: the union of the gold mentions' paths) and decodes the MAP
sub-hypergraph of each sentence into mentions, the type-I reading of
ambiguous ones (sec. 3.2). ``mention_penalty`` is added to every T -> I
hyperedge (sec. 3.5): raising it predicts more mentions; ``tune_penalty``
sets it for the best F1 on development data by the paper's fixed-step search
(sec. 3.7). Mentions go to ``doc.spans[spans_key]``; ``attrs["scores"]``
holds, per mention, the marginal probability that a mention of its type
starts at its first token (1 - the T -> X hyperedge marginal). Gold mentions
whose set decodes to another set (type-II pairs) are counted in the loss
``{name}_gold_ambiguous``. With ``heads`` (sec. 3.6: I nodes split into
before / within / after the head, 17 hyperedge kinds), each mention's head
is learnt from and written to ``doc.spans[spans_key + "_heads"]`` (one span
per mention, same order; the GUM reader puts GUM's minspan there), and the
scorer adds P/R/F of boundaries + type + head.
"""
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, SpanGroup
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Model

from ..readers.genia import heads_key
from ..structures import mention_hypergraph
from .chain_ner import DEFAULT_MODEL
from .doc_arrays import batch_offsets, require_parse
from .entity_pipe import EntityPipe



@Language.factory(
    "hypergraph_ner",
    assigns=["doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "mention_penalty": 0.0,
        "heads": False,
        "spans_key": "hypergraph_ner",
        "scorer": {"@scorers": "spacy_depner.nested_scorer.v1"},
    },
    default_score_weights={"spans_hypergraph_ner_f": 1.0, "spans_hypergraph_ner_p": 0.0, "spans_hypergraph_ner_r": 0.0},
)
def make_hypergraph_ner(nlp: Language, name: str, model: Model, mention_penalty: float, heads: bool, spans_key: str,
                        scorer: Optional[Callable]) -> "HypergraphNER":
    """model: a per-token scorer (``spacy_depner.TagScorer.v1``; its output
    width is set to n_types * the number of hyperedge kinds, 5 or 17 with
    heads); mention_penalty: the bias of every T -> I hyperedge (set by
    ``tune_penalty``); heads: also find each mention's head (sec. 3.6), read
    from and written to ``doc.spans[spans_key + "_heads"]``."""
    return HypergraphNER(nlp.vocab, model, name, mention_penalty=mention_penalty, heads=heads, spans_key=spans_key,
                         scorer=scorer)


class HypergraphNER(EntityPipe):
    def __init__(self, vocab: Vocab, model: Model, name: str = "hypergraph_ner", *, mention_penalty: float = 0.0,
                 heads: bool = False, spans_key: str = "hypergraph_ner", scorer: Optional[Callable] = None) -> None:
        self.setup(vocab, model, name, scorer, {}, (f"{name}_gold_ambiguous",),
                   mention_penalty=float(mention_penalty), heads=bool(heads), spans_key=spans_key)

    @property
    def n_kinds(self) -> int:
        return mention_hypergraph.n_kinds(self.cfg["heads"])

    def _inputs(self, docs: List[Doc]):
        if self.model.attrs.get("dependency_features"):
            require_parse(docs, self.name)
        n_tokens = sum(len(doc) for doc in docs)
        return docs, np.zeros((n_tokens, 0), dtype=np.int32)  # no gazetteer codes

    def _edge_scores(self, scores) -> np.ndarray:
        """(N, T, K) hyperedge scores from the model's (N, T * K) output."""
        return self.model.ops.to_numpy(scores).reshape(scores.shape[0], len(self.labels), self.n_kinds)

    def hyperedge_scores(self, docs: List[Doc]) -> np.ndarray:
        """(N, T, K) float32 hyperedge scores of the batch (for ``tune_penalty``)."""
        scores, _ = self.model.predict(self._inputs(docs))
        return self._edge_scores(scores)

    def predict(self, docs: Iterable[Doc]):
        docs = list(docs)
        return (*batch_offsets(docs), self.hyperedge_scores(docs))

    def decode(self, sentence_offsets: np.ndarray, edge_scores: np.ndarray, penalty: float) -> Tuple[np.ndarray, np.ndarray]:
        """MAP mentions (M, 3) [first, last, type] (M, 5 with heads: and
        head_first, head_last) and for each the probability that a mention of
        its type starts at its first token (1 - the T -> X marginal)."""
        heads = self.cfg["heads"]
        _, edges = mention_hypergraph.viterbi(edge_scores, sentence_offsets, penalty, heads)
        mentions = mention_hypergraph.edges_to_mentions(edges, sentence_offsets)
        _, edge_marginals = mention_hypergraph.marginals(edge_scores, sentence_offsets, penalty, heads)
        return mentions, 1.0 - edge_marginals[mentions[:, 0], mentions[:, 2], 0]  # kind 0: T -> X

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        docs = list(docs)
        doc_offsets, sentence_offsets, edge_scores = predictions
        mentions, probabilities = self.decode(sentence_offsets, edge_scores, self.cfg["mention_penalty"])
        doc_of = np.searchsorted(doc_offsets, mentions[:, 0], side="right") - 1
        key = self.cfg["spans_key"]
        spans = self.entity_spans(docs, doc_offsets, mentions[:, :2], mentions[:, 2] + 1)
        head_spans = self.entity_spans(docs, doc_offsets, mentions[:, 3:5], mentions[:, 2] + 1) if self.cfg["heads"] else None
        for d, doc in enumerate(docs):
            group = SpanGroup(doc, name=key, spans=spans[d])
            group.attrs["scores"] = probabilities[doc_of == d].astype(np.float32)
            doc.spans[key] = group
            if head_spans is not None:
                doc.spans[heads_key(key)] = head_spans[d]

    def gold_mentions(self, examples: List[Example], doc_offsets: np.ndarray) -> np.ndarray:
        """(M, 3) [first, last, type] of the reference mentions in batch
        coordinates; with heads (M, 5), the heads from ``spans_key + "_heads"``."""
        key = self.cfg["spans_key"]
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
        """The gold sub-hypergraph (N, T, K) and the number of gold mentions it does not give back."""
        mentions = self.gold_mentions(examples, doc_offsets)
        entities = mentions[:, :2]
        sentence = np.searchsorted(sentence_offsets, entities[:, 0], side="right") - 1
        if np.any(entities[:, 1] >= sentence_offsets[np.minimum(sentence + 1, len(sentence_offsets) - 1)]):
            raise ValueError(f"'{self.name}': a gold mention crosses a sentence boundary of its Doc")
        n_types = len(self.labels)
        edges = mention_hypergraph.mentions_to_edges(mentions, sentence_offsets, n_types)
        gold = np.unique(mentions, axis=0)
        return edges, gold.shape[0] - common_rows(gold, mention_hypergraph.edges_to_mentions(edges, sentence_offsets))

    def learn_from(self, examples: List[Example], docs: List[Doc]) -> Tuple[float, Dict[str, float]]:
        doc_offsets, sentence_offsets = batch_offsets(docs)
        (scores, transitions), backprop = self.model.begin_update(self._inputs(docs))
        gold, n_ambiguous = self._gold_edges(examples, doc_offsets, sentence_offsets)
        loss, d_edges = self.get_loss(examples, (sentence_offsets, self._edge_scores(scores), gold))
        backprop((self.model.ops.asarray2f(d_edges.reshape(scores.shape[0], -1)), self.model.ops.alloc2f(*transitions.shape)))
        return loss, {f"{self.name}_gold_ambiguous": n_ambiguous}

    def get_loss(self, examples, predictions) -> Tuple[float, np.ndarray]:
        """Negative log-likelihood of the gold sub-hypergraph (eq. 2 without
        the L2 term, which the optimizer applies) and its gradient: edge
        marginals minus the gold edge indicators (eq. 3)."""
        sentence_offsets, edge_scores, gold = predictions
        penalty = self.cfg["mention_penalty"]
        log_z, edge_marginals = mention_hypergraph.marginals(edge_scores, sentence_offsets, penalty, self.cfg["heads"])
        gold = np.asarray(gold, dtype=np.float64)
        gold_score = float((np.asarray(edge_scores, dtype=np.float64) * gold).sum() + penalty * self._opened(gold))
        return float(log_z.sum()) - gold_score, (edge_marginals - gold).astype(np.float32)

    def _opened(self, edges: np.ndarray) -> float:
        """Mentions opened by the T hyperedges of a sub-hypergraph: the number
        of times the penalty is added (twice for T -> B, W with heads)."""
        if not self.cfg["heads"]:
            return float(edges[:, :, mention_hypergraph.KIND_T_I].sum())
        return float(edges[:, :, [mention_hypergraph.HEAD_T_B, mention_hypergraph.HEAD_T_W]].sum()
                     + 2 * edges[:, :, mention_hypergraph.HEAD_T_BW].sum())

    def reference_labels(self, example: Example) -> Iterable[str]:
        return (span.label_ for span in example.reference.spans.get(self.cfg["spans_key"], []))

    def initialize_model(self, sample: List[Doc]) -> None:
        """Output width n_types * the number of hyperedge kinds, no gazetteer."""
        self.model.set_dim("nO", len(self.labels) * self.n_kinds)
        self.model.set_dim("n_gazetteer", 0)
        self.model.initialize(X=(sample, np.zeros((sum(len(d) for d in sample), 0), dtype=np.int32)) if sample else None)

    def tune_penalty(self, examples: Sequence[Example], step: float = 0.01, low: float = -3.0, high: float = 3.0,
                     batch_size: int = 256) -> Dict[str, float]:
        """Set ``mention_penalty`` to the value of low, low + step, ..., high
        with the best F1 of the mentions (with heads: boundaries + type +
        head) on ``examples`` (Lu & Roth 2015,
        sec. 3.7: a fixed-step search; the first best value on ties). The
        hyperedge scores are computed once; each value costs one MAP decoding.
        Returns the chosen penalty, its P/R/F and those of the previous one."""
        if step <= 0 or high < low:
            raise ValueError(f"need step > 0 and low <= high, not step={step}, low={low}, high={high}")
        examples = list(examples)
        docs = [eg.predicted for eg in examples]
        doc_offsets, sentence_offsets = batch_offsets(docs)
        edge_scores = np.concatenate([self.hyperedge_scores(docs[i:i + batch_size]) for i in range(0, len(docs), batch_size)]) \
            if docs else np.zeros((0, len(self.labels), self.n_kinds), dtype=np.float32)
        gold = np.unique(self.gold_mentions(examples, doc_offsets), axis=0)

        def prf(penalty: float) -> Dict[str, float]:
            _, edges = mention_hypergraph.viterbi(edge_scores, sentence_offsets, penalty, self.cfg["heads"])
            predicted = np.unique(mention_hypergraph.edges_to_mentions(edges, sentence_offsets), axis=0)
            tp = common_rows(gold, predicted)
            p, r = tp / max(predicted.shape[0], 1), tp / max(gold.shape[0], 1)
            return {"penalty": penalty, "p": p, "r": r, "f": 2 * p * r / max(p + r, 1e-12)}

        before = prf(self.cfg["mention_penalty"])
        grid = low + step * np.arange(int(round((high - low) / step)) + 1)
        best = max((prf(round(float(x), 10)) for x in grid), key=lambda result: result["f"])
        self.cfg["mention_penalty"] = best["penalty"]
        return {**{f"tuned_{k}": v for k, v in best.items()}, **{f"before_{k}": v for k, v in before.items()}}


def common_rows(a: np.ndarray, b: np.ndarray) -> int:
    """How many distinct rows of the int array ``a`` (M, C) are rows of ``b`` (M', C)."""
    a, b = np.unique(a, axis=0), np.unique(b, axis=0)
    _, counts = np.unique(np.concatenate([a, b]), axis=0, return_counts=True)
    return int(np.count_nonzero(counts == 2))
