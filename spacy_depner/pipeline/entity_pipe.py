"""What the entity components share: labels, settings, gold entities as
arrays, initialization, loading with clear errors, the confidence settings
of every component applied to the scores (``temperature``,
``label_temperatures``, ``threshold``, ``decoding``, ``posterior_penalty``:
``confidence_settings``), and the one call path from Docs to a structure
and back (``predict``, ``set_annotations``, ``update``): a component says
how it reads a batch (``read``), which structure it decodes with what
``layout`` and options, and what its gold analysis is (``training_batch``);
every structure is called through ``structures.protocol``."""

from itertools import islice
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import srsly
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span
from spacy.training import Example, validate_examples, validate_get_examples
from thinc.api import Model, Optimizer, set_dropout_rate

from ..doc_arrays.batch import DocBatch, read_batch
from ..doc_arrays.entities import gold_entities, scored_entity_spans
from ..doc_arrays.spans import suggested_spans
from ..doc_arrays.trees import MissingParse
from ..ml.corpus_layers import initialize_corpus_layers
from ..structures.protocol import Analysis, Layout, Marginals, Scores, Structure
from .confidence_settings import CONFIDENCE_DEFAULTS, ConfidenceSettings, check_confidence
from .given_decoding import Given, GivenDecoding
from .span_groups import in_span_order, keeping_preset, write_flat_view, write_span_group
from .suggesters import positive_or_null

