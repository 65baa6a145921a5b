"""``nested_ner``: nested mentions by a span-based CRF (Corro 2023).

``structure`` chooses the search space: ``semi_markov`` (non-overlapping
mentions), ``cyk`` (nested, no partial overlap, O(n^3)) or ``quadratic``
(nested, each mention with at most one child longer than one word, O(n^2)).
With ``dependency_guided``, mentions are restricted to the DGM valid spans of
the Doc's trees (Jie, Muis & Lu 2017). Each sentence is one analysis; the
mentions go to ``doc.spans[spans_key]`` with their marginal probabilities in
``attrs["scores"]``.

A gold mention set the search space cannot hold is reduced, for the loss, to
its largest subset that it can hold (found by the structure's own Viterbi);
the dropped mentions are counted in the loss ``{name}_gold_outside_space``.
With ``dependency_guided`` and ``add_gold_spans``, gold spans that are not
valid spans are first added to the mask during training.
"""
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, SpanGroup
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Model

from ..structures import nested_mentions
from ..structures.candidate_spans import all_spans, span_index, valid_spans
from .doc_arrays import batch_offsets, doc_heads, require_parse
from .dgm_ner import DEFAULT_MODEL
from .entity_pipe import EntityPipe

STRUCTURES = nested_mentions.STRUCTURES



class SentenceBatch(NamedTuple):
    """Sentences of a batch of Docs as the structure's documents: doc_offsets
    (B + 1,) of the Docs, sentence_offsets (U + 1,), spans (S, 2) every span of
    every sentence in the dense layout, mask (S,) bool or None."""

    doc_offsets: np.ndarray
    sentence_offsets: np.ndarray
    spans: np.ndarray
    mask: Optional[np.ndarray]


@Language.factory(
    "nested_ner",
    assigns=["doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "structure": "quadratic",
        "max_length": None,
        "dependency_guided": False,
        "add_gold_spans": True,
        "spans_key": "nested_ner",
        "max_sentence_length": 500,
        "scorer": {"@scorers": "spacy_depner.nested_scorer.v1"},
    },
    default_score_weights={"spans_nested_ner_f": 1.0, "spans_nested_ner_p": 0.0, "spans_nested_ner_r": 0.0},
)
def make_nested_ner(
    nlp: Language,
    name: str,
    model: Model,
    structure: str,
    max_length: Optional[int],
    dependency_guided: bool,
    add_gold_spans: bool,
    spans_key: str,
    max_sentence_length: int,
    scorer: Optional[Callable],
) -> "NestedNER":
    """structure: "semi_markov" | "cyk" | "quadratic"; max_length: longest
    mention (null: unbounded); dependency_guided: mentions only on DGM valid
    spans (needs a parse); max_sentence_length: every span of a sentence is
    scored (n (n + 1) / 2), so longer sentences are an error."""
    return NestedNER(
        nlp.vocab, model, name, structure=structure, max_length=max_length, dependency_guided=dependency_guided,
        add_gold_spans=add_gold_spans, spans_key=spans_key, max_sentence_length=max_sentence_length, scorer=scorer,
    )


