"""A pretrained pipeline's own ``ner`` scored on UNER English-EWT with no
training: its OntoNotes types mapped to the corpus's (``ONTONOTES_TO_UNER``),
entities of the other types dropped."""

from typing import Dict, Iterable, Mapping

from spacy.tokens import Doc, Span

ONTONOTES_TO_UNER = {"PERSON": "PER", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC"}


class MappedEntities:
    """A pipeline whose ``doc.ents`` are relabelled by ``mapping`` (labels
    it lacks dropped): the ``vocab`` and ``pipe`` that ``score_pipeline`` calls."""

    def __init__(self, nlp, mapping: Mapping[str, str] = ONTONOTES_TO_UNER):
        self.nlp, self.vocab, self.mapping = nlp, nlp.vocab, dict(mapping)

    def pipe(self, docs: Iterable[Doc], batch_size: int = 256) -> Iterable[Doc]:
        for doc in self.nlp.pipe(docs, batch_size=batch_size):
            doc.ents = [
                Span(doc, e.start, e.end, label=self.mapping[e.label_]) for e in doc.ents if e.label_ in self.mapping
            ]
            yield doc


def mapped_ner_scores(pipeline: str, corpora: Dict) -> Dict:
    """P/R/F (``score_pipeline``) of the pipeline's own ner, mapped, on each
    corpus of ``corpora`` ({split: UNERCorpus}), its parser's trees and the
    data's tokens and sentences: {split: scores}."""
    import spacy

    from spacy_depner.evaluation.corpus_scores import input_docs, score_pipeline

    nlp = spacy.load(pipeline)
    mapped = MappedEntities(nlp)
    return {
        split: score_pipeline(mapped, corpus, input_docs(nlp.vocab, corpus, trees=False))
        for split, corpus in corpora.items()
    }
