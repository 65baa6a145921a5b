"""The hypergraph_ner component: learning overlapping and nested mentions,
the mention penalty and its tuning, serialization, multiprocessing, bad input."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import fix_random_seed

from tiny_corpus import SMALL_TOK2VEC, train_component

KEY = "hypergraph_ner"
MODEL = {"@architectures": "spacy_depner.TagScorer.v1", "hidden_width": 32, "tok2vec": SMALL_TOK2VEC}
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
    return train_component("hypergraph_ner", {"model": MODEL, **config},
                           lambda nlp: [make_example(nlp, *row) for row in CORPUS], steps)


def mentions(docs):
    return [sorted((s.start, s.end, s.label_) for s in doc.spans[KEY]) for doc in docs]


def fresh_docs(nlp):
    return [Doc(nlp.vocab, words=w) for w, _ in CORPUS]


@pytest.fixture(scope="module")
def trained():
    return train()


def test_learns_nested_and_overlapping_mentions(trained):
    nlp, ner, examples, history = trained
    assert history[-1][KEY] < history[0][KEY] * 0.05
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


def test_scores_are_probabilities_and_the_penalty_moves_recall(trained):
    nlp, ner, examples, _ = trained
    for doc in nlp.pipe(fresh_docs(nlp)):
        scores = doc.spans[KEY].attrs["scores"]
        assert len(scores) == len(doc.spans[KEY]) and np.all((scores > 0) & (scores <= 1.0 + 1e-6))
    docs = fresh_docs(nlp)
    counts = []
    for penalty in (-50.0, 0.0, 50.0):
        ner.cfg["mention_penalty"] = penalty
        counts.append(sum(len(m) for m in mentions(nlp.pipe([d.copy() for d in docs]))))
    ner.cfg["mention_penalty"] = 0.0
    assert counts[0] == 0 and counts[0] <= counts[1] <= counts[2]
    assert counts[2] > sum(len(m) for _, m in CORPUS)


def test_tune_penalty_finds_the_best_f1_on_the_grid(trained):
    nlp, ner, examples, _ = trained
    ner.cfg["mention_penalty"] = -40.0  # predicts nothing
    result = ner.tune_penalty(examples, step=0.5, low=-2.0, high=2.0)
    assert result["before_f"] == 0.0 and result["tuned_f"] == 1.0
    assert ner.cfg["mention_penalty"] == result["tuned_penalty"] and -2.0 <= result["tuned_penalty"] <= 2.0
    # the grid search: no value of the grid does better
    for penalty in np.arange(-2.0, 2.01, 0.5):
        ner.cfg["mention_penalty"] = float(penalty)
        assert nlp.evaluate(examples)[f"spans_{KEY}_f"] <= result["tuned_f"] + 1e-12
    ner.cfg["mention_penalty"] = result["tuned_penalty"]
    with pytest.raises(ValueError, match="step"):
        ner.tune_penalty(examples, step=0.0)


def test_round_trips_and_multiprocessing(trained, tmp_path):
    nlp, ner, _, _ = trained
    ner.cfg["mention_penalty"] = 0.25
    expected = mentions(nlp.pipe(fresh_docs(nlp)))
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe(KEY).cfg["mention_penalty"] == 0.25
    assert mentions(loaded.pipe(fresh_docs(loaded))) == expected
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("hypergraph_ner", config={"model": MODEL}).from_bytes(ner.to_bytes())
    assert mentions(from_bytes.pipe(fresh_docs(from_bytes))) == expected
    docs = fresh_docs(nlp) * 3
    assert mentions(nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=3)) == expected * 3
    (tmp_path / "model" / KEY / "model").write_bytes(b"broken")
    with pytest.raises(ValueError, match=KEY):
        spacy.load(tmp_path / "model")
    ner.cfg["mention_penalty"] = 0.0


def test_empty_one_token_and_long_docs(trained):
    nlp, ner, _, _ = trained
    assert len(ner(Doc(nlp.vocab, words=[])).spans[KEY]) == 0
    assert len(ner(Doc(nlp.vocab, words=["Paris"])).spans[KEY]) <= 1
    words = "Mary saw the Bank of England .".split() * 715
    doc = ner(Doc(nlp.vocab, words=words, sent_starts=[i % 7 == 0 for i in range(len(words))]))
    assert all(s.start // 7 == (s.end - 1) // 7 for s in doc.spans[KEY])  # no mention across a sentence end
    assert ner(Doc(nlp.vocab, words=words)) is not None  # linear time: one 5,005-token sentence is fine


def test_unknown_label_and_missing_parse_with_dependency_features():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("hypergraph_ner", config={"model": MODEL})
    examples = [make_example(nlp, *row) for row in CORPUS]
    ner.initialize(lambda: examples, nlp=nlp, labels=["ORG", "LOC"])
    with pytest.raises(ValueError, match="Unknown label 'FAC'"):
        ner.update(examples)
    dep = spacy.blank("en").add_pipe("hypergraph_ner", config={"model": {**MODEL, "dependency_features": True}})
    parsed = Doc(dep.vocab, words=["Paris", "is", "big"], heads=[2, 2, 2], deps=["nsubj", "cop", "ROOT"])
    dep.initialize(lambda: [Example(parsed, parsed)], labels=["LOC"])
    assert len(dep(parsed.copy()).spans[KEY]) <= 3
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


def test_learns_mentions_with_their_heads_and_scores_them():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("hypergraph_ner", config={"model": MODEL, "heads": True})
    examples = [heads_example(nlp, *row) for row in HEADS]
    optimizer = nlp.initialize(lambda: examples)
    assert ner.model.get_dim("nO") == 4 * 17
    first = nlp.update(examples, sgd=optimizer, losses={})[KEY]
    for _ in range(60):
        last = nlp.update(examples, sgd=optimizer, losses={})[KEY]
    assert last < 0.05 * first
    for doc, (_, found) in zip(nlp.pipe([Doc(nlp.vocab, words=w) for w, _ in HEADS]), HEADS):
        got = sorted((m.start, m.end, m.label_, h.start, h.end) for m, h in zip(doc.spans[KEY], doc.spans[KEY + "_heads"]))
        assert got == sorted(found)
    scores = nlp.evaluate(examples)
    assert scores[f"spans_{KEY}_f"] == 1.0 and scores[f"spans_{KEY}_head_f"] == 1.0
    # a wrong head costs the head score only
    wrong = [heads_example(nlp, HEADS[1][0], [(0, 1, "PER", 0, 1), (2, 6, "ORG", 5, 6), (5, 6, "LOC", 5, 6)])]
    scores = nlp.evaluate(wrong)
    assert scores[f"spans_{KEY}_f"] == 1.0 and scores[f"spans_{KEY}_head_p"] == 2 / 3
    # a reference without mentions needs no heads; references with mentions but no heads are an error
    assert KEY in ner.update([heads_example(nlp, ["Hello", "there"], [])], sgd=optimizer)
    with pytest.raises(ValueError, match="_heads"):
        ner.update([make_example(nlp, *CORPUS[3])])
