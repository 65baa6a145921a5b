"""UNERDocuments.v1 with ``sentences``: the documents' sentences, cut with
their entities, trees and first-stage span groups."""

import os
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_depner.readers.documents import create_uner_documents_reader, sentence_examples

DATA = Path(os.environ.get("DEPNER_DATA", "/work/shared/data"))


def _example(first_stage):
    vocab = spacy.blank("en").vocab
    words = ["Ann", "met", "Bob", ".", "Bob", "left", "Paris", "."]
    starts = [True, False, False, False, True, False, False, False]
    heads = [1, 1, 1, 1, 5, 5, 5, 5]
    reference = Doc(
        vocab,
        words=words,
        sent_starts=starts,
        heads=heads,
        deps=["dep"] * 8,
        ents=["B-PER", "O", "B-PER", "O", "B-PER", "O", "B-LOC", "O"],
    )
    predicted = Doc(vocab, words=words, sent_starts=starts)
    predicted.spans["first_stage"] = [Span(predicted, s, e, label) for s, e, label in first_stage]
    return Example(predicted, reference)


def test_sentences_keep_entities_trees_and_first_stage_spans():
    cut = sentence_examples(_example([(0, 1, "PERSON"), (6, 7, "GPE"), (4, 5, "PERSON")]))
    assert [eg.reference.text.strip() for eg in cut] == ["Ann met Bob .", "Bob left Paris ."]
    assert [[(e.text, e.label_) for e in eg.reference.ents] for eg in cut] == [
        [("Ann", "PER"), ("Bob", "PER")],
        [("Bob", "PER"), ("Paris", "LOC")],
    ]
    assert [t.head.i for t in cut[1].reference] == [1, 1, 1, 1]
    assert [sorted((s.start, s.end, s.label_) for s in eg.predicted.spans["first_stage"]) for eg in cut] == [
        [(0, 1, "PERSON")],
        [(0, 1, "PERSON"), (2, 3, "GPE")],
    ]


def test_a_first_stage_span_across_sentences_is_refused():
    with pytest.raises(ValueError, match="crosses a sentence boundary at token 4"):
        sentence_examples(_example([(2, 6, "ORG")]))


def test_reader_sentences_are_the_kept_documents_sentences(tmp_path):
    if not (DATA / "ud_ewt").is_dir():
        pytest.skip(f"no UD English-EWT under {DATA} (set DEPNER_DATA to the data folder)")
    conllu, iob2 = DATA / "ud_ewt" / "r2.9" / "en_ewt-ud-dev.conllu", DATA / "uner_ewt" / "en_ewt-ud-dev.iob2"
    nlp = spacy.blank("en")
    settings = dict(conllu=conllu, iob2=iob2, limit=6, folds=3, exclude_fold=1)
    documents = list(create_uner_documents_reader(**settings)(nlp))
    sentences = list(create_uner_documents_reader(**settings, sentences=True)(nlp))
    assert len(documents) == 4 and len(sentences) == sum(len(list(eg.reference.sents)) for eg in documents)
    assert [t.text for eg in sentences for t in eg.reference] == [t.text for eg in documents for t in eg.reference]
    assert [(e.text, e.label_) for eg in sentences for e in eg.reference.ents] == [
        (e.text, e.label_) for eg in documents for e in eg.reference.ents
    ]
    assert all(len(list(eg.reference.sents)) == 1 for eg in sentences)
