"""``chain_ner``: flat NER with a linear chain over BIO or BILOU tags.

Trained as a CRF (``loss = "crf"``, Lafferty et al. 2001: negative
log-likelihood by forward-backward) or as a structured perceptron (``loss =
"perceptron"``, Collins 2002, as in Daiber & Klaussner: Viterbi tags against
gold tags; with ``use_averages = true`` in the optimizer, spaCy trains, scores
and saves the averaged parameters). Invalid tag sequences are excluded by the
transition constraints of the scheme, in training and decoding alike.
Each sentence of a Doc is its own chain (no transition links the last tag of
a sentence to the first of the next, so no entity crosses a sentence start);
in training, sentences that a gold entity joins form one chain.
Optional token features: dependency features (as in ``dgm_ner``) and
gazetteer phrases per label, read from a JSONL file at initialization and
saved with the pipeline.

Saved with the weights (``cfg``): the labels, ``scheme`` (the tags the model
scores; another scheme at load is an error) and the gazetteer phrases.
Settings read from the config at every load: ``loss``, ``gazetteer`` (the
file read by ``initialize``; a loaded pipeline uses its saved phrases),
``spans_key`` (the span group of the entities), ``probabilities`` (with their
marginal probabilities, ``structures.chain.entity_marginals``, in its
``attrs["scores"]``) and the confidence settings (``confidence_settings``): ``temperature`` divides the tag scores and the
transitions before decoding, ``label_temperatures`` (label, or "O" for the
O tag, to a temperature) the scores of a label's tags (B-X, I-X, ...: X)
instead, ``threshold`` drops the entities whose marginal
is below it, ``decoding = "posterior"`` predicts the disjoint entities with
the largest sum of (marginal - ``posterior_penalty``)
(``structures.chain``).
"""

from typing import Callable, Dict, List, Literal, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..doc_arrays.batch import DocBatch
from ..doc_arrays.entities import missing_entity_tokens
from ..doc_arrays.spans import chain_offsets
from ..ml import tag_scorer  # noqa: F401  (registers spacy_depner.TagScorer.v1, the default model)
from ..structures import chain
from ..structures.chain import CHAIN
from ..structures.protocol import Layout, Scores, inner_product
from .confidence_settings import CONFIDENCE_DEFAULTS, confidence_factory
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe, Gold
from .gazetteer import Gazetteer, read_phrases
from .renamed_settings import renamed_setting

SCHEMES = ("BIO", "BILOU")
LOSSES = ("crf", "perceptron")

DEFAULT_MODEL = Config().from_str(
    """
[model]
@architectures = "spacy_depner.TagScorer.v1"
hidden_width = 128
maxout_pieces = 2
dependency_features = false
dependency_width = 32
gazetteer_width = 16
"""
    + DEFAULT_TOK2VEC
)["model"]


