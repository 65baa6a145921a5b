"""``sentence_ner``: an entity recognizer of another pipeline (spaCy's
``ner`` of a pretrained pipeline, or one you trained) run one sentence at a
time, as a first stage of the two-stage model.

spaCy's ``ner`` trained on one Doc per sentence (spaCy's ``Corpus`` of a
sentence-per-document DocBin, the CoNLL-U converters) scores best on such
Docs: run over whole documents, its tok2vec sees the neighbouring sentences
it never saw in training. This component reads each Doc's sentences
(``doc.sents``: a parser or senter before it, or the data's own sentence
starts; a Doc with no sentence boundaries is one sentence), runs the
recognizer over every sentence as a Doc of its own (``Span.as_doc``, which
keeps entities set before it, so that they are respected) and writes the
entities back to ``doc.ents``. The entities are exactly those of the
recognizer run over Docs of one sentence each.

The recognizer is taken from ``pipeline`` (a package name or a folder, as a
config's ``source``) at ``initialize``, with its listeners replaced by a copy
of the tok2vec they listen to; from then on it lives inside this component
(``to_disk`` writes it and its config, ``from_disk`` reads them), so a
trained pipeline does not need ``pipeline`` any more.
"""

from pathlib import Path
from typing import Callable, Iterable, List, Optional, Tuple

import numpy as np
import srsly
from spacy.attrs import ENT_IOB, ENT_TYPE
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch
from thinc.api import Config

ENTITY_ATTRS = [ENT_IOB, ENT_TYPE]


def sentence_bounds(doc: Doc) -> List[Tuple[int, int]]:
    """(start, end) of each sentence of ``doc`` (its sentence starts; the whole Doc when it has none)."""
    if len(doc) == 0:
        return []
    if not doc.has_annotation("SENT_START"):
        return [(0, len(doc))]
    return [(sent.start, sent.end) for sent in doc.sents]


def sentence_docs(doc: Doc, bounds: Optional[List[Tuple[int, int]]] = None) -> List[Doc]:
    """The sentences of ``doc`` (``bounds``, by default ``sentence_bounds(doc)``)
    as Docs of their own (``Span.as_doc``, the Doc's attribute array read once
    for all of them)."""
    head = doc._get_array_attrs()
    array = doc.to_array(head)
    bounds = sentence_bounds(doc) if bounds is None else bounds
    return [doc[start:end].as_doc(array_head=head, array=array) for start, end in bounds]


def entities_by_sentence(run: Callable[[List[Doc]], Iterable[Doc]], docs: List[Doc]) -> List[Doc]:
    """``docs`` with the ``doc.ents`` that ``run`` (Docs in, the same Docs
    annotated out, e.g. a pipe's ``pipe``) gives their sentences, each
    sentence a Doc of its own. The sentences partition a Doc, so the
    entity columns of its sentences, end to end, are the Doc's."""
    sentences = [sentence_docs(doc) for doc in docs]
    annotated = iter(run([sent for sents in sentences for sent in sents]))
    for doc, sents in zip(docs, sentences):
        columns = [next(annotated).to_array(ENTITY_ATTRS) for _ in sents]
        if columns:
            doc.from_array(ENTITY_ATTRS, np.concatenate(columns).astype("uint64"))
    return docs


