"""Decoding given what a Doc already holds (``EntityPipe.given``): the
entities an earlier component set (an entity ruler's) are kept exactly, as
spaCy's ``ner`` keeps them, and the rest is the exact conditional analysis
(``Structure.conditioned``, tested against enumeration in
tests/structures/test_partial.py); ``overwrite_ents = true`` replaces them;
no entity or mention ever holds a whitespace token, even from a model
trained to tag whitespace."""

import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from test_decoding_settings import CONFIGS, FLAT, NAMES, examples_of
from tiny_corpus import train_component

SPACE = "\n\n "
# the tiny corpus, and a sentence whose whitespace token is a gold PER (what spaCy's ner could never predict)
WHITESPACE_WORDS = ["Mary", SPACE, "lives", "in", "Paris"]
TEXT_WORDS = ["John", "Smith", "visited", SPACE, "Paris", "and", "Mary", "lives", "in", "New", "York"]


def whitespace_examples(name):
    base = examples_of(name)

    def make(nlp):
        examples = base(nlp)
        reference = Doc(nlp.vocab, words=WHITESPACE_WORDS)
        mentions = [Span(reference, 0, 2, "PER"), Span(reference, 4, 5, "LOC")]
        if name in FLAT:
            reference.set_ents(mentions)
        else:
            reference.spans[name] = mentions
        return examples + [Example(Doc(nlp.vocab, words=WHITESPACE_WORDS), reference)] * 3

    return make


@pytest.fixture(scope="module")
def trained():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = train_component(name, CONFIGS[name], whitespace_examples(name), 30)[0]
        return cache[name]

    return get


def text_doc(nlp):
    return Doc(nlp.vocab, words=TEXT_WORDS)


def mentions_of(doc, key):
    return [(s.start, s.end, s.label_) for s in doc.spans.get(key, [])], [(e.start, e.end, e.label_) for e in doc.ents]


@pytest.mark.parametrize("name", NAMES)
def test_no_mention_holds_a_whitespace_token(trained, name):
    nlp = trained(name)
    key = nlp.get_pipe(name).spans_key
    doc = nlp(Doc(nlp.vocab, words=WHITESPACE_WORDS))
    spans, ents = mentions_of(doc, key)
    assert spans or ents, "the model predicts something"
    for start, end, _ in spans + ents:
        assert not any(t.is_space for t in doc[start:end]), (doc[start:end].text, spans, ents)
    bare = nlp(Doc(nlp.vocab, words=[SPACE]))
    assert mentions_of(bare, key) == ([], [])


@pytest.mark.parametrize("name", FLAT)
def test_preset_entities_are_kept_and_the_rest_decoded_given_them(trained, name):
    nlp = trained(name)
    pipe = nlp.get_pipe(name)
    free = nlp(text_doc(nlp))
    assert [(e.text, e.label_) for e in free.ents][:1] == [("John Smith", "PER")]
    doc = text_doc(nlp)
    # a known label (PER) on a span the model calls LOC, and a label the model does not have
    doc.set_ents([Span(doc, 4, 5, "ORG"), Span(doc, 9, 11, "PER")])
    out = nlp(doc)
    ents = [(e.start, e.end, e.label_) for e in out.ents]
    assert (4, 5, "ORG") in ents and (9, 11, "PER") in ents
    for start, end, _ in ents:
        assert end <= 4 or start >= 11 or (start, end) in ((4, 5), (9, 11)) or end <= 9 and start >= 5
    group = out.spans[pipe.spans_key]
    scores = dict(zip([(s.start, s.end, s.label_) for s in group], group.attrs["scores"]))
    assert scores[(9, 11, "PER")] == 1.0  # a preset entity of a known label is certain
    assert (4, 5, "ORG") not in scores  # one of another label is kept in doc.ents only
    assert out.ents[0].text == "John Smith"


@pytest.mark.parametrize("name", FLAT)
def test_conditioning_changes_the_neighbours_as_the_conditional_analysis_does(trained, name):
    """A preset entity that the model would not predict moves the marginals of
    the free tokens: they are those of the conditional distribution, which
    differ from the unconditioned ones, while tokens far away in another
    sentence keep theirs."""
    nlp = trained(name)
    pipe = nlp.get_pipe(name)
    words = ["Mary", "lives", "in", "Paris"]
    doc = Doc(
        nlp.vocab,
        words=words + ["John", "Smith", "visited", "New", "York"],
        sent_starts=[True, False, False, False, True, False, False, False, False],
    )
    free = nlp(doc.copy())
    given = doc.copy()
    given.set_ents([Span(given, 1, 3, "LOC")])  # "lives in" as LOC
    out = nlp(given)
    free_scores = dict(
        zip(
            [(s.start, s.end, s.label_) for s in free.spans[pipe.spans_key]], free.spans[pipe.spans_key].attrs["scores"]
        )
    )
    out_scores = dict(
        zip([(s.start, s.end, s.label_) for s in out.spans[pipe.spans_key]], out.spans[pipe.spans_key].attrs["scores"])
    )
    assert out_scores[(1, 3, "LOC")] == 1.0
    for span in [(4, 6, "PER"), (7, 9, "LOC")]:  # the second sentence is its own chain: unchanged
        assert span in free_scores and abs(free_scores[span] - out_scores[span]) < 1e-6


@pytest.mark.parametrize("name", NAMES)
def test_overwrite_ents_replaces_what_the_doc_had(trained, name):
    nlp = trained(name)
    doc = text_doc(nlp)
    doc.set_ents([Span(doc, 4, 5, "ORG")])
    kept = nlp(doc.copy())
    assert (4, 5, "ORG") in [(e.start, e.end, e.label_) for e in kept.ents]
    nlp.get_pipe(name).settings["overwrite_ents"] = True
    try:
        replaced = nlp(doc.copy())
    finally:
        nlp.get_pipe(name).settings["overwrite_ents"] = False
    assert (4, 5, "ORG") not in [(e.start, e.end, e.label_) for e in replaced.ents]
    assert mentions_of(replaced, "none")[1] == mentions_of(nlp(text_doc(nlp)), "none")[1]


def test_an_entity_ruler_before_the_component(trained, tmp_path):
    nlp = trained("chain_ner")
    ruler = nlp.add_pipe("entity_ruler", before="chain_ner")
    ruler.add_patterns([{"label": "ORG", "pattern": "Paris"}, {"label": "PER", "pattern": "New York"}])
    try:
        doc = nlp(" ".join(w for w in TEXT_WORDS if w != SPACE))
        assert [(e.text, e.label_) for e in doc.ents if e.text in ("Paris", "New York")] == [
            ("Paris", "ORG"),
            ("New York", "PER"),
        ]
        nlp.to_disk(tmp_path)
        loaded = spacy.load(tmp_path)
        assert [(e.text, e.label_) for e in loaded(doc.text).ents] == [(e.text, e.label_) for e in doc.ents]
        assert loaded.get_pipe("chain_ner").settings["overwrite_ents"] is False
    finally:
        nlp.remove_pipe("entity_ruler")
