"""``nested_ner``: nested mentions by a span-based CRF (Corro 2023).

``space`` (the nested mention space) chooses the dynamic program: ``semi_markov`` (non-overlapping
mentions), ``cyk`` (nested, no partial overlap, O(n^3)) or ``quadratic``
(nested, each mention with at most one child longer than one word, O(n^2)).
``suggester`` (any spaCy suggester) chooses the spans that may be mentions:
by default every span of each sentence
(``spacy_depner.all_spans_suggester.v1``, ``max_length = null``);
``spacy_depner.dgm_suggester.v1`` restricts them to the DGM valid spans of the
Doc's trees (Jie, Muis & Lu 2017); a ``max_length`` of the suggester bounds the
mentions' length. Suggested spans that cross a sentence end are dropped. The
model scores the suggested spans only. Each sentence is one analysis; the
mentions go to ``doc.spans[spans_key]``, with ``probabilities`` their marginal
probabilities in ``attrs["scores"]``. ``ents`` also writes a flat view of
them to ``doc.ents`` (replacing what was there), for displaCy's "ent" style,
spaCy's entity scores and every reader of ``doc.ents``: null (default: none,
``doc.ents`` untouched), ``"outermost"`` (the mentions inside no other: every
analysis is laminar, so they never overlap) or ``"most_probable"`` (the
disjoint subset with the largest sum of marginal probabilities, the expected
number of correct entities; needs ``probabilities``); see
``structures.interval_selection``.

Confidence settings (``confidence_settings``): ``temperature`` divides the mention
scores before decoding, ``label_temperatures`` (label to temperature) the
scores of a label's mentions instead; ``threshold`` drops the mentions whose marginal is
below it from the span group and the flat view; ``decoding = "posterior"``
predicts the analysis of the structure with the largest sum of (marginal -
``posterior_penalty``) over its mentions (``structures.nested``).

A gold mention set the search space cannot hold is reduced, for the loss, to
its largest subset that it can hold (``NESTED.largest_subset``:
the structure's own Viterbi);
the dropped mentions are counted in the loss ``{name}_gold_outside_space``.
With ``add_gold_spans``, gold spans the suggester lacks are first added to the
allowed spans during training.
"""

from typing import Callable, Dict, Iterable, List, Literal, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..doc_arrays.batch import DocBatch
from ..doc_arrays.entities import unannotated_tokens
from ..structures.nested import NESTED
from ..structures.nested import layout as nested_layout
from ..structures.partial import touching_missing
from ..structures.protocol import Layout
from ..structures.trees.candidate_spans import merge_spans, span_index
from .confidence_settings import CONFIDENCE_DEFAULTS, confidence_factory
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe, Gold
from .renamed_settings import renamed_setting
from .score_names import nested_score_weights
from .span_groups import FLAT_VIEWS, check_flat_view
from .suggesters import ALL_SPANS, build_all_spans_suggester, check_sentence_lengths, component_limit

SPACES = NESTED.spaces

DEFAULT_MODEL = Config().from_str(
    """
[model]
@architectures = "spacy_depner.MentionScorer.v1"
"""
    + DEFAULT_TOK2VEC
)["model"]


