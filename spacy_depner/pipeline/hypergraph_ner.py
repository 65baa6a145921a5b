"""``hypergraph_ner``: overlapping and nested mentions of unbounded length by
a mention hypergraph (Lu & Roth 2015), in time linear in the sentence length
and in the number of types.

The model (``spacy_depner.TokenScorer.v1`` by default) scores, per token and
type, the five hyperedge kinds of the type's T and I nodes
(``structures.hypergraph``, sec. 3.2): its output width is set to
n_types * n_kinds. The component trains by the negative log-likelihood of the
gold sub-hypergraph (sec. 3.3, eq. 2: the union of the gold mentions' paths)
and decodes, in ``predict``, the MAP sub-hypergraph of each sentence into
mentions, the type-I reading of ambiguous ones (sec. 3.2).

Settings read from the config each time the pipeline is built or loaded (so
``spacy.load(path, config=...)`` overrides them): ``mention_penalty``, added
to every T -> I hyperedge (sec. 3.5): raising it predicts more mentions;
``spacy_depner.evaluation.penalty_tuning`` sets it for the best F1 on
development data by the paper's fixed-step search (sec. 3.7); ``probabilities``: if
true, ``attrs["scores"]`` of the span group holds, per mention, the marginal
probability that a mention of its type starts at its first token (1 - the
T -> X hyperedge marginal, one inside-outside pass); false skips that pass
and writes no scores; ``spans_key``; ``ents``: also write a flat view of the
mentions to ``doc.ents`` (replacing what was there): null (default: none),
``"outermost"`` (the mentions inside no other; crossing mentions of two types,
or one span with two types, are resolved as spaCy's ``filter_spans`` does:
the longer, then the earlier, then the more probable type, then the type
first in the labels) or ``"most_probable"`` (the disjoint subset with the
largest sum of ``attrs["scores"]``; needs ``probabilities``), see
``structures.interval_selection``. Saved with the weights: ``heads`` (sec.
3.6: I nodes split into before / within / after the head, 17 hyperedge kinds;
each mention's head is learnt from and written to ``doc.spans[spans_key +
"_heads"]``, one span per mention, same order; the GUM reader puts GUM's
minspan there, and the scorer adds P/R/F of boundaries + type + head).

Confidence settings (``confidence_settings``): ``temperature`` divides the hyperedge
scores and the mention penalty before decoding, ``label_temperatures`` (type
to temperature) the hyperedge scores of a type instead; ``threshold`` drops the
mentions whose probability (``attrs["scores"]``) is below it, from the span
groups and the flat view; ``decoding = "posterior"`` (without heads) predicts
the mention set, among those a sub-hypergraph reads, with the largest sum of
(mention marginal - ``posterior_penalty``) (``structures.hypergraph.posterior``).

Gold mentions whose set decodes to another set (type-II pairs) are counted in
the loss ``{name}_gold_ambiguous``.

The penalty search (``evaluation.penalty_tuning``) decodes through the
component's own steps (``problem`` once, ``solve`` per penalty) and reads
``gold_mentions(examples, doc_offsets)`` and ``mention_penalty`` (the
attribute is ``settings["mention_penalty"]``).
"""

from typing import Callable, Dict, Iterable, List, Literal, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..doc_arrays.batch import DocBatch
from ..doc_arrays.spans import heads_key
from ..ml import token_scorer  # noqa: F401  (registers spacy_depner.TokenScorer.v1, the default model)
from ..structures import hypergraph
from ..structures.hypergraph import HYPERGRAPH
from ..structures.protocol import Layout, Scores
from ..util.numbers import is_finite_number
from .confidence_settings import CONFIDENCE_DEFAULTS, confidence_factory
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe, Gold
from .renamed_settings import renamed_setting
from .score_names import nested_score_weights
from .span_groups import FLAT_VIEWS, check_flat_view, write_span_group

# The scorer's other settings are its defaults (hidden_width 128, maxout_pieces 2,
# no dependency features), which spaCy fills into nlp.config.
DEFAULT_MODEL = Config().from_str('[model]\n@architectures = "spacy_depner.TokenScorer.v1"\n' + DEFAULT_TOK2VEC)[
    "model"
]


