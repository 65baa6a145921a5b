"""The glue of the two-stage model (Krishnan & Manning 2006): the
``first_stage_spans`` component, placed between a first-stage entity
recognizer and a second-stage one, copies the first stage's ``doc.ents`` to
``doc.spans[spans_key]``, where the second stage's
``spacy_depner.NonLocalFeatures.v1`` layer reads them; and
``configure_second_stage``, called by every entity component at
initialization, which gives such layers their labels and the corpus counts of
the first stage's entities on the training corpus.

A two-stage pipeline: ``[tok2vec, chain_ner | dgm_ner | ner, first_stage_spans,
<second stage with NonLocalFeatures>]``; the second stage overwrites
``doc.ents``. In training, the second stage reads first-stage entities put in
the training Docs by the reader (``spacy_depner.UNERDocuments.v1`` with
``first_stage``: cross-validated predictions, so that they are as noisy as on
new text).
"""
from typing import Callable, Iterable, Sequence

from spacy.language import Language
from spacy.tokens import Doc
from thinc.api import Model

from ..ml.nonlocal_features import LAYER_NAME, configure_nonlocal_features, corpus_statistics


class FirstStageSpans:
    """Copies ``doc.ents`` to ``doc.spans[spans_key]``."""

    def __init__(self, name: str, spans_key: str):
        self.name = name
        self.spans_key = spans_key

    def __call__(self, doc: Doc) -> Doc:
        doc.spans[self.spans_key] = list(doc.ents)
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterable[Doc]:
        for doc in docs:
            yield self(doc)

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return b""

    def from_bytes(self, data: bytes, *, exclude=tuple()) -> "FirstStageSpans":
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        return None

    def from_disk(self, path, *, exclude=tuple()) -> "FirstStageSpans":
        return self


@Language.factory("first_stage_spans", default_config={"spans_key": "first_stage"})
def make_first_stage_spans(nlp: Language, name: str, spans_key: str) -> FirstStageSpans:
    return FirstStageSpans(name, spans_key)


def configure_second_stage(model: Model, labels: Sequence[str], get_docs: Callable[[], Iterable[Doc]]) -> int:
    """Give every NonLocalFeatures layer of ``model`` the label list and the
    corpus counts of the first-stage entities of the Docs ``get_docs()``
    gives (the training Docs, first-stage entities in the layer's span
    group). Returns the number of such layers; without one, ``get_docs`` is
    not called."""
    layers = [node for node in model.walk() if node.name == LAYER_NAME]
    for layer in layers:
        configure_nonlocal_features(layer, labels, corpus_statistics(get_docs(), spans_key=layer.attrs["spans_key"]))
    return len(layers)
