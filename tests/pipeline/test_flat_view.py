"""The flat view (``ents``) of nested_ner and hypergraph_ner in ``doc.ents``:
equal to the projection of ``doc.spans[key]`` computed here from its
definition (outermost: pairwise containment, then spaCy's ``filter_spans``;
most_probable: every disjoint subset enumerated), shown by displaCy, scored
by spaCy's entity scores, set at load, validated; and ``displacy_options``."""

import itertools
import re

import numpy as np
import pytest
import spacy
from spacy import displacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import filter_spans
from tiny_corpus import SMALL_TOK2VEC, train_component

from spacy_depner import displacy_options
from spacy_depner.pipeline.display import PALETTE
from spacy_depner.pipeline.entity_pipe import Prediction

KEY = "nested_ner"
MODEL = {"@architectures": "spacy_depner.MentionScorer.v1", "tok2vec": SMALL_TOK2VEC}
# words, mentions (start, end exclusive, label): nested, one level and two
NESTED = [
    ("the University of Paris hospital".split(), [(1, 4, "ORG"), (3, 4, "LOC"), (0, 5, "FAC")]),
    ("Mary saw the Bank of England".split(), [(0, 1, "PER"), (3, 6, "ORG"), (5, 6, "LOC")]),
    ("Paris is big".split(), [(0, 1, "LOC")]),
]


# ---------------------------------------------------------------------------
# The projections, from their definitions, on Spans
# ---------------------------------------------------------------------------


def outermost_view(spans, scores, labels):
    """The spans inside no other; one range with several labels: the more
    probable, then the first label; then spaCy's filter_spans (longest first)."""
    outer = [
        (s, p)
        for s, p in zip(spans, scores)
        if not any(o.start <= s.start and s.end <= o.end and (o.start, o.end) != (s.start, s.end) for o in spans)
    ]
    best = {}
    for s, p in outer:
        key = (s.start, s.end)
        if key not in best or (p, -labels.index(s.label_)) > (best[key][1], -labels.index(best[key][0].label_)):
            best[key] = (s, p)
    return sorted((s.start, s.end, s.label_) for s in filter_spans([s for s, _ in best.values()]))


def most_probable_view(spans, scores):
    """The disjoint subset with the largest (sum of scores, tokens covered),
    by enumeration; every subset reaching the optimum."""

    def disjoint(subset):
        return all(a.end <= b.start or b.end <= a.start for a, b in itertools.combinations(subset, 2))

    scored = [
        (
            (sum(float(p) for _, p in subset), sum(len(s) for s, _ in subset)),
            sorted((s.start, s.end, s.label_) for s, _ in subset),
        )
        for size in range(len(spans) + 1)
        for subset in itertools.combinations(list(zip(spans, scores)), size)
        if disjoint([s for s, _ in subset])
    ]
    best = max(key for key, _ in scored)
    return [found for key, found in scored if key == best]


def ents_of(doc):
    return sorted((e.start, e.end, e.label_) for e in doc.ents)


def check_views(docs, key, labels, ents):
    """doc.ents of each Doc is the projection ``ents`` of doc.spans[key]."""
    n_ents = 0
    for doc in docs:
        group = doc.spans[key]
        scores = group.attrs["scores"] if "scores" in group.attrs else np.zeros(len(group))
        if ents == "outermost":
            assert ents_of(doc) == outermost_view(list(group), scores, labels)
        else:
            assert ents_of(doc) in most_probable_view(list(group), scores)
        n_ents += len(doc.ents)
    assert n_ents > 0


# ---------------------------------------------------------------------------
# nested_ner, trained once
# ---------------------------------------------------------------------------


def make_example(nlp, words, found):
    """Gold mentions in doc.spans[KEY] and their outermost ones in doc.ents."""
    reference = Doc(nlp.vocab, words=words)
    reference.spans[KEY] = [Span(reference, s, e, label=label) for s, e, label in found]
    reference.ents = [
        Span(reference, s, e, label=label)
        for s, e, label in found
        if not any(o[0] <= s and e <= o[1] and (o[0], o[1]) != (s, e) for o in found)
    ]
    return Example(Doc(nlp.vocab, words=words), reference)


def fresh_docs(nlp):
    return [Doc(nlp.vocab, words=words) for words, _ in NESTED]


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    nlp, ner, examples, _ = train_component(
        KEY,
        {"model": MODEL, "structure": "cyk", "ents": "outermost"},
        lambda nlp: [make_example(nlp, *row) for row in NESTED],
        40,
    )
    path = tmp_path_factory.mktemp("flat") / "model"
    nlp.to_disk(path)
    return nlp, ner, examples, path