@Language.factory(
    "chain_ner",
    assigns=["doc.ents", "token.ent_iob", "token.ent_type", "doc.spans"],
    default_config={
        "model": DEFAULT_MODEL,
        "scheme": "BILOU",
        "loss": "crf",
        "gazetteer": None,
        "probabilities": True,
        "spans_key": "chain_ner",
        "incorrect_spans_key": None,
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.entity_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
@confidence_factory
def make_chain_ner(
    nlp: Language,
    name: str,
    model: Model,
    scheme: Literal[SCHEMES],
    loss: Literal[LOSSES],
    gazetteer: Optional[str],
    probabilities: bool,
    spans_key: str,
    scorer: Optional[Callable],
    incorrect_spans_key: Optional[str] = None,
    scores_key: Optional[str] = None,
    scores: Optional[bool] = None,
    **confidence,
) -> "LinearChainNER":
    """model: the scores of each token per tag and of the tag transitions,
    over any tok2vec (``spacy_depner.TagScorer.v1``; dependency_features = true
    adds each token's head and dependency label); scheme: "BIO" | "BILOU";
    loss: "crf" | "perceptron"; gazetteer: path of a JSONL file of {"label",
    "pattern"} phrases, read by initialize (null: none); probabilities: write each
    entity's marginal probability to doc.spans[spans_key].attrs["scores"]
    (false: Viterbi only, the span group without scores); spans_key: the span
    group that holds the entities of doc.ents a second time, with their
    marginals; incorrect_spans_key: null, or the span group of a reference
    Doc that holds entities known to be wrong (rejected in review; spaCy
    ``ner``'s setting of the same name): the CRF loss gives them probability
    0 (``chain.rejected_entities``); the confidence settings
    (``confidence_settings``); scorer: the
    scores of ``nlp.evaluate`` and ``spacy train`` (``spacy_depner.entity_scorer.v1``:
    P/R/F of doc.ents, per type); scores_key and scores: the names of spans_key
    and probabilities in pipelines saved by earlier versions (read, never
    written)."""
    return LinearChainNER(
        nlp.vocab,
        model,
        name,
        scheme=scheme,
        loss=loss,
        gazetteer=gazetteer,
        probabilities=renamed_setting(name, "probabilities", probabilities, "scores", scores, True),
        spans_key=renamed_setting(name, "spans_key", spans_key, "scores_key", scores_key, "chain_ner"),
        scorer=scorer,
        incorrect_spans_key=incorrect_spans_key,
        **confidence,
    )


class LinearChainNER(EntityPipe, factory="chain_ner"):
    """Settings (read from the config at load): ``loss``, ``gazetteer``,
    ``probabilities``, ``spans_key``, ``incorrect_spans_key`` and the confidence settings. ``cfg``: the
    labels, ``scheme`` and the gazetteer phrases. Structure: the linear
    chain, one chain per sentence (in training, sentences that a gold
    entity joins form one chain)."""

    structure = CHAIN
    writes_ents = True

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "chain_ner",
        *,
        scheme: str = "BILOU",
        loss: str = "crf",
        gazetteer: Optional[str] = None,
        probabilities: bool = True,
        spans_key: str = "chain_ner",
        scorer: Optional[Callable] = None,
        incorrect_spans_key: Optional[str] = None,
        **confidence,
    ) -> None:
        self.setup(
            vocab,
            model,
            name,
            scorer,
            choices={"scheme": SCHEMES, "loss": LOSSES},
            saved=dict(scheme=scheme),
            settings=dict(
                loss=loss,
                gazetteer=gazetteer,
                probabilities=probabilities,
                spans_key=spans_key,
                incorrect_spans_key=incorrect_spans_key,
                **confidence,
            ),
        )
        self.cfg["gazetteer_phrases"] = {}
        self.gazetteer = Gazetteer(vocab, {})

    def loaded(self) -> None:
        self.gazetteer = Gazetteer(self.vocab, self.cfg["gazetteer_phrases"])

    @property
    def n_tags(self) -> int:
        return len(CHAIN.tag_names(list(self.labels), self.cfg["scheme"]))

    def score_labels(self) -> List[str]:
        """Tag score columns (``tag_names``): "O" for the O tag, X for B-X, I-X, ..."""
        return [
            tag if tag == "O" else tag.split("-", 1)[1]
            for tag in CHAIN.tag_names(list(self.labels), self.cfg["scheme"])
        ]

    def structure_options(self) -> Dict[str, object]:
        return {"scheme": self.cfg["scheme"]}

    def model_input(self, batch: DocBatch):
        return batch.docs, self.gazetteer.codes(batch.docs)

    def layout(self, batch: DocBatch, entities: Optional[np.ndarray] = None) -> Layout:
        """One chain per sentence, except where an entity of ``entities``
        (E, 2) [first, last] (the gold ones in training) crosses a sentence
        start (``chain_offsets``)."""
        spans = np.zeros((0, 2), dtype=np.int64) if entities is None else entities
        return chain.layout(chain_offsets(spans, batch.doc_offsets, batch.sentence_offsets))

    def given_problem(self, batch: DocBatch, given) -> Tuple[DocBatch, Layout, np.ndarray]:
        """The tags (N,) of the given entities, O elsewhere; chains joined where one crosses a sentence start."""
        layout = self.layout(batch, given.entities)
        return (
            batch,
            layout,
            CHAIN.encode(np.column_stack([given.entities, given.ids - 1]), layout, scheme=self.cfg["scheme"]),
        )

    def training_batch(self, examples: List[Example]) -> Tuple[DocBatch, Layout, np.ndarray, Dict[str, float]]:
        """The batch, its chains (joined by the gold entities) and the gold tags
        (N,), with the tokens whose entity annotation is missing."""
        batch = self.read([eg.predicted for eg in examples])
        entities, ids = self.gold_entities(examples, batch.doc_offsets)
        layout = self.layout(batch, entities)
        tags = CHAIN.encode(np.column_stack([entities, ids - 1]), layout, scheme=self.cfg["scheme"])
        gold = Gold(
            tags,
            missing_entity_tokens(examples, batch.doc_offsets),
            self.rejected_entities(examples, batch.doc_offsets),
        )
        return batch, layout, gold, {}

    def loss(self, scores: Scores, layout: Layout, gold) -> Tuple[float, Scores]:
        """CRF: negative log-likelihood of the gold tags, gradient marginals
        minus gold counts. Perceptron: score of the Viterbi tags minus that of
        the gold tags (>= 0), gradient Viterbi counts minus gold counts."""
        if self.settings["loss"] == "crf":
            return super().loss(scores, layout, gold)
        if gold.missing is not None and gold.missing.any():
            raise ValueError(
                f"'{self.name}': loss = \"perceptron\" cannot learn from Docs whose entity annotation is "
                'missing on some tokens (ent_iob_ == ""); use loss = "crf", which marginalises them, '
                "or mark those tokens O"
            )
        if gold.rejected is not None and gold.rejected.shape[0]:
            raise ValueError(
                f"'{self.name}': loss = \"perceptron\" cannot learn from rejected entities "
                f'(doc.spans[{self.settings["incorrect_spans_key"]!r}]); use loss = "crf"'
            )
        gold = gold.encoding
        options = self.structure_options()
        best = self.structure.viterbi(scores, layout, **options)
        gold_counts = self.structure.counts(gold, scores, layout, **options)
        loss = float(best.score.sum()) - inner_product(scores, gold_counts)
        gradient = tuple(
            b - g for b, g in zip(self.structure.counts(best.encoding, scores, layout, **options), gold_counts)
        )
        return loss, gradient

    def initialize_model(self, sample: List[Doc]) -> None:
        """Read the gazetteer file (its phrases are saved in ``cfg``), set the
        tag and gazetteer widths and initialize the model."""
        if self.settings["gazetteer"]:
            self.cfg["gazetteer_phrases"] = read_phrases(self.settings["gazetteer"])
        self.loaded()
        self.model.set_dim("nO", self.n_tags)
        self.model.set_dim("n_gazetteer", len(self.gazetteer))
        self.model.initialize(X=(sample, None) if sample else None)
