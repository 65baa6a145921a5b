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
``scores_key`` (the span group of the entities), ``scores`` (with their
marginal probabilities, ``chain_spans``, in its ``attrs["scores"]``) and the confidence
settings of ``EntityPipe``: ``temperature`` divides the tag scores and the
transitions before decoding, ``label_temperatures`` (label, or "O" for the
O tag, to a temperature) the scores of a label's tags (B-X, I-X, ...: X)
instead, ``threshold`` drops the entities whose marginal
is below it, ``decoding = "posterior"`` predicts the disjoint entities with
the largest sum of (marginal - ``posterior_penalty``)
(``chain_spans.posterior_decode``).
"""
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab
from thinc.api import Config, Model
from thinc.types import Floats2d

from ..ml import tag_scorer  # noqa: F401  (registers spacy_depner.TagScorer.v1, the default model)
from ..structures import chain_spans, linear_chain
from .doc_arrays import batch_offsets, chain_offsets, doc_offsets_of
from .confidence_settings import CONFIDENCE_DEFAULTS
from .entity_pipe import DEFAULT_TOK2VEC, EntityPipe
from .gazetteer import Gazetteer, read_phrases
from .span_groups import write_span_group

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
        "scores": True,
        "scores_key": "chain_ner",
        **CONFIDENCE_DEFAULTS,
        "scorer": {"@scorers": "spacy_depner.entity_scorer.v1"},
    },
    default_score_weights={"ents_f": 1.0, "ents_p": 0.0, "ents_r": 0.0, "ents_per_type": None},
)
def make_chain_ner(
    nlp: Language,
    name: str,
    model: Model,
    scheme: str,
    loss: str,
    gazetteer: Optional[str],
    scores: bool,
    scores_key: str,
    temperature: float,
    label_temperatures: Dict[str, float],
    threshold: float,
    decoding: str,
    posterior_penalty: float,
    scorer: Optional[Callable],
) -> "LinearChainNER":
    """scheme: "BIO" | "BILOU"; loss: "crf" | "perceptron"; gazetteer: path of a
    JSONL file of {"label", "pattern"} phrases, read by initialize (null: none);
    scores: write each entity's marginal probability to
    doc.spans[scores_key].attrs["scores"] (false: Viterbi only, the span group
    without scores);
    temperature (> 0): the scores are divided by it before decoding;
    label_temperatures: {label or "O": temperature > 0}, the divisor of the
    scores of that label's tags instead; threshold (in [0, 1]): entities with a lower marginal are dropped;
    decoding: "map" or "posterior" (the entities with the most expected
    correct ones minus posterior_penalty (>= 0) each). A threshold above 0 or
    posterior decoding computes the marginals even with scores = false."""
    return LinearChainNER(nlp.vocab, model, name, scheme=scheme, loss=loss, gazetteer=gazetteer, scores=scores,
                          scores_key=scores_key, temperature=temperature, label_temperatures=label_temperatures,
                          threshold=threshold, decoding=decoding, posterior_penalty=posterior_penalty, scorer=scorer)


class ChainPrediction(NamedTuple):
    """What ``predict`` decodes: the tags (N,) (Viterbi, or those of the
    posterior entities), doc_offsets (B + 1,), the entities they spell: (M, 2)
    first and last token in batch coordinates and label indices (M,) from 0,
    and their marginals (M,) (None unless ``needs_marginals``)."""

    tags: np.ndarray
    doc_offsets: np.ndarray
    entities: np.ndarray
    labels: np.ndarray
    probabilities: Optional[np.ndarray] = None


class LinearChainNER(EntityPipe):
    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "chain_ner",
        *,
        scheme: str = "BILOU",
        loss: str = "crf",
        gazetteer: Optional[str] = None,
        scores: bool = True,
        scores_key: str = "chain_ner",
        temperature: float = 1.0,
        label_temperatures: Optional[Dict[str, float]] = None,
        threshold: float = 0.0,
        decoding: str = "map",
        posterior_penalty: float = 0.5,
        scorer: Optional[Callable] = None,
    ) -> None:
        self.setup(
            vocab, model, name, scorer, choices={"scheme": SCHEMES, "loss": LOSSES},
            saved=dict(scheme=scheme),
            settings=dict(loss=loss, gazetteer=gazetteer, scores=scores, scores_key=scores_key, temperature=temperature,
                          label_temperatures=label_temperatures, threshold=threshold, decoding=decoding,
                          posterior_penalty=posterior_penalty),
        )
        self.cfg["gazetteer_phrases"] = {}
        self.gazetteer = Gazetteer(vocab, {})

    def loaded(self) -> None:
        self.gazetteer = Gazetteer(self.vocab, self.cfg["gazetteer_phrases"])

    @property
    def n_tags(self) -> int:
        return len(linear_chain.tag_names(list(self.labels), self.cfg["scheme"]))

    def score_labels(self) -> List[str]:
        """Tag score columns (``tag_names``): "O" for the O tag, X for B-X, I-X, ..."""
        return [tag if tag == "O" else tag.split("-", 1)[1]
                for tag in linear_chain.tag_names(list(self.labels), self.cfg["scheme"])]

    def _allowed(self) -> np.ndarray:
        return linear_chain.allowed_transitions(len(self.labels), self.cfg["scheme"])

    def _forward(self, docs: List[Doc], is_train: bool):
        """The model's (tag scores (N, T), transitions) on the batch and, in
        training, their backprop; the parse check of a model with dependency
        features."""
        self.check_parse(docs)
        inputs = (docs, self.gazetteer.codes(docs))
        if is_train:
            return self.model.begin_update(inputs)
        return self.model.predict(inputs), None

    def _chain_args(self, docs, scores, transitions, entities: Optional[np.ndarray] = None):
        """(tag scores (N, T), chain offsets, transitions, allowed) as float64 for
        ``linear_chain``: one chain per sentence (sentence starts from the
        Docs; a Doc without them is one sentence), except where an entity
        of ``entities`` (E, 2) [first, last] (the gold ones in training)
        crosses a sentence start."""
        doc_offsets, sentence_offsets = batch_offsets(docs)
        spans = np.zeros((0, 2), dtype=np.int64) if entities is None else entities
        return (
            np.asarray(self.model.ops.to_numpy(scores), dtype=np.float64),
            chain_offsets(spans, doc_offsets, sentence_offsets),
            np.asarray(self.model.ops.to_numpy(transitions), dtype=np.float64),
            self._allowed(),
        )

    def predict(self, docs: Iterable[Doc]) -> ChainPrediction:
        """The tags of each Doc (Viterbi, or posterior with ``decoding =
        "posterior"``) of the scores divided by the temperatures, the entities
        they spell and, when ``needs_marginals``, their marginals."""
        docs = list(docs)
        scores, transitions = self.tempered(self._forward(docs, is_train=False)[0])
        args = self._chain_args(docs, scores, transitions)
        scheme, doc_offsets = self.cfg["scheme"], doc_offsets_of(docs)
        if self.settings["decoding"] == "posterior":
            _, entities, labels, probabilities = chain_spans.posterior_decode(
                *args[:3], scheme, self.settings["posterior_penalty"])
            tags = linear_chain.spans_to_tags(entities, labels, int(doc_offsets[-1]), scheme)
            return ChainPrediction(tags, doc_offsets, entities, labels, probabilities)
        _, tags = linear_chain.viterbi(*args)
        entities, labels = linear_chain.tags_to_spans(tags, args[1], scheme, len(self.labels))
        probabilities = chain_spans.entity_marginals(*args[:3], scheme, entities, labels) if self.needs_marginals else None
        return ChainPrediction(tags, doc_offsets, entities, labels, probabilities)

    def set_annotations(self, docs: Iterable[Doc], predictions: ChainPrediction) -> None:
        docs = list(docs)
        probabilities, entities, labels = self.confident(predictions.probabilities, predictions.entities, predictions.labels)
        scored = self.scored_entity_spans(docs, predictions.doc_offsets, entities, labels + 1, self.written_scores(probabilities))
        for doc, (ents, doc_probabilities) in zip(docs, scored):
            doc.set_ents(ents, default="outside")
            write_span_group(doc, self.settings["scores_key"], ents, doc_probabilities)

    def learn_from(self, examples: List[Example], docs: List[Doc]) -> Tuple[float, Dict[str, float]]:
        scores, backprop = self._forward(docs, is_train=True)
        loss, d_scores = self.get_loss(examples, scores)
        backprop(d_scores)
        return loss, {}

    def gold_tags(self, examples: List[Example], doc_offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The gold tags (N,) of the batch and its gold entities (E, 2) [first, last]."""
        entities, ids = self.gold_entities(examples, doc_offsets)
        return linear_chain.spans_to_tags(entities, ids - 1, int(doc_offsets[-1]), self.cfg["scheme"]), entities

    def get_loss(self, examples: Iterable[Example], scores: Tuple[Floats2d, Floats2d]) -> Tuple[float, Tuple[Floats2d, Floats2d]]:
        """The loss and its gradient with respect to the model's output
        ``scores`` = (tag scores (N, T), transitions): CRF: negative
        log-likelihood of the gold tags, gradient marginals minus gold counts.
        Perceptron: score of the Viterbi tags minus that of the gold tags (>=
        0), gradient Viterbi counts minus gold counts."""
        examples = list(examples)
        scores, transitions = scores
        docs = [eg.predicted for eg in examples]
        gold, entities = self.gold_tags(examples, doc_offsets_of(docs))
        args = self._chain_args(docs, scores, transitions, entities)
        scores64, chains, transitions64, _ = args
        n_tags = scores64.shape[1]
        gold_counts = linear_chain.transition_counts(gold, chains, n_tags)
        tokens = np.arange(gold.shape[0])
        gold_score = scores64[tokens, gold].sum() + (gold_counts * transitions64).sum()
        if self.settings["loss"] == "crf":
            log_z, d_scores, expected_counts = linear_chain.marginals(*args)
            loss = float(log_z.sum() - gold_score)
        else:
            best, tags = linear_chain.viterbi(*args)
            d_scores = np.zeros_like(scores64)
            d_scores[tokens, tags] += 1.0
            expected_counts = linear_chain.transition_counts(tags, chains, n_tags)
            loss = float(best.sum() - gold_score)
        d_scores[tokens, gold] -= 1.0
        ops = self.model.ops
        return loss, (ops.asarray2f(d_scores.astype(np.float32)), ops.asarray2f((expected_counts - gold_counts).astype(np.float32)))

    def initialize_model(self, sample: List[Doc]) -> None:
        """Read the gazetteer file (its phrases are saved in ``cfg``), set the
        tag and gazetteer widths and initialize the model."""
        if self.settings["gazetteer"]:
            self.cfg["gazetteer_phrases"] = read_phrases(self.settings["gazetteer"])
        self.loaded()
        self.model.set_dim("nO", self.n_tags)
        self.model.set_dim("n_gazetteer", len(self.gazetteer))
        self.model.initialize(X=(sample, None) if sample else None)
