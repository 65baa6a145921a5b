"""sentence_ner: an entity recognizer of another pipeline run one sentence
at a time. Its entities are those of the recognizer run on each sentence as
a Doc of its own (en_core_web_sm's real ner, whose output does depend on the
neighbouring sentences); entities set before it are kept; it serializes the
recognizer it took, so a saved pipeline no longer needs the source. The
conformance table (conformance_rows.py, row sentence_ner) holds it to spaCy's
conventions."""

import pickle

import pytest
import spacy
from spacy.tokens import Doc, Span
from test_own_data_recipe import SM, needs_sm

from spacy_depner.pipeline.sentence_ner import entities_by_sentence, sentence_docs

# two sentences of UD English-EWT dev on which en_core_web_sm's ner, run over both at once, calls
# "Darin Fisher" a PERSON, and run over each sentence alone an ORG
TEXT = "2005 is going to rock ! | Darin Fisher wrote this response on January 25 , 2005 : | Tim Cook said so ."


def document(vocab, text: str = TEXT) -> Doc:
    """The words of ``text``, a sentence starting after each "|"."""
    words = text.split()
    starts = [i == 0 or words[i - 1] == "|" for i in range(len(words)) if words[i] != "|"]
    return Doc(vocab, words=[w for w in words if w != "|"], sent_starts=starts)


def ents(doc, offset: int = 0):
    return [(e.start + offset, e.end + offset, e.label_) for e in doc.ents]


@pytest.fixture(scope="module")
def sm():
    return spacy.load(SM)


@pytest.fixture(scope="module")
def sentence_nlp(sm):
    nlp = spacy.blank("en", vocab=sm.vocab)
    nlp.add_pipe("sentence_ner", config={"pipeline": str(SM)})
    nlp.initialize()
    return nlp


def by_hand(sm, doc):
    """The entities of en_core_web_sm's ner (with the tok2vec it reads) run on each sentence alone."""
    expected = []
    for sent in doc.sents:
        alone = sm.get_pipe("ner")(sm.get_pipe("tok2vec")(sent.as_doc()))
        expected += ents(alone, sent.start)
    return expected


@needs_sm
def test_entities_are_those_of_the_ner_run_on_each_sentence_alone(sm, sentence_nlp):
    doc = sentence_nlp(document(sentence_nlp.vocab))
    expected = by_hand(sm, document(sm.vocab))
    assert ents(doc) == expected
    assert {("Darin Fisher", "ORG"), ("Tim Cook", "PERSON")} <= {(e.text, e.label_) for e in doc.ents}
    # the same ner over the whole document gives other entities: the unit matters
    whole = sm.get_pipe("ner")(sm.get_pipe("tok2vec")(document(sm.vocab)))
    assert ("Darin Fisher", "PERSON") in {(e.text, e.label_) for e in whole.ents}
    # nlp.pipe, batched, gives the same as one Doc at a time
    piped = list(sentence_nlp.pipe([document(sentence_nlp.vocab)] * 3, batch_size=2))
    assert all(ents(d) == expected for d in piped)


@needs_sm
def test_entities_set_before_it_are_kept(sentence_nlp):
    doc = document(sentence_nlp.vocab)
    tim = [t.i for t in doc if t.text == "Tim"][0]
    doc.set_ents([Span(doc, tim, tim + 1, label="ORG")])
    out = sentence_nlp(doc)
    assert (tim, tim + 1, "ORG") in ents(out)
    assert not any(start <= tim < end and (start, end) != (tim, tim + 1) for start, end, _ in ents(out))


@needs_sm
def test_a_doc_without_sentences_is_one_sentence_and_an_empty_doc_passes(sm, sentence_nlp):
    words = "Barack Obama visited Paris".split()
    doc = sentence_nlp(Doc(sentence_nlp.vocab, words=words))
    alone = sm.get_pipe("ner")(sm.get_pipe("tok2vec")(Doc(sm.vocab, words=words)))
    assert ents(doc) == ents(alone) and len(doc.ents) >= 2
    assert list(sentence_nlp(Doc(sentence_nlp.vocab, words=[])).ents) == []
    assert sentence_docs(Doc(sentence_nlp.vocab, words=[])) == []


@needs_sm
def test_sentence_docs_are_each_sentence_as_doc_with_every_annotation(sm):
    doc = sm(" ".join(w for w in TEXT.split() if w != "|"))  # parsed, tagged, lemmatized, with entities
    doc.spans["kept"] = [doc[0:2]]
    sents = sentence_docs(doc)
    assert len(sents) == len(list(doc.sents)) >= 2
    for sent, alone in zip(sents, (s.as_doc() for s in doc.sents)):
        assert sent.to_bytes() == alone.to_bytes()


@needs_sm
def test_saved_pipeline_needs_no_source_and_gives_the_same_entities(sentence_nlp, tmp_path):
    expected = ents(sentence_nlp(document(sentence_nlp.vocab)))
    sentence_nlp.to_disk(tmp_path / "saved")
    config = (tmp_path / "saved" / "config.cfg").read_text()
    (tmp_path / "saved" / "config.cfg").write_text(config.replace(str(SM), str(tmp_path / "gone")))
    loaded = spacy.load(tmp_path / "saved")
    assert ents(loaded(document(loaded.vocab))) == expected
    assert ents(pickle.loads(pickle.dumps(sentence_nlp))(document(sentence_nlp.vocab))) == expected
    again = spacy.blank("en")
    again.add_pipe("sentence_ner")
    again.from_bytes(sentence_nlp.to_bytes())
    assert ents(again(document(again.vocab))) == expected
    assert set(loaded.get_pipe("sentence_ner").labels) >= {"PERSON", "GPE", "ORG"}


def test_clear_errors_before_initialization_and_for_a_wrong_source(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentence_ner")
    with pytest.raises(ValueError, match="nlp.initialize"):
        nlp("Some text")
    with pytest.raises(ValueError, match="pipeline = null"):
        nlp.initialize()
    missing = spacy.blank("en")
    missing.add_pipe("sentence_ner", config={"pipeline": str(tmp_path / "nothing")})
    with pytest.raises(ValueError, match="cannot load"):
        missing.initialize()
    spacy.blank("en").to_disk(tmp_path / "blank")
    no_ner = spacy.blank("en")
    no_ner.add_pipe("sentence_ner", config={"pipeline": str(tmp_path / "blank")})
    with pytest.raises(ValueError, match="has no component 'ner'"):
        no_ner.initialize()
    with pytest.raises(ValueError, match="recognizer.cfg"):
        nlp.get_pipe("sentence_ner").from_disk(tmp_path / "blank")


def test_entities_by_sentence_puts_each_sentence_back_in_place():
    nlp = spacy.blank("en")
    doc = document(nlp.vocab, "A b . | c D . | e")

    def label_capitals(sentences):
        for sent in sentences:
            sent.set_ents([Span(sent, i, i + 1, label=f"S{len(sent)}") for i, t in enumerate(sent) if t.is_upper])
            yield sent

    out = entities_by_sentence(label_capitals, [doc])[0]
    assert ents(out) == [(0, 1, "S3"), (4, 5, "S3")]
    assert [t.ent_iob_ for t in out] == ["B", "O", "O", "O", "B", "O", "O"]