@pytest.mark.slow
def test_outermost_view_is_written_scored_and_shown(nested):
    nlp, ner, examples, _ = nested
    assert "doc.ents" in nlp.get_pipe_meta(KEY).assigns
    docs = list(nlp.pipe(fresh_docs(nlp)))
    assert [sorted(m) for _, m in NESTED] == [sorted((s.start, s.end, s.label_) for s in d.spans[KEY]) for d in docs]
    check_views(docs, KEY, list(ner.labels), "outermost")
    assert ents_of(docs[0]) == [(0, 5, "FAC")] and ents_of(docs[1]) == [(0, 1, "PER"), (3, 6, "ORG")]
    # spaCy's entity scores beside the span scores; one reference entity fewer: P = 3/4
    scores = nlp.evaluate(examples)
    assert (
        scores[f"spans_{KEY}_f"] == 1.0
        and scores["ents_f"] == 1.0
        and set(scores["ents_per_type"]) == {"FAC", "PER", "ORG", "LOC"}
    )
    fewer = [make_example(nlp, *row) for row in NESTED]
    fewer[1].reference.ents = [fewer[1].reference.ents[0]]
    scores = nlp.evaluate(fewer)
    assert scores["ents_p"] == 3 / 4 and scores["ents_r"] == 1.0 and scores[f"spans_{KEY}_f"] == 1.0
    # an earlier component's entities are kept (the view's mentions that overlap none of them join them),
    # or replaced with overwrite_ents
    doc = Doc(nlp.vocab, words=NESTED[2][0])
    doc.ents = [Span(doc, 1, 3, label="OTHER")]
    assert ents_of(nlp(doc.copy())) == [(0, 1, "LOC"), (1, 3, "OTHER")]
    nlp.get_pipe(KEY).settings["overwrite_ents"] = True
    try:
        assert ents_of(nlp(doc.copy())) == [(0, 1, "LOC")]
    finally:
        nlp.get_pipe(KEY).settings["overwrite_ents"] = False
    html = displacy.render(docs, style="ent")
    for doc in docs:
        for ent in doc.ents:
            assert re.search(rf"{re.escape(ent.text)}\s*<span[^>]*>{ent.label_}</span>", html)


@pytest.mark.slow
def test_the_view_is_set_at_load(nested):
    nlp, ner, _, path = nested
    probable = spacy.load(path, config={"components": {KEY: {"ents": "most_probable"}}})
    assert probable.config["components"][KEY]["ents"] == "most_probable" == probable.get_pipe(KEY).settings["ents"]
    check_views(list(probable.pipe(fresh_docs(probable))), KEY, list(ner.labels), "most_probable")
    unscored = spacy.load(path, config={"components": {KEY: {"probabilities": False}}})
    check_views(list(unscored.pipe(fresh_docs(unscored))), KEY, list(ner.labels), "outermost")
    none = spacy.load(path, config={"components": {KEY: {"ents": None}}})
    docs = list(none.pipe(fresh_docs(none)))
    assert all(len(doc.spans[KEY]) and not doc.ents for doc in docs)
    assert "ents_f" not in none.evaluate([make_example(none, *row) for row in NESTED])
    with pytest.raises(ValueError, match='ents = "most_probable" and probabilities = false'):
        spacy.load(path, config={"components": {KEY: {"ents": "most_probable", "probabilities": False}}})
    with pytest.raises(ValueError, match=f"{KEY} -> ents.*'flat'.*'outermost', 'most_probable'"):
        spacy.load(path, config={"components": {KEY: {"ents": "flat"}}})


@pytest.mark.slow
def test_displacy_options_colour_each_label(nested):
    nlp, ner, _, _ = nested
    options = displacy_options(nlp)
    assert options["spans_key"] == KEY and list(options["colors"]) == list(ner.labels)
    assert len(set(options["colors"].values())) == len(ner.labels)
    docs = list(nlp.pipe(fresh_docs(nlp)))
    span_html = displacy.render(docs, style="span", options=options)
    shown = re.findall(r'<span style="background: (#[0-9a-f]{6}); z-index: 10;[^>]*>\s*(\w+)\s*</span>', span_html)
    assert {label for _, label in shown} == {s.label_ for doc in docs for s in doc.spans[KEY]}
    assert all(colour == options["colors"][label] for colour, label in shown)
    ent_html = displacy.render(docs, style="ent", options=options)
    shown = re.findall(
        r'<mark class="entity" style="background: (#[0-9a-f]{6});.*?<span[^>]*>(\w+)</span>', ent_html, re.S
    )
    assert {label for _, label in shown} == {e.label_ for doc in docs for e in doc.ents}
    assert all(colour == options["colors"][label] for colour, label in shown)


# ---------------------------------------------------------------------------
# The shared writer on hand-made predictions: one span with two labels
# ---------------------------------------------------------------------------