@Language.factory(
    "hypergraph_ner",
    assigns=["doc.spans", "doc.ents"],
    default_config={
        "model": DEFAULT_MODEL,
        "mention_penalty": 0.0,
        "heads": False,
        "probabilities": True,
        "spans_key": "hypergraph_ner",
        "ents": None,
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.nested_scorer.v1"},
    },
    default_score_weights=nested_score_weights("hypergraph_ner"),
)
@confidence_factory
def make_hypergraph_ner(
    nlp: Language,
    name: str,
    model: Model,
    mention_penalty: float,
    heads: bool,
    probabilities: bool,
    spans_key: str,
    ents: Optional[Literal[FLAT_VIEWS]],
    scorer: Optional[Callable],
    scores: Optional[bool] = None,
    **confidence,
) -> "HypergraphNER":
    """model: a per-token scorer ``List[Doc] -> Floats2d`` (``spacy_depner.TokenScorer.v1``;
    its output width is set to n_types * the number of hyperedge kinds, 5 or
    17 with heads); mention_penalty: the bias of every T -> I hyperedge
    (higher: more mentions); heads: also find each mention's head (sec. 3.6),
    read from and written to ``doc.spans[spans_key + "_heads"]``; probabilities:
    write each mention's probability to ``attrs["scores"]`` (false: skip the
    inside-outside pass); spans_key: the span group of the predicted
    mentions, and of the gold mentions in the reference Docs; ents: null,
    "outermost" or "most_probable", the flat
    view written to doc.ents (needs probabilities); temperature (> 0): the hyperedge
    scores and the mention penalty are divided by it before decoding;
    label_temperatures: {type: temperature > 0}, the divisor of that type's
    hyperedge scores instead; threshold (in [0, 1]): mentions with a lower probability (attrs["scores"])
    are dropped; decoding: "map" or "posterior" (the mention set with the most
    expected correct mentions minus posterior_penalty each), refused with
    heads = true. A threshold above 0 or posterior decoding computes the
    marginals even with probabilities = false; scorer: the scores of
    ``nlp.evaluate`` and ``spacy train`` (``spacy_depner.nested_scorer.v1``:
    P/R/F of the mentions in doc.spans[spans_key], per label, of their heads
    with heads = true, and of doc.ents when ents is set); scores: the name of
    probabilities in pipelines saved by earlier versions (read, never
    written)."""
    return HypergraphNER(
        nlp.vocab,
        model,
        name,
        mention_penalty=mention_penalty,
        heads=heads,
        probabilities=renamed_setting(name, "probabilities", probabilities, "scores", scores, True),
        spans_key=spans_key,
        ents=ents,
        scorer=scorer,
        **confidence,
    )