@Language.factory(
    "nested_ner",
    assigns=["doc.spans", "doc.ents"],
    default_config={
        "model": DEFAULT_MODEL,
        "suggester": {"@misc": ALL_SPANS, "max_length": None},
        "space": "quadratic",
        "add_gold_spans": True,
        "probabilities": True,
        "spans_key": "nested_ner",
        "annotated_key": None,
        "incorrect_spans_key": None,
        "ents": None,
        "max_sentence_length": 500,
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.nested_scorer.v1"},
    },
    default_score_weights=nested_score_weights("nested_ner"),
)
@confidence_factory
def make_nested_ner(
    nlp: Language,
    name: str,
    model: Model,
    suggester: Callable,
    space: Literal[SPACES],
    add_gold_spans: bool,
    probabilities: bool,
    spans_key: str,
    ents: Optional[Literal[FLAT_VIEWS]],
    max_sentence_length: Optional[int],
    scorer: Optional[Callable],
    annotated_key: Optional[str] = None,
    incorrect_spans_key: Optional[str] = None,
    structure: Optional[str] = None,
    scores: Optional[bool] = None,
    **confidence,
) -> "NestedNER":
    """model: the score of each span per label, over any tok2vec
    (``spacy_depner.MentionScorer.v1``); suggester: the spans that may be
    mentions (default every span of each sentence;
    spacy_depner.dgm_suggester.v1: the DGM valid spans, needs a parse);
    space: "semi_markov" | "cyk" | "quadratic", the nested mention space; add_gold_spans: during
    training, the gold mentions that the suggester lacks join the allowed
    spans; annotated_key: null, or the span group of a reference Doc that
    marks its annotated regions: in training, mentions are known only there,
    and the loss marginalises the rest (a Doc without the group is annotated
    throughout; a gold mention wholly outside the regions is accepted:
    present, the rest unknown); incorrect_spans_key: null, or the span group of a reference
    Doc that holds mentions known to be wrong (rejected in review; spaCy
    ``ner``'s setting of the same name): training gives them probability 0;
    probabilities: compute the marginals for attrs["scores"] (false:
    Viterbi only, faster); spans_key: the span group of the predicted
    mentions, and of the gold mentions in the reference Docs; ents: null,
    "outermost" or "most_probable", the flat view written to doc.ents (needs
    probabilities); max_sentence_length: a longer sentence is an error (the spans of a
    sentence are n (n + 1) / 2; null: no limit); the confidence settings
    (``confidence_settings``); scorer: the scores of ``nlp.evaluate`` and
    ``spacy train`` (``spacy_depner.nested_scorer.v1``: P/R/F of the mentions
    in doc.spans[spans_key], per label, and of doc.ents when ents is set);
    structure and scores: the names of space and probabilities in pipelines
    saved by earlier versions (read, never written)."""
    return NestedNER(
        nlp.vocab,
        model,
        name,
        suggester=suggester,
        space=renamed_setting(name, "space", space, "structure", structure, "quadratic"),
        add_gold_spans=add_gold_spans,
        probabilities=renamed_setting(name, "probabilities", probabilities, "scores", scores, True),
        spans_key=spans_key,
        ents=ents,
        max_sentence_length=max_sentence_length,
        scorer=scorer,
        annotated_key=annotated_key,
        incorrect_spans_key=incorrect_spans_key,
        **confidence,
    )