def hypergraph(ents, probabilities=True):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe(
        "hypergraph_ner",
        config={
            "ents": ents,
            "probabilities": probabilities,
            "model": {"@architectures": "spacy_depner.TokenScorer.v1", "hidden_width": 8, "tok2vec": SMALL_TOK2VEC},
        },
    )
    doc = Doc(nlp.vocab, words=["Paris"])
    ner.initialize(lambda: [Example(doc, doc)], nlp=nlp, labels=["LOC", "ORG", "FAC"])
    return nlp, ner


@pytest.mark.parametrize(
    "ents, probabilities, expected",
    [
        # (0, 1) is LOC and ORG; FAC (1, 2) crosses it, as long and later; LOC (3, 3)
        ("outermost", [0.4, 0.6, 0.5, 0.9], [(0, 2, "ORG"), (3, 4, "LOC")]),
        ("outermost", [0.5, 0.5, 0.9, 0.9], [(0, 2, "LOC"), (3, 4, "LOC")]),  # equal probabilities: the first label
        ("outermost", None, [(0, 2, "LOC"), (3, 4, "LOC")]),
        ("most_probable", [0.4, 0.6, 0.5, 0.9], [(0, 2, "ORG"), (3, 4, "LOC")]),
        ("most_probable", [0.4, 0.3, 0.8, 0.1], [(1, 3, "FAC"), (3, 4, "LOC")]),
    ],
)
def test_one_span_two_labels_and_crossing_spans(ents, probabilities, expected):
    nlp, ner = hypergraph(ents, probabilities=probabilities is not None)
    docs = [Doc(nlp.vocab, words="New York Times Square".split()), Doc(nlp.vocab, words=["Paris"])]
    mentions = np.array([[0, 1, 0], [0, 1, 1], [1, 2, 2], [3, 3, 0], [4, 4, 0]], dtype=np.int64)
    scores = None if probabilities is None else np.array(probabilities + [0.7], dtype=np.float32)
    ner.set_annotations(docs, Prediction(np.array([0, 4, 5]), mentions, scores))
    assert ents_of(docs[0]) == expected and ents_of(docs[1]) == [(0, 1, "LOC")]
    check_views(docs, ner.spans_key, list(ner.labels), ents)


def test_flat_view_settings_are_checked():
    nlp = spacy.blank("en")
    for factory in ("nested_ner", "hypergraph_ner"):
        with pytest.raises(ValueError, match=f"{factory} -> ents.*'outer'.*'outermost', 'most_probable'"):
            nlp.add_pipe(factory, config={"ents": "outer"})
        with pytest.raises(ValueError, match="needs the mentions' probabilities"):
            nlp.add_pipe(factory, config={"ents": "most_probable", "probabilities": False})


# ---------------------------------------------------------------------------
# displacy_options
# ---------------------------------------------------------------------------


def test_displacy_options_from_labels_and_pipelines():
    labels = [f"L{i}" for i in range(21)]
    colors = displacy_options(labels)["colors"]
    assert list(colors) == labels and len(set(colors.values())) == 20 and colors["L20"] == colors["L0"]
    assert "spans_key" not in displacy_options(["A"]) and displacy_options(["A"], spans_key="x")["spans_key"] == "x"
    doc = Doc(spacy.blank("en").vocab, words="a b".split(), ents=["B-A", "B-b"])
    html = displacy.render(doc, style="ent", options=displacy_options(["A", "b"]))
    assert all(colour in html for colour in displacy_options(["A", "b"])["colors"].values())
    for bad in ("ABC", ["A", ""], [1], []):
        with pytest.raises(ValueError):
            displacy_options(bad)
    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"spans_key": "one"})
    nlp.add_pipe("hypergraph_ner", config={"spans_key": "two"})
    with pytest.raises(ValueError, match="No labels"):
        displacy_options(nlp, spans_key="one")
    nlp.get_pipe("nested_ner").add_label("X")
    nlp.get_pipe("hypergraph_ner").add_label("Y")
    with pytest.raises(ValueError, match="nested_ner: 'one', hypergraph_ner: 'two'"):
        displacy_options(nlp)
    assert displacy_options(nlp, spans_key="two") == {"colors": {"X": PALETTE[0], "Y": PALETTE[1]}, "spans_key": "two"}


def relative_luminance(colour: str) -> float:
    """WCAG 2's relative luminance of a #rrggbb colour."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_every_colour_is_readable_in_both_styles():
    assert len(set(PALETTE)) == len(PALETTE) == 20
    for colour in PALETTE:
        luminance = relative_luminance(colour)
        assert (luminance + 0.05) / 0.05 >= 4.5, f"{colour}: black label text on it is hard to read (ent style)"
        assert 1.05 / (luminance + 0.05) >= 2.0, f"{colour}: its bar is hard to see on white (span style)"