class NestedNER(EntityPipe):
    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "nested_ner",
        *,
        structure: str = "quadratic",
        max_length: Optional[int] = None,
        dependency_guided: bool = False,
        add_gold_spans: bool = True,
        spans_key: str = "nested_ner",
        max_sentence_length: int = 500,
        scorer: Optional[Callable] = None,
    ) -> None:
        self.setup(
            vocab, model, name, scorer, {"structure": STRUCTURES}, (f"{name}_gold_outside_space",),
            structure=structure, max_length=max_length, dependency_guided=dependency_guided,
            add_gold_spans=add_gold_spans, spans_key=spans_key, max_sentence_length=max_sentence_length,
        )

    def _batch(self, docs: List[Doc]) -> SentenceBatch:
        if self.cfg["dependency_guided"] or self.model.attrs.get("dependency_features"):
            require_parse(docs, self.name)
        doc_offsets, sentence_offsets = batch_offsets(docs)
        longest = int(np.diff(sentence_offsets).max(initial=0))
        if longest > self.cfg["max_sentence_length"]:
            raise ValueError(
                f"'{self.name}' scores every span of a sentence, and a sentence has {longest} tokens "
                f"(max_sentence_length = {self.cfg['max_sentence_length']}). Split the Docs into sentences "
                "(a parser or a sentencizer before the component) or raise max_sentence_length."
            )
        spans = all_spans(sentence_offsets, None)
        mask = None
        if self.cfg["dependency_guided"]:
            heads = np.concatenate([doc_heads(doc, offset) for doc, offset in zip(docs, doc_offsets)]) if docs else np.zeros(0, np.int64)
            mask = np.zeros(spans.shape[0], dtype=bool)
            mask[nested_mentions.dense_rows(valid_spans(heads, sentence_offsets, self.cfg["max_length"]), sentence_offsets)] = True
        return SentenceBatch(doc_offsets, sentence_offsets, spans, mask)

    def _structure_args(self, batch: SentenceBatch, scores, mask=None) -> Tuple:
        return (scores, batch.sentence_offsets, self.cfg["structure"],
                self.cfg["max_length"], batch.mask if mask is None else mask)

    def _mention_scores(self, docs: List[Doc], batch: SentenceBatch, is_train: bool):
        """Mention scores (S, T) from the span scorer (its O column and its
        transitions play no part here), and the backprop closure."""
        if is_train:
            (scores, _), backprop = self.model.begin_update((docs, batch.spans))
        else:
            (scores, _), backprop = self.model.predict((docs, batch.spans)), None
        return self.model.ops.to_numpy(scores)[:, 1:], backprop

    def predict(self, docs: Iterable[Doc]):
        """(batch, label of each span (S,) -1 for none, marginals (S, T))."""
        docs = list(docs)
        batch = self._batch(docs)
        scores, _ = self._mention_scores(docs, batch, is_train=False)
        args = self._structure_args(batch, scores)
        _, labels = nested_mentions.viterbi(*args)
        _, span_marginals = nested_mentions.marginals(*args)
        return batch, labels, span_marginals

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        batch, labels, span_marginals = predictions
        rows = np.flatnonzero(labels >= 0)
        probabilities = span_marginals[rows, labels[rows]].astype(np.float32)
        doc_of_row = np.searchsorted(batch.doc_offsets, batch.spans[rows, 0], side="right") - 1
        key = self.cfg["spans_key"]
        for d, (doc, spans) in enumerate(zip(docs, self.entity_spans(docs, batch.doc_offsets, batch.spans[rows], labels[rows] + 1))):
            group = SpanGroup(doc, name=key, spans=spans)
            group.attrs["scores"] = probabilities[doc_of_row == d]
            doc.spans[key] = group

    def _gold(self, examples: List[Example], batch: SentenceBatch, n_labels: int):
        """Gold indicator (S, T), the mask for training (gold spans added when
        add_gold_spans), and the number of gold mentions the space cannot hold."""
        entities, ids = self.gold_entities(examples, batch.doc_offsets, self.cfg["spans_key"])
        ids = ids - 1
        rows = span_index(batch.spans, entities, int(batch.doc_offsets[-1]))
        if np.any(rows < 0):
            raise ValueError(f"'{self.name}': a gold mention crosses a sentence boundary of its Doc")
        gold = np.zeros((batch.spans.shape[0], n_labels))
        gold[rows, ids] = 1.0
        mask = batch.mask
        if mask is not None and self.cfg["add_gold_spans"]:
            mask = mask.copy()
            mask[rows] = True
        # the largest subset of the gold mentions the space holds: MAP with +1 per gold mention
        on_gold = np.zeros(batch.spans.shape[0], dtype=bool)
        on_gold[rows] = True
        kept_mask = on_gold if mask is None else on_gold & mask
        _, kept = nested_mentions.viterbi(2.0 * gold - 1.0, batch.sentence_offsets, self.cfg["structure"],
                                          self.cfg["max_length"], kept_mask)
        target = np.zeros_like(gold)
        chosen = np.flatnonzero(kept >= 0)
        target[chosen, kept[chosen]] = 1.0
        return target, mask, int(gold.sum() - target.sum())

    def learn_from(self, examples: List[Example], docs: List[Doc]) -> Tuple[float, Dict[str, float]]:
        batch = self._batch(docs)
        scores, backprop = self._mention_scores(docs, batch, is_train=True)
        target, mask, n_missing = self._gold(examples, batch, scores.shape[1])
        loss, d_mentions = self.get_loss(examples, (batch, scores, target, mask))
        d_scores = np.zeros((d_mentions.shape[0], d_mentions.shape[1] + 1), dtype=np.float32)
        d_scores[:, 1:] = d_mentions
        n_transitions = self.model.get_param("transitions").shape[0]
        backprop((self.model.ops.asarray2f(d_scores), self.model.ops.alloc2f(n_transitions, n_transitions)))
        return loss, {f"{self.name}_gold_outside_space": n_missing}

    def get_loss(self, examples, predictions) -> Tuple[float, np.ndarray]:
        """Negative log-likelihood of the gold analysis and its gradient,
        marginals minus the gold indicator."""
        batch, scores, target, mask = predictions
        log_z, span_marginals = nested_mentions.marginals(*self._structure_args(batch, scores, mask))
        loss = float(log_z.sum() - (np.asarray(scores, dtype=np.float64) * target).sum())
        return loss, (span_marginals - target).astype(np.float32)

    def reference_labels(self, example: Example) -> Iterable[str]:
        return (span.label_ for span in example.reference.spans.get(self.cfg["spans_key"], []))