class HypergraphNER(EntityPipe, factory="hypergraph_ner"):
    """Settings (read from the config at load): ``mention_penalty``,
    ``probabilities``, ``spans_key``, ``ents`` and the confidence settings. ``cfg``:
    the labels and ``heads``. Structure: the mention hypergraph, one per
    sentence."""

    structure = HYPERGRAPH
    conditions = False  # the mention hypergraph has no conditioned decoding: mentions on whitespace are dropped

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "hypergraph_ner",
        *,
        mention_penalty: float = 0.0,
        heads: bool = False,
        probabilities: bool = True,
        spans_key: str = "hypergraph_ner",
        ents: Optional[str] = None,
        scorer: Optional[Callable] = None,
        **confidence,
    ) -> None:
        check_flat_view(name, ents, probabilities)
        self.setup(
            vocab,
            model,
            name,
            scorer,
            extra_losses=(f"{name}_gold_ambiguous",),
            saved=dict(heads=bool(heads)),
            settings=dict(
                mention_penalty=float(mention_penalty),
                probabilities=bool(probabilities),
                spans_key=spans_key,
                ents=ents,
                **confidence,
            ),
        )
        if heads and self.settings["decoding"] == "posterior":
            raise ValueError(
                f"'{name}' has heads = true and decoding = \"posterior\": posterior decoding is available "
                "without heads only (the reading of a sub-hypergraph also assigns heads). "
                'Use decoding = "map", or a model trained with heads = false.'
            )

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

    def score_labels(self) -> List[str]:
        """Hyperedge score axis 1 (T): the types."""
        return list(self.labels)

    @property
    def n_kinds(self) -> int:
        return HYPERGRAPH.n_kinds(self.cfg["heads"])

    def structure_options(self) -> Dict[str, object]:
        return {"mention_penalty": self.mention_penalty, "heads": self.cfg["heads"]}

    def decoding_options(self) -> Dict[str, object]:
        """The penalty divided by ``temperature`` (one temperature does not
        change the MAP)."""
        return {**self.structure_options(), "mention_penalty": self.mention_penalty / self.settings["temperature"]}

    def layout(self, batch: DocBatch) -> Layout:
        return hypergraph.layout(batch.sentence_offsets)

    def mention_probabilities(self, marginals, mentions: np.ndarray) -> np.ndarray:
        """The probability that a mention of its type starts at its first
        token (``HypergraphMarginals.starts``), available with heads too."""
        return marginals.starts(mentions)

    def structure_scores(self, output) -> Scores:
        """(N, T, K) hyperedge scores on the CPU from the model's (N, T * K) output."""
        return self.model.ops.to_numpy(output).reshape(output.shape[0], len(self.labels), self.n_kinds)

    def write_more(self, docs: List[Doc], doc_offsets: np.ndarray, mentions: np.ndarray) -> None:
        """With heads, the head of each mention to ``doc.spans[spans_key + "_heads"]``, in the same order."""
        if not self.cfg["heads"]:
            return
        for doc, head_spans in zip(docs, self.entity_spans(docs, doc_offsets, mentions[:, 3:5], mentions[:, 2] + 1)):
            write_span_group(doc, heads_key(self.spans_key), head_spans)

    def gold_mentions(self, examples: List[Example], doc_offsets: np.ndarray) -> np.ndarray:
        """(M, 3) [first, last, type] of the reference mentions in batch
        coordinates; with heads (M, 5), the heads from ``spans_key + "_heads"``."""
        key = self.spans_key
        entities, ids = self.gold_entities(examples, doc_offsets, key)
        mentions = np.concatenate([entities, (ids - 1)[:, None]], axis=1).astype(np.int64)
        if not self.cfg["heads"]:
            return mentions
        if any(len(eg.reference.spans.get(key, [])) and heads_key(key) not in eg.reference.spans for eg in examples):
            raise ValueError(
                f"'{self.name}' has heads = true: the reference Docs need the mentions' heads in "
                f"doc.spans[{heads_key(key)!r}], one per mention of doc.spans[{key!r}], in the same order"
            )
        head_rows, _ = self.gold_entities(examples, doc_offsets, heads_key(key))
        return np.concatenate([mentions, head_rows], axis=1)

    def training_batch(self, examples: List[Example]) -> Tuple[DocBatch, Layout, Gold, Dict[str, float]]:
        """The sentences, the gold sub-hypergraph (N, T, K) and the number of
        distinct gold mentions it does not give back."""
        batch = self.read([eg.predicted for eg in examples])
        mentions = self.gold_mentions(examples, batch.doc_offsets)
        sentence_offsets = batch.sentence_offsets
        sentence = np.searchsorted(sentence_offsets, mentions[:, 0], side="right") - 1
        if np.any(mentions[:, 1] >= sentence_offsets[np.minimum(sentence + 1, len(sentence_offsets) - 1)]):
            raise ValueError(f"'{self.name}': a gold mention crosses a sentence boundary of its Doc")
        layout = hypergraph.layout(sentence_offsets)
        edges = HYPERGRAPH.encode(mentions, layout, n_labels=len(self.labels))
        decoded = np.unique(HYPERGRAPH.mentions_of(edges, layout), axis=0)
        # |gold ∪ decoded| - |decoded| = the gold rows that are not decoded rows
        n_lost = np.unique(np.concatenate([mentions, decoded]), axis=0).shape[0] - decoded.shape[0]
        return batch, self.layout(batch), Gold(edges), {f"{self.name}_gold_ambiguous": int(n_lost)}

    def reference_labels(self, example: Example) -> Iterable[str]:
        return (span.label_ for span in example.reference.spans.get(self.spans_key, []))

    def initialize_model(self, sample: List[Doc]) -> None:
        """Output width n_types * the number of hyperedge kinds."""
        self.model.set_dim("nO", len(self.labels) * self.n_kinds)
        self.model.initialize(X=sample if sample else None)