class NestedNER(EntityPipe, factory="nested_ner"):
    """Settings (all read from the config at load): ``suggester``,
    ``space``, ``add_gold_spans``, ``probabilities``, ``spans_key``, ``annotated_key``,
    ``incorrect_spans_key``, ``ents``,
    ``max_sentence_length`` and the confidence settings. ``cfg``: the labels.
    Structure: the nested mentions of ``space``, one
    analysis per sentence."""

    structure = NESTED

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "nested_ner",
        *,
        suggester: Optional[Callable] = None,
        space: str = "quadratic",
        add_gold_spans: bool = True,
        probabilities: bool = True,
        spans_key: str = "nested_ner",
        ents: Optional[str] = None,
        max_sentence_length: Optional[int] = 500,
        scorer: Optional[Callable] = None,
        annotated_key: Optional[str] = None,
        incorrect_spans_key: Optional[str] = None,
        **confidence,
    ) -> None:
        if suggester is None:
            suggester = build_all_spans_suggester()
        check_flat_view(name, ents, probabilities)
        self.setup(
            vocab,
            model,
            name,
            scorer,
            choices={"space": SPACES},
            extra_losses=(f"{name}_gold_outside_space",),
            settings=dict(
                suggester=suggester,
                space=space,
                add_gold_spans=add_gold_spans,
                probabilities=probabilities,
                spans_key=spans_key,
                ents=ents,
                max_sentence_length=max_sentence_length,
                annotated_key=annotated_key,
                incorrect_spans_key=incorrect_spans_key,
                **confidence,
            ),
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

    def structure_options(self) -> Dict[str, object]:
        return {"space": self.settings["space"]}

    def read(self, docs: List[Doc]) -> DocBatch:
        """The sentences and the suggested spans inside them, after the parse
        check and the sentence lengths."""
        batch = super().read(docs)
        check_sentence_lengths(
            batch.doc_offsets,
            batch.sentence_offsets,
            None,
            self.settings["max_sentence_length"],
            f"'{self.name}'",
            component_limit(self.name),
            dense=True,
        )
        spans = self.suggest(batch)
        sentence_of = np.searchsorted(batch.sentence_offsets, spans, side="right") - 1
        return batch._replace(spans=spans[sentence_of[:, 0] == sentence_of[:, 1]])

    def layout(self, batch: DocBatch) -> Layout:
        return nested_layout(batch.spans, batch.sentence_offsets)

    def model_input(self, batch: DocBatch):
        return batch.docs, batch.spans

    def given_problem(self, batch: DocBatch, given) -> Tuple[DocBatch, Layout, np.ndarray]:
        """No fixed mention (the span group reads no preset entity): only the whitespace tokens are fixed, outside every mention."""
        return batch, self.layout(batch), np.full(batch.spans.shape[0], -1, dtype=np.int64)

    def training_batch(self, examples: List[Example]) -> Tuple[DocBatch, Layout, Gold, Dict[str, float]]:
        """The batch of the examples' predicted Docs (with add_gold_spans, the
        gold mentions added to the allowed spans), the gold analysis: the
        label of each span (S,) in the largest subset of the gold mentions the
        space holds (``largest_subset``) with the tokens outside the annotated
        regions (``annotated_key``), the gold mentions wholly outside them
        as accepted ones (present, all else there unknown) and the rejected
        mentions (``incorrect_spans_key``), and the number of gold mentions
        the space cannot hold."""
        batch = self.read([eg.predicted for eg in examples])
        entities, ids = self.gold_entities(examples, batch.doc_offsets, self.spans_key)
        sentence_of = np.searchsorted(batch.sentence_offsets, entities, side="right") - 1
        if np.any(sentence_of[:, 0] != sentence_of[:, 1]):
            raise ValueError(f"'{self.name}': a gold mention crosses a sentence boundary of its Doc")
        layout = self.layout(batch)
        if layout.rows is not None and self.settings["add_gold_spans"] and entities.shape[0]:
            batch = batch._replace(spans=merge_spans(batch.spans, entities, batch.n_tokens))
            layout = self.layout(batch)
        mentions = np.unique(np.concatenate([entities, (ids - 1)[:, None]], axis=1), axis=0).reshape(-1, 3)
        rows = span_index(batch.spans, mentions[:, :2], batch.n_tokens)
        mentions, rows = mentions[rows >= 0], rows[rows >= 0]
        kept = NESTED.largest_subset(mentions, batch.sentence_offsets, **self.structure_options())
        gold = np.full(batch.spans.shape[0], -1, dtype=np.int64)
        gold[rows[kept]] = mentions[kept, 2]
        n_lost = int(np.unique(np.concatenate([entities, ids[:, None]], axis=1), axis=0).shape[0] - kept.sum())
        missing = unannotated_tokens(examples, batch.doc_offsets, self.settings["annotated_key"], entities, self.name)
        accepted = None
        if missing is not None:
            outside = kept & touching_missing(mentions[:, :2], missing)
            accepted, gold[rows[outside]] = mentions[outside], -1
        rejected = self.rejected_entities(examples, batch.doc_offsets)
        return batch, layout, Gold(gold, missing, rejected, accepted), {f"{self.name}_gold_outside_space": n_lost}

    def reference_labels(self, example: Example) -> Iterable[str]:
        return (span.label_ for span in example.reference.spans.get(self.settings["spans_key"], []))
