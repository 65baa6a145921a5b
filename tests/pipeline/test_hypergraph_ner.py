"""The hypergraph_ner component: learning overlapping and nested mentions,
the mention penalty, settings given at load, serialization, multiprocessing,
bad input."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from tiny_corpus import SMALL_TOK2VEC, check_unknown_gold_label, train_component

KEY = "hypergraph_ner"
MODEL = {"@architectures": "spacy_depner.TokenScorer.v1", "hidden_width": 32, "tok2vec": SMALL_TOK2VEC}
# words, mentions (start, end exclusive, label): nested, and overlapping of different types
CORPUS = [
    ("the University of Paris hospital".split(), [(1, 4, "ORG"), (3, 4, "LOC"), (0, 5, "FAC")]),
    ("Mary saw the Bank of England".split(), [(0, 1, "PER"), (3, 6, "ORG"), (5, 6, "LOC")]),
    ("New York Times Square".split(), [(0, 2, "LOC"), (0, 3, "ORG"), (1, 4, "FAC")]),
    ("Paris is big".split(), [(0, 1, "LOC")]),
]


def make_example(nlp, words, found):
    reference = Doc(nlp.vocab, words=words)
    reference.spans[KEY] = [Span(reference, s, e, label=label) for s, e, label in found]
    return Example(Doc(nlp.vocab, words=words), reference)


def train(steps=60, **config):
    return train_component(
        "hypergraph_ner", {"model": MODEL, **config}, lambda nlp: [make_example(nlp, *row) for row in CORPUS], steps
    )


def mentions(docs):
    return [sorted((s.start, s.end, s.label_) for s in doc.spans[KEY]) for doc in docs]


def fresh_docs(nlp):
    return [Doc(nlp.vocab, words=w) for w, _ in CORPUS]


def n_gold():
    return sum(len(m) for _, m in CORPUS)


@pytest.fixture(scope="module")
def trained():
    return train()


@pytest.mark.slow
def test_learns_nested_and_overlapping_mentions(trained):
    nlp, ner, examples, history = trained
    losses = [step[KEY] for step in history]
    assert losses[-1] < losses[0] * 0.05
    assert sum(losses[-5:]) < sum(losses[:5])  # falls over the run, not by one lucky step
    assert history[0][f"{KEY}_gold_ambiguous"] == 0
    assert mentions(nlp.pipe(fresh_docs(nlp))) == [sorted(m) for _, m in CORPUS]
    assert nlp.evaluate(examples)[f"spans_{KEY}_f"] == 1.0


def test_type_two_gold_pairs_are_counted():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("hypergraph_ner", config={"model": MODEL})
    # A B C and B C D of one type: the same sub-hypergraph as A B C D with B C
    examples = [make_example(nlp, "a b c d".split(), [(0, 3, "X"), (1, 4, "X")])]
    nlp.initialize(lambda: examples)
    assert ner.update(examples)[f"{KEY}_gold_ambiguous"] == 2


@pytest.mark.slow
def test_scores_are_probabilities_and_the_penalty_moves_recall(trained):
    nlp, ner, examples, _ = trained
    for doc in nlp.pipe(fresh_docs(nlp)):
        scores = doc.spans[KEY].attrs["scores"]
        assert len(scores) == len(doc.spans[KEY]) and np.all((scores > 0) & (scores <= 1.0 + 1e-6))
    docs = fresh_docs(nlp)
    counts = []
    for penalty in (-50.0, 0.0, 50.0):
        ner.mention_penalty = penalty
        counts.append(sum(len(m) for m in mentions(nlp.pipe([d.copy() for d in docs]))))
    ner.mention_penalty = 0.0
    assert counts[0] == 0 and counts[0] <= counts[1] <= counts[2]
    assert counts[2] > n_gold()
    with pytest.raises(ValueError, match="mention_penalty"):
        ner.mention_penalty = float("nan")


@pytest.mark.slow
def test_settings_given_at_load_take_effect(trained, tmp_path):
    nlp, ner, _, _ = trained
    nlp.to_disk(tmp_path / "model")
    found = {}
    for penalty in (-50.0, 2.0, 50.0):
        loaded = spacy.load(tmp_path / "model", config={"components": {KEY: {"mention_penalty": penalty}}})
        assert loaded.config["components"][KEY]["mention_penalty"] == penalty
        assert loaded.get_pipe(KEY).mention_penalty == penalty
        found[penalty] = sum(len(m) for m in mentions(loaded.pipe(fresh_docs(loaded))))
    # a higher penalty predicts more mentions: none at -50, more than the gold ones at +50
    assert found[-50.0] == 0 and found[-50.0] <= found[2.0] <= found[50.0] and found[50.0] > n_gold()
    default = spacy.load(tmp_path / "model")
    assert default.get_pipe(KEY).mention_penalty == 0.0
    expected = mentions(default.pipe(fresh_docs(default)))
    quiet = spacy.load(tmp_path / "model", config={"components": {KEY: {"probabilities": False}}})
    docs = list(quiet.pipe(fresh_docs(quiet)))
    assert mentions(docs) == expected and sum(map(len, expected)) > 0
    assert all("scores" not in doc.spans[KEY].attrs for doc in docs)
    assert all("scores" in doc.spans[KEY].attrs for doc in default.pipe(fresh_docs(default)))
    # heads changes the weights' shape: it cannot be changed at load
    with pytest.raises(ValueError, match="trained with heads = False"):
        spacy.load(tmp_path / "model", config={"components": {KEY: {"heads": True}}})


@pytest.mark.slow
def test_flat_view_resolves_crossing_mentions(trained, tmp_path):
    """ents at load: doc.ents is the projection of the mentions computed from
    its definition; crossing ORG (0, 3) and FAC (1, 4): the earlier wins."""
    from test_flat_view import check_views, ents_of

    nlp, ner, examples, _ = trained
    nlp.to_disk(tmp_path / "model")
    assert not any(doc.ents for doc in nlp.pipe(fresh_docs(nlp)))  # ents = null: doc.ents untouched
    for ents in ("outermost", "most_probable"):
        loaded = spacy.load(tmp_path / "model", config={"components": {KEY: {"ents": ents}}})
        docs = list(loaded.pipe(fresh_docs(loaded)))
        assert mentions(docs) == [sorted(m) for _, m in CORPUS]
        check_views(docs, KEY, list(ner.labels), ents)
        if ents == "outermost":
            assert ents_of(docs[2]) == [(0, 3, "ORG")]
            assert "ents_f" in loaded.evaluate(examples) and "ents_f" not in nlp.evaluate(examples)


@pytest.mark.slow
def test_round_trips_and_multiprocessing(trained, tmp_path):
    nlp, ner, _, _ = trained
    expected = mentions(nlp.pipe(fresh_docs(nlp)))
    assert sum(map(len, expected)) > 0
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert mentions(loaded.pipe(fresh_docs(loaded))) == expected
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("hypergraph_ner", config={"model": MODEL}).from_bytes(ner.to_bytes())
    assert mentions(from_bytes.pipe(fresh_docs(from_bytes))) == expected
    docs = fresh_docs(nlp) * 3
    assert mentions(nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=3)) == expected * 3
    (tmp_path / "model" / KEY / "model").write_bytes(b"broken")
    with pytest.raises(ValueError, match=KEY):
        spacy.load(tmp_path / "model")


def test_get_loss_has_spacy_shape_and_its_gradient_is_exact():
    """get_loss(examples, scores): scores is the model's output; d_scores is the
    finite-difference gradient of the loss."""
    _, ner, examples, _ = train_component(
        KEY, {"model": MODEL}, lambda nlp: [make_example(nlp, *row) for row in CORPUS[:2]], 0
    )
    scores = ner.model.predict([eg.predicted for eg in examples])
    loss, d_scores = ner.get_loss(examples, scores)
    assert d_scores.shape == scores.shape and loss > 0
    rng = np.random.default_rng(0)
    base = np.asarray(scores, dtype=np.float64)
    for row, column in zip(rng.integers(0, scores.shape[0], 6), rng.integers(0, scores.shape[1], 6)):
        shifted = []
        for step in (1e-2, -1e-2):
            moved = base.copy()
            moved[row, column] += step
            shifted.append(ner.get_loss(examples, moved)[0])
        assert abs((shifted[0] - shifted[1]) / 2e-2 - float(d_scores[row, column])) < 1e-3


@pytest.mark.slow
def test_empty_one_token_and_long_docs(trained):
    nlp, ner, _, _ = trained
    assert len(ner(Doc(nlp.vocab, words=[])).spans[KEY]) == 0
    assert len(ner(Doc(nlp.vocab, words=["Paris"])).spans[KEY]) <= 1
    words = "Mary saw the Bank of England .".split() * 715
    doc = ner(Doc(nlp.vocab, words=words, sent_starts=[i % 7 == 0 for i in range(len(words))]))
    assert len(doc.spans[KEY]) > 0
    assert all(s.start // 7 == (s.end - 1) // 7 for s in doc.spans[KEY])  # no mention across a sentence end
    # one 5,005-token sentence: away from its ends every window of 7 tokens looks
    # the same, so the mentions repeat with the text, period by period
    doc = ner(Doc(nlp.vocab, words=words))
    periods = [
        sorted((s.start - 7 * k, s.end - s.start, s.label_) for s in doc.spans[KEY] if 7 * k <= s.start < 7 * k + 7)
        for k in range(10, 705)
    ]
    assert periods[0] and all(period == periods[0] for period in periods)


def test_unknown_label_and_missing_parse_with_dependency_features():
    check_unknown_gold_label(
        KEY, {"model": MODEL}, lambda nlp: [make_example(nlp, *row) for row in CORPUS], ["ORG", "LOC"], "FAC"
    )
    dep = spacy.blank("en").add_pipe("hypergraph_ner", config={"model": {**MODEL, "dependency_features": True}})
    parsed = Doc(dep.vocab, words=["Paris", "is", "big"], heads=[2, 2, 2], deps=["nsubj", "cop", "ROOT"])
    dep.initialize(lambda: [Example(parsed, parsed)], labels=["LOC"])
    mentions = [(m.start, m.end) for m in dep(parsed.copy()).spans[KEY]]
    assert len(mentions) == len(set(mentions)) <= 6  # one label: at most one mention per span of 3 words
    with pytest.raises(ValueError, match="parse"):
        dep(Doc(dep.vocab, words=["Paris"]))


HEADS = [  # words, mentions (start, end exclusive, label, head start, head end exclusive)
    ("the University of Paris hospital".split(), [(1, 4, "ORG", 1, 2), (3, 4, "LOC", 3, 4), (0, 5, "FAC", 4, 5)]),
    ("Mary saw the Bank of England".split(), [(0, 1, "PER", 0, 1), (2, 6, "ORG", 3, 4), (5, 6, "LOC", 5, 6)]),
    ("Paris is big".split(), [(0, 1, "LOC", 0, 1)]),
]


def heads_example(nlp, words, found):
    from spacy_depner.readers.genia import mentions_to_spans

    return Example(Doc(nlp.vocab, words=words), mentions_to_spans(Doc(nlp.vocab, words=words), found, KEY))


@pytest.mark.slow
def test_learns_mentions_with_their_heads_and_scores_them():
    nlp, ner, examples, history = train_component(
        KEY, {"model": MODEL, "heads": True}, lambda nlp: [heads_example(nlp, *row) for row in HEADS], 61
    )
    assert ner.model.get_dim("nO") == 4 * 17
    losses = [step[KEY] for step in history]
    assert losses[-1] < 0.05 * losses[0] and sum(losses[-5:]) < sum(losses[:5])
    for doc, (_, found) in zip(nlp.pipe([Doc(nlp.vocab, words=w) for w, _ in HEADS]), HEADS):
        got = sorted(
            (m.start, m.end, m.label_, h.start, h.end) for m, h in zip(doc.spans[KEY], doc.spans[KEY + "_heads"])
        )
        assert got == sorted(found)
    scores = nlp.evaluate(examples)
    assert scores[f"spans_{KEY}_f"] == 1.0 and scores[f"spans_{KEY}_head_f"] == 1.0
    # a wrong head costs the head score only
    wrong = [heads_example(nlp, HEADS[1][0], [(0, 1, "PER", 0, 1), (2, 6, "ORG", 5, 6), (5, 6, "LOC", 5, 6)])]
    scores = nlp.evaluate(wrong)
    assert scores[f"spans_{KEY}_f"] == 1.0 and scores[f"spans_{KEY}_head_p"] == 2 / 3
    # a reference without mentions needs no heads; references with mentions but no heads are an error
    assert KEY in ner.update([heads_example(nlp, ["Hello", "there"], [])], sgd=ner.create_optimizer())
    with pytest.raises(ValueError, match="_heads"):
        ner.update([make_example(nlp, *CORPUS[3])])
