"""``dgm_ner``: flat NER by a semi-Markov CRF over a lattice of candidate spans.

The lattice comes from ``suggester``, any spaCy suggester (``[components.dgm_ner.suggester]``):
``spacy_depner.dgm_suggester.v1`` (DGM valid spans, the default),
``spacy_depner.dgm_s_suggester.v1`` (single-arc spans) or
``spacy_depner.all_spans_suggester.v1`` (every span up to ``max_length``: the
semi-Markov CRF) of Jie, Muis & Lu (2017), or e.g. spaCy's
``spacy.ngram_suggester.v1``. Every single token is always added to the
suggested spans: an O segment is one token, so each token must be a segment.
Entities go to ``doc.ents``; with ``probabilities``, the marginal probability of each
predicted entity goes to ``doc.spans[spans_key].attrs["scores"]``.

Confidence settings (``EntityPipe``, ``confidence_settings``): ``temperature`` divides the span scores
and the transitions before decoding, ``label_temperatures`` (label, or "O" for
the outside column, to a temperature) the span scores of a label instead;
``threshold`` drops the entities whose
marginal is below it from ``doc.ents`` and the span group; ``decoding =
"posterior"`` predicts the segmentation with the largest sum of (marginal -
``posterior_penalty``) over its entities (``structures.lattice``).

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

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..doc_arrays.batch import DocBatch
from ..doc_arrays.entities import missing_entity_tokens
from ..doc_arrays.spans import chain_offsets, covered_tokens, with_single_tokens
from ..structures.lattice import LATTICE
from ..structures.lattice import layout as lattice_layout
from ..structures.protocol import Layout
from ..structures.trees.candidate_spans import merge_spans, span_index
from .confidence_settings import CONFIDENCE_DEFAULTS, confidence_factory
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe, Gold
from .renamed_settings import renamed_setting
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
        "probabilities": True,
        "spans_key": "dgm_ner",
        "max_sentence_length": 500,
        "incorrect_spans_key": None,
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.entity_scorer.v1"},
    },
    default_score_weights={
        "ents_f": 1.0,
        "ents_p": 0.0,
        "ents_r": 0.0,
        "ents_per_type": None,
        "ents_lattice_coverage": 0.0,
    },
)
@confidence_factory
def make_dgm_ner(
    nlp: Language,
    name: str,
    model: Model,
    suggester: Callable,
    add_gold_spans: bool,
    probabilities: bool,
    spans_key: str,
    max_sentence_length: Optional[int],
    scorer: Optional[Callable],
    incorrect_spans_key: Optional[str] = None,
    scores_key: Optional[str] = None,
    scores: Optional[bool] = None,
    **confidence,
) -> "DependencyGuidedNER":
    """model: the scores of each candidate span per label and of the
    transitions, over any tok2vec (``spacy_depner.SpanScorer.v1``;
    dependency_features = true adds each token's head and dependency label);
    suggester: the candidate spans (any spaCy suggester; single tokens are
    always added); add_gold_spans: during training, add the gold entities that
    the lattice lacks so that the loss is defined; probabilities: compute the
    marginals and write them to doc.spans[spans_key].attrs["scores"] (false:
    Viterbi only, faster); spans_key: the span group that holds the entities
    of doc.ents a second time, with their marginals; max_sentence_length: with
    a lattice of unbounded span length, a longer sentence is an error (null: no
    limit); incorrect_spans_key: null, or the span group of a reference Doc
    that holds mentions known to be wrong (rejected in review, as spaCy's
    ``ner`` reads it): training gives them probability 0 and marginalises
    what else is missing; the confidence settings (``confidence_settings``); scorer: the
    scores of ``nlp.evaluate`` and ``spacy train`` (``spacy_depner.entity_scorer.v1``:
    P/R/F of doc.ents, per type, and the share of gold entities in the
    lattice); scores_key and scores: the names of spans_key and probabilities
    in pipelines saved by earlier versions (read, never written)."""
    return DependencyGuidedNER(
        nlp.vocab,
        model,
        name,
        suggester=suggester,
        add_gold_spans=add_gold_spans,
        probabilities=renamed_setting(name, "probabilities", probabilities, "scores", scores, True),
        spans_key=renamed_setting(name, "spans_key", spans_key, "scores_key", scores_key, "dgm_ner"),
        max_sentence_length=max_sentence_length,
        scorer=scorer,
        incorrect_spans_key=incorrect_spans_key,
        **confidence,
    )


class DependencyGuidedNER(EntityPipe, factory="dgm_ner"):
    """Settings (all read from the config at load): ``suggester``,
    ``add_gold_spans``, ``probabilities``, ``spans_key``, ``max_sentence_length``,
    ``incorrect_spans_key`` and the confidence settings. ``cfg``: the labels. Structure: the
    segment lattice, one chain per run of sentences no span crosses."""

    structure = LATTICE
    writes_ents = True

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "dgm_ner",
        *,
        suggester: Optional[Callable] = None,
        add_gold_spans: bool = True,
        probabilities: bool = True,
        spans_key: str = "dgm_ner",
        max_sentence_length: Optional[int] = 500,
        scorer: Optional[Callable] = None,
        incorrect_spans_key: Optional[str] = None,
        **confidence,
    ) -> None:
        if suggester is None:
            suggester = build_dgm_suggester()
        self.setup(
            vocab,
            model,
            name,
            scorer,
            extra_losses=(f"{name}_gold_outside_lattice",),
            settings=dict(
                suggester=suggester,
                add_gold_spans=add_gold_spans,
                probabilities=probabilities,
                spans_key=spans_key,
                max_sentence_length=max_sentence_length,
                incorrect_spans_key=incorrect_spans_key,
                **confidence,
            ),
        )

    @property
    def suggester(self) -> Callable:
        return self.settings["suggester"]

    def score_labels(self) -> List[str]:
        """Span score columns (K + 1): "O", then the labels."""
        return ["O", *self.labels]

    def read(self, docs: List[Doc]) -> DocBatch:
        """The lattice of the Docs: the suggester's spans and every single
        token, after the parse check and the sentence lengths."""
        batch = super().read(docs)
        check_sentence_lengths(
            batch.doc_offsets,
            batch.sentence_offsets,
            spans_per_token(self.suggester),
            self.settings["max_sentence_length"],
            f"'{self.name}'",
            component_limit(self.name),
        )
        spans = self.suggest(batch)
        return batch._replace(spans=with_single_tokens(spans, batch.n_tokens))

    def layout(self, batch: DocBatch) -> Layout:
        """The lattice as independent chains: the Docs cut at every sentence
        start that no span crosses (``chain_offsets``)."""
        return lattice_layout(batch.spans, chain_offsets(batch.spans, batch.doc_offsets, batch.sentence_offsets))

    def model_input(self, batch: DocBatch):
        return batch.docs, batch.spans

    def training_batch(self, examples: List[Example]) -> Tuple[DocBatch, Layout, Gold, Dict[str, float]]:
        """The lattice of the examples' predicted Docs, with add_gold_spans
        augmented by every gold entity it lacks; per-span gold labels (S,)
        (-1: not a gold segment), with the tokens whose entity annotation is
        missing (their single-token O segments are then not read) and the
        rejected mentions (``incorrect_spans_key``); the number of gold entities the
        suggester's lattice lacked."""
        batch = self.read([eg.predicted for eg in examples])
        entities, ids = self.gold_entities(examples, batch.doc_offsets)
        batch, gold, n_outside = self.segment_labels(batch, entities, ids, self.settings["add_gold_spans"])
        return (
            batch,
            self.layout(batch),
            Gold(
                gold,
                missing_entity_tokens(examples, batch.doc_offsets),
                self.rejected_entities(examples, batch.doc_offsets),
            ),
            {f"{self.name}_gold_outside_lattice": n_outside},
        )

    def given_problem(self, batch: DocBatch, given) -> Tuple[DocBatch, Layout, np.ndarray]:
        """The lattice with the given entities added, and its per-span labels (``segment_labels``)."""
        batch, labels, _ = self.segment_labels(batch, given.entities, given.ids, True)
        return batch, self.layout(batch), labels

    def segment_labels(
        self, batch: DocBatch, entities: np.ndarray, ids: np.ndarray, add: bool
    ) -> Tuple[DocBatch, np.ndarray, int]:
        """The batch, its lattice augmented (``add``) by every entity of
        ``entities`` (E, 2) it lacks, else those entities left out; the label of
        each span (S,) for the segmentation of those entities (ids (E,) from
        1) and single-token O segments elsewhere (-1: not a segment); and
        the number of entities the suggester's lattice lacked."""
        outside = span_index(batch.spans, entities, batch.n_tokens) < 0
        if add and outside.any():
            batch = batch._replace(spans=merge_spans(batch.spans, entities[outside], batch.n_tokens))
        elif outside.any():
            entities, ids = entities[~outside], ids[~outside]
        labels = np.full(batch.spans.shape[0], -1, dtype=np.int64)
        labels[span_index(batch.spans, entities, batch.n_tokens)] = ids
        singles = np.flatnonzero(covered_tokens(entities, batch.n_tokens) == 0)
        labels[span_index(batch.spans, np.stack([singles, singles], axis=1), batch.n_tokens)] = 0
        return batch, labels, int(outside.sum())
