"""The nested_ner component: learning nested mentions, the three search spaces,
the suggester's mask, settings given at load, serialization, multiprocessing,
bad input."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from tiny_corpus import SMALL_TOK2VEC, check_unknown_gold_label, train_component

KEY = "nested_ner"
DGM = {"@misc": "spacy_depner.dgm_suggester.v1", "max_length": None}
# words, heads (absolute; a root is its own head), deps, mentions (start, end exclusive, label)
NESTED = [
    # "University of Paris" is not a DGM valid span of this tree: Paris hangs from hospital
    (
        "the University of Paris hospital".split(),
        [4, 4, 3, 4, 4],
        ["det", "compound", "case", "nmod", "ROOT"],
        [(1, 4, "ORG"), (3, 4, "LOC"), (0, 5, "FAC")],
    ),
    (
        "Mary saw the Bank of England".split(),
        [1, 1, 3, 1, 5, 3],
        ["nsubj", "ROOT", "det", "obj", "case", "nmod"],
        [(0, 1, "PER"), (3, 6, "ORG"), (5, 6, "LOC")],
    ),
    ("Paris is big".split(), [2, 2, 2], ["nsubj", "cop", "ROOT"], [(0, 1, "LOC")]),
]


def make_example(nlp, words, heads, deps, mentions, trees=True):
    tree = {"heads": heads, "deps": deps} if trees else {}
    reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
    reference.spans[KEY] = [
        reference.char_span(reference[s].idx, reference[e - 1].idx + len(reference[e - 1]), label=lab)
        for s, e, lab in mentions
    ]
    return Example(Doc(nlp.vocab, words=words, **tree), reference)


def train(steps=40, trees=True, **config):
    model = {"@architectures": "spacy_depner.MentionScorer.v1", "tok2vec": SMALL_TOK2VEC}
    return train_component(
        "nested_ner",
        {"model": model, **config},
        lambda nlp: [make_example(nlp, *row, trees=trees) for row in NESTED],
        steps,
    )


def mentions(docs):
    return [sorted((s.start, s.end, s.label_) for s in doc.spans[KEY]) for doc in docs]


def fresh_docs(nlp, trees=True):
    return [Doc(nlp.vocab, words=w, **({"heads": h, "deps": d} if trees else {})) for w, h, d, _ in NESTED]


@pytest.mark.slow
@pytest.mark.parametrize("space", ["cyk", "quadratic"])
def test_learns_nested_mentions(space):
    nlp, ner, examples, history = train(space=space)
    assert history[-1][KEY] < history[0][KEY] * 0.01
    assert nlp.evaluate(examples)[f"spans_{KEY}_f"] == 1.0
    assert mentions(nlp.pipe(fresh_docs(nlp))) == [sorted(m) for *_, m in NESTED]


def test_semi_markov_keeps_the_largest_flat_subset_and_counts_the_rest():
    nlp, ner, examples, history = train(space="semi_markov", steps=30)
    # sentence 1: at most one of the three nested mentions (ORG and LOC nest in FAC); sentence 2: PER and one of ORG, LOC
    assert history[0][f"{KEY}_gold_outside_space"] == 3
    for doc in nlp.pipe(fresh_docs(nlp)):
        spans = sorted((s.start, s.end) for s in doc.spans[KEY])
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_dependency_guided_mask_and_gold_outside():
    _, _, _, history = train(space="quadratic", suggester=DGM, add_gold_spans=False, steps=1)
    assert history[0][f"{KEY}_gold_outside_space"] == 1
    nlp, ner, examples, history = train(space="quadratic", suggester=DGM)
    assert history[0][f"{KEY}_gold_outside_space"] == 0  # added to the mask in training
    predicted = mentions(nlp.pipe(fresh_docs(nlp)))
    from spacy_depner.structures.trees.candidate_spans import valid_spans

    for (words, heads, _, _), found in zip(NESTED, predicted):
        h = np.array([-1 if head == i else head for i, head in enumerate(heads)])
        valid = {tuple(s) for s in valid_spans(h, np.array([0, len(words)])).tolist()}
        assert all((s, e - 1) in valid for s, e, _ in found)
    with pytest.raises(ValueError, match="parser before"):
        ner(Doc(nlp.vocab, words="Mary saw Paris".split()))


def test_scores_are_marginal_probabilities():
    nlp, ner, examples, _ = train(steps=5)
    for doc in nlp.pipe(fresh_docs(nlp)):
        scores = doc.spans[KEY].attrs["scores"]
        assert len(scores) == len(doc.spans[KEY])
        assert np.all((scores > 0) & (scores <= 1.0 + 1e-6))


def test_round_trips_and_multiprocessing(tmp_path):
    nlp, ner, _, _ = train(steps=10)
    expected = mentions(nlp.pipe(fresh_docs(nlp)))
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert mentions(loaded.pipe(fresh_docs(loaded))) == expected
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe(
        "nested_ner", config={"model": {"@architectures": "spacy_depner.MentionScorer.v1", "tok2vec": SMALL_TOK2VEC}}
    ).from_bytes(ner.to_bytes())
    assert mentions(from_bytes.pipe(fresh_docs(from_bytes))) == expected
    docs = fresh_docs(nlp) * 4
    assert mentions(nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=3)) == expected * 4
    (tmp_path / "model" / "nested_ner" / "model").write_bytes(b"broken")
    with pytest.raises(ValueError, match="nested_ner"):
        spacy.load(tmp_path / "model")


def test_empty_one_token_long_and_too_long_docs():
    nlp, ner, _, _ = train(steps=10)
    assert len(ner(Doc(nlp.vocab, words=[])).spans[KEY]) == 0
    # a one-token Doc has one span and two analyses, {} and {<t, 0, 1>}: the mention
    # of label t has probability exp(s_t) / (1 + sum_t' exp(s_t')), MAP the best of 0 and the s_t
    one = ner(Doc(nlp.vocab, words=["Paris"]))
    s = np.asarray(ner.model.predict(([one], np.array([[0, 0]]))), dtype=np.float64)[0]
    best = int(np.argmax(s))
    assert [(m.start, m.end, m.label_) for m in one.spans[KEY]] == ([(0, 1, ner.labels[best])] if s[best] > 0 else [])
    if s[best] > 0:
        assert one.spans[KEY].attrs["scores"][0] == pytest.approx(np.exp(s[best]) / (1 + np.exp(s).sum()), rel=1e-5)
    n = 5000
    words = ["Mary", "saw", "the", "Bank", "of", "England", "."] * (n // 7)
    sent_starts = [i % 7 == 0 for i in range(len(words))]
    doc = ner(Doc(nlp.vocab, words=words, sent_starts=sent_starts))
    assert all(s.start // 7 == (s.end - 1) // 7 for s in doc.spans[KEY])  # no mention across a sentence end
    with pytest.raises(ValueError, match="max_sentence_length"):
        ner(Doc(nlp.vocab, words=words))


def test_mention_scorer_has_no_transitions_and_get_loss_gradient_is_exact():
    nlp, ner, examples, _ = train(steps=3, suggester=DGM)
    assert not ner.model.has_param("transitions") and ner.model.get_dim("nO") == len(ner.labels)
    batch, _, _, _ = ner.training_batch(examples)
    scores = ner.model.predict(([eg.predicted for eg in examples], batch.spans))
    loss, d_scores = ner.get_loss(examples, scores)
    assert d_scores.shape == scores.shape and np.isfinite(loss)
    rng = np.random.default_rng(0)
    for _ in range(5):  # central finite differences of the loss
        i, j = int(rng.integers(scores.shape[0])), int(rng.integers(scores.shape[1]))
        shifted = []
        for eps in (1e-2, -1e-2):
            changed = np.array(scores, dtype=np.float64)
            changed[i, j] += eps
            shifted.append(ner.get_loss(examples, changed)[0])
        assert abs((shifted[0] - shifted[1]) / 2e-2 - d_scores[i, j]) < 1e-3


def test_any_spacy_suggester_bounds_the_mentions():
    ngrams = {"@misc": "spacy.ngram_suggester.v1", "sizes": [1, 2]}
    nlp, ner, examples, history = train(steps=20, suggester=ngrams)
    assert history[0][f"{KEY}_gold_outside_space"] == 0  # add_gold_spans: longer gold mentions join the mask
    found = mentions(nlp.pipe(fresh_docs(nlp, trees=False)))
    assert any(found) and all(e - s <= 2 for doc in found for s, e, _ in doc)


def test_settings_given_at_load_take_effect(tmp_path):
    nlp, ner, _, _ = train(space="cyk")
    nlp.to_disk(tmp_path / "model")
    nested = mentions(nlp.pipe(fresh_docs(nlp)))
    assert any(a[1] > b[0] and a[0] <= b[0] for doc in nested for a in doc for b in doc if a != b)  # learnt nesting
    assert (1, 4, "ORG") in nested[0]

    flat = spacy.load(
        tmp_path / "model", config={"components": {KEY: {"space": "semi_markov", "probabilities": False}}}
    )
    assert (
        flat.config["components"][KEY]["space"] == "semi_markov"
        and flat.get_pipe(KEY).settings["space"] == "semi_markov"
    )
    for doc in flat.pipe(fresh_docs(flat)):
        spans = sorted((s.start, s.end) for s in doc.spans[KEY])
        assert spans and all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # semi-Markov: no nesting
        assert "scores" not in doc.spans[KEY].attrs

    short = spacy.load(tmp_path / "model", config={"components": {KEY: {"max_sentence_length": 4}}})
    assert short.config["components"][KEY]["max_sentence_length"] == 4
    with pytest.raises(ValueError, match="max_sentence_length = 4"):
        short(Doc(short.vocab, words="Mary saw the Bank of England".split()))

    guided = spacy.load(tmp_path / "model", config={"components": {KEY: {"suggester": DGM, "spans_key": "guided"}}})
    assert guided.config["components"][KEY]["suggester"]["@misc"] == DGM["@misc"]
    doc = guided(fresh_docs(guided)[0])  # "University of Paris" is not a valid span of its tree
    assert KEY not in doc.spans and (1, 4) not in {(s.start, s.end) for s in doc.spans["guided"]}
    assert mentions(spacy.load(tmp_path / "model").pipe(fresh_docs(nlp))) == nested


def test_unknown_label_and_bad_settings():
    nlp = check_unknown_gold_label(
        "nested_ner", {}, lambda nlp: [make_example(nlp, *row) for row in NESTED], ["ORG", "LOC"], "FAC"
    )
    with pytest.raises(ValueError, match="space"):
        nlp.add_pipe("nested_ner", name="a", config={"space": "crf"})
    with pytest.raises(ValueError, match="nested_ner -> ents.*'outer'"):
        nlp.add_pipe("nested_ner", name="c", config={"ents": "outer"})
    with pytest.raises(Exception, match="dependency_guided"):
        nlp.add_pipe("nested_ner", name="b", config={"dependency_guided": True})  # replaced by the suggester


@pytest.mark.slow
def test_evaluate_nested_command_scores_a_learned_corpus(tmp_path):
    """The tiny corpus, learned to F1 = 1.0, written as GENIA JSON lines and
    scored by `evaluate-nested`: F1 1.0; with one gold mention removed, P < 1."""
    import json
    import subprocess
    import sys

    nlp, _, _, _ = train(space="quadratic")
    nlp.to_disk(tmp_path / "model")
    rows = [
        {"tokens": words, "entities": [{"start": s, "end": e, "type": label} for s, e, label in found]}
        for words, _, _, found in NESTED
    ]
    for name, data in (("all", rows), ("one_less", [dict(rows[0], entities=rows[0]["entities"][1:])] + rows[1:])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in data) + "\n")
        out = subprocess.run(
            [sys.executable, "-m", "spacy_depner", "evaluate-nested", str(tmp_path / "model"), str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
        scores = json.loads(out.stdout)
        if name == "all":
            assert scores["f"] == 1.0
        else:
            assert scores["r"] == 1.0 and scores["p"] == 6 / 7