# The tok2vec of a component's default model (spaCy's efficiency CNN), as config text.
DEFAULT_TOK2VEC = """
[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""


# factory name -> component class: every entity component, by what it is (``EntityPipe.__init_subclass__``)
ENTITY_COMPONENTS: Dict[str, type] = {}


def entity_factories() -> str:
    """The factory names of the entity components, for messages: "a, b or c"."""
    names = list(ENTITY_COMPONENTS)
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)


class Prediction(NamedTuple):
    """What ``predict`` decodes for a batch: doc_offsets (B + 1,); mentions
    (M, 3) [first, last, label from 0] in batch coordinates (M, 5 with
    heads: and head_first, head_last); probabilities (M,), or None when the
    marginals were not computed."""

    doc_offsets: np.ndarray
    mentions: np.ndarray
    probabilities: Optional[np.ndarray]


class Problem(NamedTuple):
    """A batch ready to decode (``EntityPipe.problem``): the batch (a
    lattice's spans with the given entities added), its layout, the
    tempered scores, the ``Given`` (None: nothing fixed) and the structure's
    encoding of the given entities (None without)."""

    batch: DocBatch
    layout: Layout
    scores: Scores
    given: Optional[Given]
    encoding: object


class Gold(NamedTuple):
    """The gold annotation of a training batch: ``encoding``, the structure's
    encoding of the gold analysis; ``missing`` (N,) bool, the tokens whose
    annotation is missing (None: every token is annotated). With missing
    tokens the loss is the negative log-probability of the analyses that
    agree with the rest (``Structure.partial_nll``). ``rejected`` (R, 3)
    [first, last, label from 0] or None: mentions known to be wrong (the
    span group ``incorrect_spans_key``), which no agreeing analysis contains.
    ``accepted`` (A, 3) or None: mentions on missing tokens known to be
    right, which every agreeing analysis contains (nested_ner: gold mentions
    outside the annotated regions)."""

    encoding: object
    missing: Optional[np.ndarray] = None
    rejected: Optional[np.ndarray] = None
    accepted: Optional[np.ndarray] = None


class EntityPipe(ConfidenceSettings, GivenDecoding, TrainablePipe):
    """The contract of every entity component.

    State: ``self.cfg`` holds what the trained weights depend on (``labels``
    and the component's ``saved`` settings, e.g. a tag scheme) and is saved
    with the pipeline; the other settings (``self.settings``: decoding
    options, span keys, ``probabilities``) come from the config each time the
    component is built, so ``spacy.load(path, config=...)`` overrides them
    and ``nlp.config`` tells the truth. A saved setting given a new value at
    load is an error, as is a missing or corrupt ``cfg``. ``initialized``
    is set by ``initialize`` and by loading, never inferred from the model.
    """

    extra_losses: Tuple[str, ...] = ()
    structure: Structure  # the component's structure (``structures.protocol``)
    writes_ents = False  # True: the mentions go to doc.ents (flat components), else the span group only

    def __init_subclass__(cls, factory: Optional[str] = None, **kwargs) -> None:
        """``class C(EntityPipe, factory="name")`` registers C in ``ENTITY_COMPONENTS``."""
        super().__init_subclass__(**kwargs)
        if factory is not None:
            ENTITY_COMPONENTS[factory] = cls

    def setup(
        self,
        vocab,
        model: Model,
        name: str,
        scorer: Optional[Callable],
        *,
        saved: Optional[Dict[str, object]] = None,
        settings: Optional[Dict[str, object]] = None,
        choices: Optional[Dict[str, Sequence[str]]] = None,
        extra_losses: Sequence[str] = (),
    ) -> None:
        """Check the settings (each of ``choices`` is one of its options;
        ``max_length`` and ``max_sentence_length``, if given, null or a
        positive integer) and store them: ``saved`` in ``cfg``, ``settings``
        in ``self.settings``."""
        saved, settings = dict(saved or {}), dict(settings or {})
        given = {**saved, **settings}
        for key, options in (choices or {}).items():
            if given[key] not in options:
                raise ValueError(f"Unknown {key} {given[key]!r} for '{name}': use one of {', '.join(options)}")
        for key in ("max_length", "max_sentence_length"):
            positive_or_null(given.get(key), key, f"'{name}'")
        settings = {**CONFIDENCE_DEFAULTS, **settings}
        if settings["label_temperatures"] is None:
            settings["label_temperatures"] = {}
        check_confidence(name, settings)
        for key in ("temperature", "threshold", "posterior_penalty"):
            settings[key] = float(settings[key])
        settings["label_temperatures"] = {label: float(t) for label, t in settings["label_temperatures"].items()}
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.extra_losses = tuple(extra_losses)
        self.settings = settings
        self.saved_settings = saved
        self.cfg = {"labels": [], **saved}
        self.initialized = False

    @property
    def spans_key(self) -> str:
        """The span group the component writes its mentions (with their
        probabilities in ``attrs["scores"]``) to."""
        return self.settings["spans_key"]

    def score(self, examples: Iterable[Example], **kwargs) -> Dict[str, object]:
        """The registered scorer with the component's settings (``scorer_settings``)."""
        if self.scorer is None:
            return {}
        return self.scorer(examples, **{**self.scorer_settings(), **kwargs})

    def score_labels(self) -> List[str]:
        """The label of each column (axis 1) of the score array the model
        returns (the first array of its output), "O" for an outside score:
        what ``label_temperatures`` keys."""
        raise NotImplementedError

    def scorer_settings(self) -> Dict[str, object]:
        """Keyword arguments of the scorer: the labels and the settings."""
        return {"labels": self.labels, **self.settings}

    def tree_readers(self) -> Tuple[bool, Optional[str]]:
        """Whether the component reads the trees (dependency features, or a
        suggester with a ``tree_reader``), and the part named in a missing-parse
        error: None when the model reads them (the component is named alone),
        else the suggester's name."""
        if self.model.attrs.get("dependency_features"):
            return True, None
        reader = getattr(self.settings.get("suggester"), "tree_reader", None)
        return reader is not None, reader

    def suggest(self, batch: DocBatch) -> np.ndarray:
        """``suggested_spans`` of the component's suggester, with the batch's
        trees in scope (not read again); a suggester that finds no parse is
        named as this component's part."""
        try:
            with batch.in_scope():
                return suggested_spans(batch.docs, self.suggester, batch.doc_offsets, self.model.ops)
        except MissingParse as error:
            raise error.in_component(self.name) from None

    # --- the one call path: Docs -> arrays -> structure -> Docs -------------

    def read(self, docs: List[Doc]) -> DocBatch:
        """The batch as arrays, read once (``doc_arrays``): offsets and, in a
        component that reads the trees, the trees after one parse check and
        one forest check (components with a suggester add its spans)."""
        trees, reader = self.tree_readers()
        return read_batch(docs, trees=trees, component=self.name, reader=reader)

    def model_output(self, batch: DocBatch, is_train: bool = False):
        """The model on the batch (``model_input``), with the batch's trees in
        scope: ``model.predict``, or ``model.begin_update`` with ``is_train``."""
        with batch.in_scope():
            if is_train:
                return self.model.begin_update(self.model_input(batch))
            return self.model.predict(self.model_input(batch))

    def layout(self, batch: DocBatch) -> Layout:
        """Where the structure's scores sit in the batch."""
        raise NotImplementedError

    def model_input(self, batch: DocBatch):
        """What the model reads: the Docs (and the spans it scores)."""
        return batch.docs

    def structure_scores(self, output) -> Scores:
        """The model's output (an array or a tuple of them) on the CPU, the
        shape the structure takes."""
        if isinstance(output, tuple):
            return tuple(self.model.ops.to_numpy(part) for part in output)
        return self.model.ops.to_numpy(output)

    def structure_options(self) -> Dict[str, object]:
        """The structure's keyword options in training."""
        return {}

    def decoding_options(self) -> Dict[str, object]:
        """The structure's keyword options in prediction."""
        return self.structure_options()

    def problem(self, docs: List[Doc], conditioned: bool = True) -> Problem:
        """What ``predict`` decodes: the batch read once, what it is decoded
        given (``given``; none without ``conditioned``), its layout and the
        model's scores divided by the temperatures."""
        batch = self.read(list(docs))
        given = self.given(batch) if conditioned else None
        encoding = None
        if given is None:
            layout = self.layout(batch)
        else:
            batch, layout, encoding = self.given_problem(batch, given)
        scores = self.tempered(self.structure_scores(self.model_output(batch)))
        return Problem(batch, layout, scores, given, encoding)

    def solve(self, problem: Problem, with_probabilities: bool = True) -> Prediction:
        """The ``Prediction`` of a ``problem`` by the settings: decoded given
        its entities and whitespace, or off the whitespace in a structure that
        cannot condition. ``with_probabilities`` False: the marginals only where
        the mentions need them (a threshold, posterior decoding)."""
        if problem.given is not None:
            return Prediction(
                problem.batch.doc_offsets,
                *self.decode_given(
                    problem.scores, problem.layout, problem.encoding, problem.given.missing, with_probabilities
                ),
            )
        analysis, found = self.decode(problem.scores, problem.layout, with_probabilities=with_probabilities)
        return Prediction(problem.batch.doc_offsets, *self.off_whitespace(problem.batch, analysis.mentions, found))

    def predict(self, docs: Iterable[Doc]) -> Prediction:
        """The analysis (MAP, or posterior with ``decoding = "posterior"``) of
        the scores divided by the temperatures, given the entities the Docs
        already have and their whitespace (``given``), and, when
        ``needs_marginals``, the probability of each of its mentions."""
        return self.solve(self.problem(list(docs)))

    def decode(
        self,
        scores: Scores,
        layout: Layout,
        marginals: Optional[Marginals] = None,
        with_probabilities: bool = True,
        **options,
    ) -> Tuple[Analysis, Optional[np.ndarray]]:
        """The analysis of ``scores`` by the settings (``decoding``,
        ``posterior_penalty``; marginals when ``needs_marginals``, or with
        ``with_probabilities`` False when the mentions need them, unless given)
        and the probabilities (M,) of its mentions (None without marginals).
        ``options`` override ``decoding_options``."""
        options = {**self.decoding_options(), **options}
        needed = self.needs_marginals if with_probabilities else self.mentions_need_marginals
        if marginals is None and needed:
            marginals = self.structure.marginals(scores, layout, **options)
        if self.settings["decoding"] == "posterior":
            analysis = self.structure.posterior_decode(
                marginals, layout, penalty=self.settings["posterior_penalty"], **options
            )
        else:
            analysis = self.structure.viterbi(scores, layout, **options)
        return analysis, None if marginals is None else self.mention_probabilities(marginals, analysis.mentions)

    def mention_probabilities(self, marginals: Marginals, mentions: np.ndarray) -> np.ndarray:
        """The probability (M,) written for each decoded mention: its marginal."""
        return marginals.of(mentions)

    def set_annotations(self, docs: Iterable[Doc], predictions: Prediction) -> None:
        """The confident mentions to the span group ``spans_key`` (with
        ``attrs["scores"]`` with the setting ``probabilities``) and to ``doc.ents`` (a flat
        component), or the flat view ``ents`` of them; beside the entities
        ``doc.ents`` already has (``keeping_preset``) unless ``overwrite_ents``.
        Every Doc's mentions in one order, whatever the batch: (start, end,
        label in the component's label order) (``in_span_order``)."""
        docs = list(docs)
        doc_offsets, mentions, probabilities = predictions
        probabilities, mentions = self.confident(probabilities, mentions)
        probabilities, mentions = in_span_order(probabilities, mentions)
        written = self.written_scores(probabilities)
        scored = scored_entity_spans(docs, doc_offsets, mentions[:, :2], mentions[:, 2] + 1, self.labels, written)
        for doc, (spans, doc_probabilities) in zip(docs, scored):
            if self.writes_ents:
                doc.set_ents(
                    spans if self.settings["overwrite_ents"] else keeping_preset(doc, spans), default="outside"
                )
            write_span_group(doc, self.spans_key, spans, doc_probabilities)
        self.write_more(docs, doc_offsets, mentions)
        if not self.writes_ents:
            write_flat_view(
                self.settings,
                docs,
                doc_offsets,
                mentions[:, :2],
                mentions[:, 2] + 1,
                written,
                [spans for spans, _ in scored],
            )

    def write_more(self, docs: List[Doc], doc_offsets: np.ndarray, mentions: np.ndarray) -> None:
        """What a component writes besides its mentions (nothing by default)."""

    def training_batch(self, examples: List[Example]) -> Tuple[DocBatch, Layout, Gold, Dict[str, float]]:
        """The batch of the examples' predicted Docs, its layout, the ``Gold``
        annotation and the values of ``extra_losses``."""
        raise NotImplementedError

    def loss(self, scores: Scores, layout: Layout, gold: Gold) -> Tuple[float, Scores]:
        """The training loss and its gradient with respect to ``scores``: the
        negative log-likelihood of the gold analysis (``Structure.nll``), or,
        with missing tokens, of the analyses that agree with the annotated
        ones, contain no rejected mention and every accepted one
        (``Structure.partial_nll``, exact)."""
        rejected = gold.rejected is not None and gold.rejected.shape[0] > 0
        if rejected or (gold.missing is not None and gold.missing.any()):
            missing = np.zeros(layout.n_tokens, dtype=bool) if gold.missing is None else gold.missing
            return self.structure.partial_nll(
                scores, layout, gold.encoding, missing, gold.rejected, gold.accepted, **self.structure_options()
            )
        return self.structure.nll(scores, layout, gold.encoding, **self.structure_options())

    def model_gradient(self, gradient: Scores, output):
        """``gradient`` (float64, the structure's shapes) as the model's
        output: float32 arrays on the model's device, in its shapes."""
        ops = self.model.ops
        if isinstance(output, tuple):
            return tuple(
                ops.asarray2f(np.asarray(g, dtype=np.float32).reshape(o.shape)) for g, o in zip(gradient, output)
            )
        return ops.asarray2f(np.asarray(gradient, dtype=np.float32).reshape(output.shape))

    def learn_from(self, examples: List[Example], docs: List[Doc]) -> Tuple[float, Dict[str, float]]:
        """Forward and backward pass on a batch with at least one token: the
        loss, and the values to add to ``extra_losses``."""
        batch, layout, gold, extra = self.training_batch(examples)
        output, backprop = self.model_output(batch, is_train=True)
        loss, gradient = self.loss(self.structure_scores(output), layout, gold)
        backprop(self.model_gradient(gradient, output))
        return loss, extra

    def get_loss(self, examples: Iterable[Example], scores) -> Tuple[float, Scores]:
        """The loss and its gradient with respect to ``scores``, the model's
        output on the predicted Docs of ``training_batch(examples)``."""
        _, layout, gold, _ = self.training_batch(list(examples))
        loss, gradient = self.loss(self.structure_scores(scores), layout, gold)
        return loss, self.model_gradient(gradient, scores)

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        for key in (self.name,) + tuple(self.extra_losses):
            losses.setdefault(key, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        set_dropout_rate(self.model, drop)
        loss, extra = self.learn_from(examples, docs)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        for key, value in extra.items():
            losses[key] += value
        return losses

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    def add_label(self, label: str) -> int:
        if not isinstance(label, str) or not label:
            raise ValueError(f"A label must be a non-empty string, not {label!r}")
        if label in self.labels:
            return 0
        if self.initialized:
            raise ValueError(
                f"Cannot add label {label!r} to '{self.name}' after it was initialized: "
                "pass every label to initialize (labels = [...] in [initialize.components])."
            )
        self.cfg["labels"].append(label)
        self.vocab.strings.add(label)
        return 1

    def gold_entities(
        self, examples: Sequence[Example], doc_offsets: np.ndarray, spans_key: Optional[str] = None
    ) -> Tuple[np.ndarray, np.ndarray]:
        """The reference entities (``doc.ents``, or the span group ``spans_key``)
        in batch coordinates: (M, 2) first and last, label ids (M,) from 1
        (``doc_arrays.entities.gold_entities``)."""
        return gold_entities(examples, doc_offsets, self.labels, spans_key, self.name)

    def rejected_entities(self, examples: Sequence[Example], doc_offsets: np.ndarray) -> Optional[np.ndarray]:
        """The reference's known-wrong mentions, the span group named by the
        setting ``incorrect_spans_key`` (spaCy ``ner``'s convention), as (R, 3)
        [first, last, label from 0] in batch coordinates; None without the setting."""
        key = self.settings.get("incorrect_spans_key")
        if key is None:
            return None
        spans, ids = gold_entities(examples, doc_offsets, self.labels, key, self.name)
        return np.concatenate([spans, ids[:, None] - 1], axis=1)

    def entity_spans(self, docs, doc_offsets: np.ndarray, spans: np.ndarray, label_ids: np.ndarray) -> List[List[Span]]:
        """Spans per Doc from (M, 2) first/last in batch coordinates and label
        ids (M,) from 1; each Doc's spans in their order in ``spans``."""
        return [doc_spans for doc_spans, _ in scored_entity_spans(docs, doc_offsets, spans, label_ids, self.labels)]

    def reference_labels(self, example: Example) -> Iterable[str]:
        """The labels of an example's gold annotation (its entities)."""
        return (ent.label_ for ent in example.reference.ents)

    def initialize_model(self, sample: List[Doc]) -> None:
        """Set the model's output width (O + one score per label) and initialize it."""
        self.model.set_dim("nO", len(self.labels) + 1)
        self.model.initialize(X=(sample, None) if sample else None)

    def annotated_sample(self, examples: Iterable[Example], nlp=None) -> List[Doc]:
        """Copies of the examples' predicted Docs as this component will see
        them in training: annotated by the components before it that
        ``[training] annotating_components`` lists (e.g. a frozen parser
        whose trees the model reads)."""
        return list(self.annotated_docs(examples, nlp))

    def annotated_docs(self, examples: Iterable[Example], nlp=None, batch_size: int = 64) -> Iterator[Doc]:
        """``annotated_sample`` streamed: copies of the predicted Docs, piped
        in batches through the annotating components before this one."""
        docs = (eg.predicted.copy() for eg in examples)
        if nlp is None:
            yield from docs
            return
        annotating = set(nlp.config.get("training", {}).get("annotating_components") or [])
        names = nlp.component_names
        for name in names[: names.index(self.name)] if self.name in names else []:
            if name in annotating:
                docs = nlp.get_pipe(name).pipe(docs, batch_size=batch_size)
        yield from docs

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp=None,
        labels: Optional[List[str]] = None,
    ) -> None:
        """Add the given labels, or those of the training examples, then
        initialize the model on up to 10 sample Docs. A second stage of the
        two-stage model (a NonLocalFeatures layer in the model) also gets the
        corpus counts of the first-stage entities of the training Docs."""
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        if labels is None:
            labels = list(dict.fromkeys(label for eg in get_examples() for label in self.reference_labels(eg)))
        for label in labels:
            self.add_label(label)
        if not self.labels:
            raise ValueError(
                f"'{self.name}' has no labels: give labels to initialize or training examples with entities."
            )
        initialize_corpus_layers(self.model, self.labels, lambda: self.annotated_docs(get_examples(), nlp))
        self.initialize_model(self.annotated_sample(islice(get_examples(), 10), nlp))
        self.initialized = True
        self.check_label_keys()

    def check_label_keys(self) -> None:
        """A ValueError for a key of ``label_temperatures`` that is no label of
        the component's scores, once its labels are known."""
        if self.settings.get("label_temperatures"):
            self.column_temperatures()

    def loaded(self) -> None:
        """Rebuild what is derived from ``cfg`` after loading (nothing by default)."""

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        def load():
            if "cfg" not in exclude and "cfg" not in srsly.msgpack_loads(bytes_data):
                raise ValueError("no cfg in the data")
            return TrainablePipe.from_bytes(self, bytes_data, exclude=exclude)

        return self._load_or_explain(load, "bytes")

    def from_disk(self, path, *, exclude=tuple()):
        def load():
            if "cfg" not in exclude and not (Path(path) / "cfg").is_file():
                raise ValueError(f"no file {Path(path) / 'cfg'}")
            return TrainablePipe.from_disk(self, path, exclude=exclude)

        return self._load_or_explain(load, str(path))

    def _load_or_explain(self, load: Callable, source: str):
        """Load, check ``cfg`` and the saved settings, and turn any failure
        into an error that names the source."""
        try:
            loaded = load()
            self._check_cfg()
            self.loaded()
        except Exception as error:
            raise ValueError(
                f"Could not load '{self.name}' from {source}: the data is missing or corrupt "
                f"({type(error).__name__}: {error}). Save the pipeline again with nlp.to_disk."
            ) from error
        for key, value in self.saved_settings.items():
            if self.cfg[key] != value:
                raise ValueError(
                    f"'{self.name}' was trained with {key} = {self.cfg[key]!r}, but its config sets {key} = {value!r}. "
                    f"The model's weights depend on {key}: remove the override or train again."
                )
        self.initialized = True
        self.check_label_keys()
        return loaded

    def _check_cfg(self) -> None:
        labels = self.cfg.get("labels")
        if not isinstance(labels, list) or not labels or not all(isinstance(label, str) and label for label in labels):
            raise ValueError(f"cfg has no label list (labels: {labels!r})")
        missing = [key for key in self.saved_settings if key not in self.cfg]
        if missing:
            raise ValueError(f"cfg lacks {', '.join(missing)}")
