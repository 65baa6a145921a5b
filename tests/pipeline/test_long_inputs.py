"""Long sentences: each entity component decodes them in bounded memory or
refuses them with a ValueError naming the setting to change, a setting read
from the config at load (``spacy.load(path, config=...)``)."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example, train_component

WORDS = ["Mary", "lives", "in", "Paris", "John", "Smith", "visited", "New", "York", "Lee"]
DGM = {"@misc": "spacy_depner.dgm_suggester.v1", "max_length": None}
ALL_SPANS = {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": None}
LONG = 20_000  # tokens of a sentence that a linear component decodes in a second


def right_branching(vocab, n: int, parse: bool = True) -> Doc:
    """One sentence of n tokens; with ``parse``, token i hangs from i - 1, so
    every one of its n (n + 1) / 2 spans is a DGM valid span."""
    words = [WORDS[i % len(WORDS)] for i in range(n)]
    if not parse:
        return Doc(vocab, words=words)
    return Doc(vocab, words=words, heads=[0] + list(range(n - 1)), deps=["ROOT"] + ["dep"] * (n - 1))


def saved(tmp_path_factory, factory: str, config: dict, make_examples, steps: int = 15):
    nlp, _, _, _ = train_component(factory, config, make_examples, steps)
    path = tmp_path_factory.mktemp(factory) / "model"
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="module")
def dgm_path(tmp_path_factory):
    model = {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": SMALL_TOK2VEC}
    return saved(tmp_path_factory, "dgm_ner", {"model": model}, lambda nlp: [make_example(nlp, *row) for row in TINY])


def span_examples(nlp, key: str):
    """The TINY entities as the span group ``key``, input Docs without parse."""
    examples = []
    for words, *_, tags in TINY:
        reference = Doc(nlp.vocab, words=words, ents=tags)
        reference.spans[key] = list(reference.ents)
        examples.append(Example(Doc(nlp.vocab, words=words), reference))
    return examples


@pytest.fixture(scope="module")
def nested_path(tmp_path_factory):
    model = {"@architectures": "spacy_depner.MentionScorer.v1", "tok2vec": SMALL_TOK2VEC}
    return saved(tmp_path_factory, "nested_ner", {"model": model}, lambda nlp: span_examples(nlp, "nested_ner"))


def load(path, component: str, **settings):
    return spacy.load(path, config={"components": {component: settings}}) if settings else spacy.load(path)


def test_dgm_ner_refuses_a_long_unbounded_sentence_until_the_limit_is_raised_at_load(dgm_path):
    nlp = load(dgm_path, "dgm_ner")
    assert nlp.get_pipe("dgm_ner").settings["max_sentence_length"] == 500
    doc = right_branching(nlp.vocab, 600)
    with pytest.raises(
        ValueError, match=r"600 tokens .*max_sentence_length = 500.*max_length.*'max_sentence_length': 600"
    ):
        nlp(doc.copy())
    nlp(right_branching(nlp.vocab, 500))  # the limit itself is accepted
    for limit in (1000, None):
        raised = load(dgm_path, "dgm_ner", max_sentence_length=limit)
        assert raised.config["components"]["dgm_ner"]["max_sentence_length"] == limit
        ner = raised.get_pipe("dgm_ner")
        assert ner.settings["max_sentence_length"] == limit
        assert ner.read([doc]).spans.shape[0] == 600 * 601 // 2  # every span is in the lattice
        out = raised(doc.copy())
        assert len(out.ents) > 0 and np.all(out.spans["dgm_ner"].attrs["scores"] > 0)


def test_dgm_ner_refuses_the_unbounded_semi_markov_lattice_and_a_suggester_without_a_bound(dgm_path):
    semi_markov = load(dgm_path, "dgm_ner", suggester=ALL_SPANS)
    with pytest.raises(ValueError, match="max_sentence_length = 500"):
        semi_markov(right_branching(semi_markov.vocab, 501, parse=False))
    # spaCy's preset-spans suggester states no bound: treated as unbounded
    preset = load(dgm_path, "dgm_ner", suggester={"@misc": "spacy.preset_spans_suggester.v1", "spans_key": "given"})
    doc = right_branching(preset.vocab, 501, parse=False)
    doc.spans["given"] = [Span(doc, 0, 501)]
    with pytest.raises(ValueError, match="states no spans_per_token"):
        preset(doc)


@pytest.mark.parametrize(
    "suggester",
    [
        {**DGM, "max_length": 8},
        {**ALL_SPANS, "max_length": 8},
        {"@misc": "spacy_depner.dgm_s_suggester.v1", "max_length": None},  # at most 2 spans per token
        {"@misc": "spacy.ngram_suggester.v1", "sizes": [2, 3, 4, 5, 6, 7, 8]},
    ],
)
def test_dgm_ner_decodes_a_long_sentence_with_a_bounded_lattice(dgm_path, suggester):
    nlp = load(dgm_path, "dgm_ner", suggester=suggester)
    assert nlp.get_pipe("dgm_ner").settings["max_sentence_length"] == 500
    doc = right_branching(nlp.vocab, LONG, parse=suggester["@misc"] != "spacy.ngram_suggester.v1")
    lattice = nlp.get_pipe("dgm_ner").read([doc]).spans
    assert LONG <= lattice.shape[0] <= 8 * LONG
    out = nlp(doc)
    assert len(out.ents) > 0 and max(len(e) for e in out.ents) <= 8


@pytest.mark.parametrize("space", ["quadratic", "semi_markov"])
def test_nested_ner_refuses_a_long_sentence_until_the_limit_is_raised_at_load(nested_path, space):
    nlp = load(nested_path, "nested_ner", space=space)
    doc = right_branching(nlp.vocab, 600, parse=False)
    with pytest.raises(ValueError, match="600 tokens.*max_sentence_length = 500"):
        nlp(doc.copy())
    raised = load(nested_path, "nested_ner", space=space, max_sentence_length=2000)
    assert raised.get_pipe("nested_ner").settings["max_sentence_length"] == 2000
    out = raised(doc.copy())
    assert len(out.spans["nested_ner"]) > 0


def test_linear_components_decode_a_long_sentence():
    model = {"@architectures": "spacy_depner.TagScorer.v1", "tok2vec": SMALL_TOK2VEC}
    chain, _, _, _ = train_component(
        "chain_ner", {"model": model}, lambda nlp: [make_example(nlp, *row) for row in TINY], 15
    )
    out = chain(right_branching(chain.vocab, LONG, parse=False))
    assert len(out.ents) > 0
    hypergraph, _, _, _ = train_component(
        "hypergraph_ner",
        {"model": {"@architectures": "spacy_depner.TokenScorer.v1", "tok2vec": SMALL_TOK2VEC}},
        lambda nlp: span_examples(nlp, "hypergraph_ner"),
        15,
    )
    out = hypergraph(right_branching(hypergraph.vocab, LONG, parse=False))
    assert all(0 <= s.start < s.end <= LONG for s in out.spans["hypergraph_ner"])