class SentenceNER:
    """The entity recognizer ``component`` of ``pipeline``, run one sentence at a time."""

    def __init__(self, nlp: Language, name: str, pipeline: Optional[str], component: str):
        self.nlp = nlp
        self.vocab = nlp.vocab
        self.name = name
        self.pipeline = pipeline
        self.component = component
        self.recognizer = None
        self.recognizer_config: Optional[dict] = None

    @property
    def labels(self):
        return () if self.recognizer is None else tuple(self.recognizer.labels)

    @property
    def model(self):
        """The recognizer's model (None before initialize), e.g. for tok2vec_from_component."""
        return None if self.recognizer is None else self.recognizer.model

    def ready(self):
        if self.recognizer is None:
            raise ValueError(
                f"'{self.name}' (sentence_ner) has no entity recognizer yet: call nlp.initialize() to take "
                f"'{self.component}' from pipeline = {self.pipeline!r}, or load a pipeline saved after that"
            )
        return self.recognizer

    def initialize(self, get_examples=None, *, nlp: Optional[Language] = None) -> None:
        """Takes the recognizer ``component`` from ``pipeline``, its listeners replaced by their tok2vec."""
        import spacy

        if not self.pipeline:
            raise ValueError(
                f"'{self.name}' (sentence_ner) has pipeline = null: set it to the pipeline the recognizer comes "
                "from (a package name such as en_core_web_sm, or a folder such as training/ner/model-best)"
            )
        try:
            source = spacy.load(self.pipeline, vocab=self.vocab)
        except (OSError, IOError) as error:
            raise ValueError(
                f"'{self.name}' (sentence_ner) cannot load pipeline = {self.pipeline!r} ({error}): give an "
                "installed package or the folder of a saved pipeline"
            ) from None
        if self.component not in source.component_names:
            raise ValueError(
                f"'{self.name}' (sentence_ner): {self.pipeline!r} has no component '{self.component}' (it has "
                f"{source.component_names}): set component to its entity recognizer"
            )
        for tok2vec_name, tok2vec in source.pipeline:
            listeners = getattr(tok2vec, "listener_map", {}).get(self.component, [])
            if listeners:
                source.replace_listeners(tok2vec_name, self.component, ["model.tok2vec"])
        self.recognizer = source.get_pipe(self.component)
        self.recognizer_config = dict(source.config["components"][self.component])

    def __call__(self, doc: Doc) -> Doc:
        return entities_by_sentence(self.ready().pipe, [doc])[0]

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterable[Doc]:
        recognizer = self.ready()
        for batch in minibatch(docs, size=batch_size):
            yield from entities_by_sentence(lambda sents: recognizer.pipe(sents, batch_size=batch_size), batch)

    # serialization: the recognizer and its config travel inside this component

    def build(self, config: dict):
        config = dict(config)
        factory = config.pop("factory")
        return self.nlp.create_pipe(factory, name=f"{self.name}.{self.component}", config=config)

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        recognizer = self.ready()
        return srsly.msgpack_dumps(
            {
                "config": Config({"recognizer": self.recognizer_config}).to_str(),
                "recognizer": recognizer.to_bytes(exclude=exclude),
            }
        )

    def from_bytes(self, data: bytes, *, exclude=tuple()) -> "SentenceNER":
        message = srsly.msgpack_loads(data)
        self.recognizer_config = dict(Config().from_str(message["config"], interpolate=False)["recognizer"])
        self.recognizer = self.build(self.recognizer_config).from_bytes(message["recognizer"], exclude=exclude)
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        recognizer = self.ready()
        Config({"recognizer": self.recognizer_config}).to_disk(path / "recognizer.cfg")
        recognizer.to_disk(path / "recognizer", exclude=exclude)

    def from_disk(self, path, *, exclude=tuple()) -> "SentenceNER":
        path = Path(path)
        if not (path / "recognizer.cfg").exists():
            raise ValueError(
                f"{path} holds no recognizer.cfg: '{self.name}' (sentence_ner) was saved before it was "
                "initialized, or the folder is incomplete; train or initialize the pipeline again"
            )
        self.recognizer_config = dict(Config().from_disk(path / "recognizer.cfg", interpolate=False)["recognizer"])
        self.recognizer = self.build(self.recognizer_config).from_disk(path / "recognizer", exclude=exclude)
        return self


@Language.factory("sentence_ner", default_config={"pipeline": None, "component": "ner"})
def make_sentence_ner(nlp: Language, name: str, pipeline: Optional[str], component: str) -> SentenceNER:
    """pipeline: the pipeline the entity recognizer is taken from at
    initialize (a package name or a folder, e.g. ${paths.pretrained});
    not needed once the pipeline holding this component is saved.

    component: the name of the recognizer in that pipeline ("ner")."""
    return SentenceNER(nlp, name, pipeline, component)
