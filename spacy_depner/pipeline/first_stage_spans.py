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

With ``votes_from`` (the name of the first stage, one of this package's
entity components), it also writes the first stage's soft votes, every
mention of marginal probability at least ``VOTE_FLOOR`` with that
probability (``attrs["scores"]``), to ``doc.spans[spans_key + "_votes"]``,
where a NonLocalFeatures layer with that ``votes_key`` counts them.
"""

from typing import Iterable, List, Optional

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from ..ml.nonlocal_features import votes_key_of
from .entity_pipe import EntityPipe
from .span_groups import write_span_group
from .uncertainty import soft_votes


class FirstStageSpans:
    """Moves ``doc.ents`` to ``doc.spans[spans_key]``; with ``votes_from``,
    writes that component's soft votes to ``doc.spans[spans_key + "_votes"]``."""

    def __init__(self, nlp: Language, name: str, spans_key: str, votes_from: Optional[str] = None):
        self.nlp = nlp
        self.name = name
        self.spans_key = spans_key
        self.votes_from = votes_from

    def write_votes(self, docs: List[Doc]) -> None:
        if self.votes_from is None:
            return
        pipe = self.nlp.get_pipe(self.votes_from) if self.votes_from in self.nlp.component_names else None
        if not isinstance(pipe, EntityPipe):
            raise ValueError(
                f"'{self.name}' has votes_from = {self.votes_from!r}, which is not an entity component of this "
                f"package in the pipeline (it has {self.nlp.component_names}): name the first stage (a chain_ner, "
                "dgm_ner, nested_ner or hypergraph_ner before this component), or set votes_from = null"
            )
        key = votes_key_of(self.spans_key)
        for doc, votes in zip(docs, soft_votes(pipe, docs)):
            spans = [Span(doc, start, end, label=label) for start, end, label, _ in votes]
            write_span_group(doc, key, spans, [p for *_, p in votes])

    def move_entities(self, doc: Doc) -> Doc:
        write_span_group(doc, self.spans_key, doc.ents)
        doc.set_ents([], default="missing")
        return doc

    def __call__(self, doc: Doc) -> Doc:
        self.write_votes([doc])
        return self.move_entities(doc)

    def pipe(self, docs: Iterable[Doc], batch_size: int = 128) -> Iterable[Doc]:
        for batch in minibatch(docs, size=batch_size):
            self.write_votes(batch)
            yield from (self.move_entities(doc) for doc in batch)

    def to_bytes(self, *, exclude=tuple()) -> bytes:
        return b""

    def from_bytes(self, data: bytes, *, exclude=tuple()) -> "FirstStageSpans":
        return self

    def to_disk(self, path, *, exclude=tuple()) -> None:
        return None

    def from_disk(self, path, *, exclude=tuple()) -> "FirstStageSpans":
        return self


@Language.factory("first_stage_spans", default_config={"spans_key": "first_stage", "votes_from": None})
def make_first_stage_spans(nlp: Language, name: str, spans_key: str, votes_from: Optional[str]) -> FirstStageSpans:
    """spans_key: the span group that doc.ents moves to, where the
    second stage's spacy_depner.NonLocalFeatures.v1 layer reads it (the same
    spans_key there).

    votes_from: the name of the first stage (one of this package's entity
    components), whose soft votes (every mention of marginal at least 0.01,
    with its probability) go to doc.spans[spans_key + "_votes"], the
    layer's votes_key; null: none (hard votes)."""
    return FirstStageSpans(nlp, name, spans_key, votes_from)
