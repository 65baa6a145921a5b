"""The glue of the two-stage model (Krishnan & Manning 2006): the
``first_stage_spans`` component, placed between a first-stage entity
recognizer and a second-stage one, moves the first stage's ``doc.ents`` to
``doc.spans[spans_key]`` (``doc.ents`` is left empty, its tokens unannotated:
the first stage's entities are the second stage's features, not entities set
before it, which it would keep), where the second stage's
``spacy_depner.NonLocalFeatures.v1`` layer reads them (every entity
component gives such layers their labels and the corpus counts of the first
stage's entities on the training corpus at initialization:
``spacy_depner.ml.corpus_layers.initialize_corpus_layers``).

A two-stage pipeline: ``[tok2vec, chain_ner | dgm_ner | ner, first_stage_spans,
<second stage with NonLocalFeatures>]``; the second stage overwrites
``doc.ents``. In training, the second stage reads first-stage entities put in
the training Docs by the reader (``spacy_depner.UNERDocuments.v1`` with
``first_stage``: cross-validated predictions, so that they are as noisy as on
new text).
"""

from typing import Iterable

from spacy.language import Language
from spacy.tokens import Doc

from .span_groups import write_span_group


class FirstStageSpans:
    """Moves ``doc.ents`` to ``doc.spans[spans_key]``."""

    def __init__(self, name: str, spans_key: str):
        self.name = name
        self.spans_key = spans_key

    def __call__(self, doc: Doc) -> Doc:
        write_span_group(doc, self.spans_key, doc.ents)
        doc.set_ents([], default="missing")
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
    """spans_key: the span group that doc.ents moves to, where the
    second stage's spacy_depner.NonLocalFeatures.v1 layer reads it (the same
    spans_key there)."""
    return FirstStageSpans(name, spans_key)
