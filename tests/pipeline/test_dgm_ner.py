"""The dgm_ner component: learning, serialization, multiprocessing, bad input."""

import subprocess
import sys

import numpy as np
import pytest
import spacy
from tiny_corpus import SMALL_TOK2VEC, TINY, check_unknown_gold_label, input_doc, make_example, train_component

SUGGESTERS = {
    "dgm": {"@misc": "spacy_depner.dgm_suggester.v1"},
    "dgm_s": {"@misc": "spacy_depner.dgm_s_suggester.v1"},
    "semi_markov": {"@misc": "spacy_depner.all_spans_suggester.v1"},
}


def train(structure="dgm", steps=40, model=None, max_length=None, **config):
    cfg = {"suggester": {**SUGGESTERS[structure], "max_length": max_length}, **config}
    if model:
        cfg["model"] = model
    nlp, ner, examples, history = train_component(
        "dgm_ner", cfg, lambda nlp: [make_example(nlp, *row) for row in TINY], steps
    )
    return nlp, ner, examples, [step["dgm_ner"] for step in history]


def predictions(nlp, docs):
    return [([(e.start, e.end, e.label_) for e in d.ents], d.spans["dgm_ner"].attrs["scores"].tolist()) for d in docs]


def fresh_docs(nlp):
    return [input_doc(nlp, words, heads, deps) for words, heads, deps, _ in TINY]


@pytest.mark.slow
@pytest.mark.parametrize("structure", ["dgm", "dgm_s", "semi_markov"])
def test_learns_tiny_corpus(structure):
    nlp, ner, examples, history = train(structure, max_length=8 if structure == "semi_markov" else None)
    assert history[-1] < history[0] * 0.01
    assert nlp.evaluate(examples)["ents_f"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("architecture", ["spacy_depner.SpanScorer.v1", "spacy_depner.PooledSpanScorer.v1"])
@pytest.mark.parametrize("dependency_features", [False, True])
def test_learns_with_either_scorer_and_dependency_features(architecture, dependency_features):
    model = {"@architectures": architecture, "dependency_features": dependency_features, "tok2vec": SMALL_TOK2VEC}
    nlp, ner, examples, history = train("dgm", model=model)
    assert history[-1] < history[0] * 0.01
    assert nlp.evaluate(examples)["ents_f"] == 1.0
    empty = ner(input_doc(nlp, []))
    assert list(empty.ents) == []


def test_entity_scores_are_marginal_probabilities():
    nlp, ner, examples, _ = train("dgm", steps=5)
    for doc in nlp.pipe(fresh_docs(nlp)):
        scores = doc.spans["dgm_ner"].attrs["scores"]
        assert len(scores) == len(doc.ents) == len(doc.spans["dgm_ner"])
        assert np.all((scores > 0) & (scores <= 1.0 + 1e-6))


@pytest.mark.slow
def test_added_by_entry_point_without_import():
    code = "import spacy; nlp = spacy.blank('en'); print(type(nlp.add_pipe('dgm_ner')).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "DependencyGuidedNER"


def test_disk_and_bytes_round_trips(tmp_path):
    nlp, ner, _, _ = train("dgm", steps=10)
    expected = predictions(nlp, nlp.pipe(fresh_docs(nlp)))
    nlp.to_disk(tmp_path / "model")
    from_disk = spacy.load(tmp_path / "model")
    assert predictions(from_disk, from_disk.pipe(fresh_docs(from_disk))) == expected
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("dgm_ner").from_bytes(ner.to_bytes())
    assert from_bytes.get_pipe("dgm_ner").labels == ner.labels
    assert predictions(from_bytes, from_bytes.pipe(fresh_docs(from_bytes))) == expected


def test_corrupt_model_directory(tmp_path):
    nlp, _, _, _ = train("dgm", steps=1)
    nlp.to_disk(tmp_path / "model")
    (tmp_path / "model" / "dgm_ner" / "model").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="dgm_ner"):
        spacy.load(tmp_path / "model")


def test_multiprocessing_equals_single_process():
    nlp, _, _, _ = train("dgm", steps=10)
    docs = fresh_docs(nlp) * 5
    single = predictions(nlp, nlp.pipe([d.copy() for d in docs]))
    multi = predictions(nlp, nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=4))
    assert multi == single


def test_empty_one_token_and_long_docs():
    nlp, ner, _, _ = train("dgm", steps=10)
    assert list(ner(input_doc(nlp, [])).ents) == []
    # a one-token Doc: its lattice is the token alone; "Paris" is LOC in the corpus
    one = ner(input_doc(nlp, ["Paris"], [0], ["ROOT"]))
    assert [(e.start, e.end, e.label_) for e in one.ents] == [(0, 1, "LOC")]
    n = 5000
    rng = np.random.default_rng(0)
    words = [str(w) for w in rng.choice(["Mary", "lives", "in", "Paris", "John", "Smith"], n)]
    heads = [i if i % 25 == 0 else int(rng.integers(i - i % 25, i)) for i in range(n)]  # 200 sentences
    doc = ner(input_doc(nlp, words, heads, ["dep"] * n))
    sentence_of = {t.i: s for s, sent in enumerate(doc.sents) for t in sent}
    assert len(doc.ents) > 0
    assert all(sentence_of[e.start] == sentence_of[e.end - 1] for e in doc.ents)


def test_non_projective_tree():
    nlp, ner, _, _ = train("dgm", steps=10)
    # arcs 0<-2 and 1<-3 cross; valid spans (increasing tree path): the single
    # words, 0..2 (0-2), 1..3 (1-3), 2..3 (2-3) and 0..3 (0-2-3), not 0..1 nor 1..2
    doc = input_doc(nlp, "Mary John lives Paris".split(), [2, 3, 2, 2], ["nsubj", "x", "ROOT", "obl"])
    lattice = {tuple(s) for s in ner.suggester([doc]).dataXd.tolist()}
    assert lattice == {(0, 1), (1, 2), (2, 3), (3, 4), (0, 3), (1, 4), (2, 4), (0, 4)}
    doc = ner(doc)
    assert all((e.start, e.end) in lattice for e in doc.ents)


@pytest.mark.parametrize("structure", ["dgm", "dgm_s"])
def test_doc_without_parse_is_a_clear_error(structure):
    nlp, ner, _, _ = train(structure, steps=1)
    with pytest.raises(ValueError, match="parser before"):
        ner(input_doc(nlp, "Mary lives in Paris".split()))


def test_semi_markov_needs_no_parse():
    nlp, ner, _, _ = train("semi_markov", steps=30, max_length=4)
    doc = ner(input_doc(nlp, "Mary lives in Paris".split()))
    assert [(e.text, e.label_) for e in doc.ents] == [("Mary", "PER"), ("Paris", "LOC")]


def test_max_length_bounds_entities():
    nlp, ner, _, _ = train("semi_markov", steps=10, max_length=2)
    for doc in nlp.pipe(fresh_docs(nlp)):
        assert all(len(e) <= 2 for e in doc.ents)


def test_unknown_gold_label_is_a_clear_error():
    check_unknown_gold_label(
        "dgm_ner", {}, lambda nlp: [make_example(nlp, *row) for row in TINY], ["PER", "LOC"], "MISC"
    )


def test_gold_outside_lattice_is_counted_and_added():
    words = "New York City rocks".split()
    # "New York City" is not a valid span in this tree: its path New-rocks-City-York... not increasing
    heads, deps = [3, 2, 3, 3], ["nsubj", "compound", "nsubj", "ROOT"]
    ents = ["B-LOC", "I-LOC", "I-LOC", "O"]
    for add_gold in (True, False):
        nlp = spacy.blank("en")
        nlp.add_pipe("dgm_ner", config={"add_gold_spans": add_gold})
        examples = [make_example(nlp, words, heads, deps, ents)]
        optimizer = nlp.initialize(lambda: examples)
        losses = nlp.update(examples, sgd=optimizer, losses={})
        assert losses["dgm_ner_gold_outside_lattice"] == 1
        assert np.isfinite(losses["dgm_ner"]) and losses["dgm_ner"] > 0
        assert nlp.evaluate(examples)["ents_lattice_coverage"] == 0.0


def test_bad_settings():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="max_length"):
        nlp.add_pipe("dgm_ner", config={"suggester": {"@misc": "spacy_depner.dgm_suggester.v1", "max_length": 0}})
    with pytest.raises(Exception, match="structure"):
        nlp.add_pipe("dgm_ner", name="other", config={"structure": "dgm"})  # replaced by the suggester
    for value in (0, -1):
        with pytest.raises(ValueError, match="max_sentence_length of 'third' must be a positive integer or null"):
            nlp.add_pipe("dgm_ner", name="third", config={"max_sentence_length": value})
    assert (
        nlp.add_pipe("dgm_ner", name="fourth", config={"max_sentence_length": None}).settings["max_sentence_length"]
        is None
    )


@pytest.mark.slow
def test_any_spacy_suggester_and_single_tokens_always_in_the_lattice():
    ngrams = {"@misc": "spacy.ngram_suggester.v1", "sizes": [2, 3, 4]}
    nlp, ner, examples, history = train("dgm", model=None, steps=40, suggester=ngrams)
    assert history[-1] < history[0] * 0.05
    assert nlp.evaluate(examples)["ents_f"] == 1.0  # PER "Mary" and LOC "Paris" are single tokens
    doc = ner(input_doc(nlp, "Mary lives in Paris".split()))  # the n-gram suggester needs no parse
    assert [(e.text, e.label_) for e in doc.ents] == [("Mary", "PER"), ("Paris", "LOC")]


def test_get_loss_is_spacys_shape_and_its_gradient_is_exact():
    nlp, ner, examples, _ = train("dgm", steps=3)
    batch, _, _, _ = ner.training_batch(examples)
    scores = ner.model.predict(([eg.predicted for eg in examples], batch.spans))
    loss, (d_scores, d_transitions) = ner.get_loss(examples, scores)
    assert d_scores.shape == scores[0].shape and d_transitions.shape == scores[1].shape
    rng = np.random.default_rng(0)
    for _ in range(5):  # central finite differences of the loss
        i, j = int(rng.integers(scores[0].shape[0])), int(rng.integers(scores[0].shape[1]))
        shifted = []
        for eps in (1e-2, -1e-2):
            span_scores = np.array(scores[0], dtype=np.float64)
            span_scores[i, j] += eps
            shifted.append(ner.get_loss(examples, (span_scores, scores[1]))[0])
        assert abs((shifted[0] - shifted[1]) / 2e-2 - d_scores[i, j]) < 1e-3


def test_settings_given_at_load_take_effect(tmp_path):
    nlp, ner, _, _ = train("dgm", steps=20)
    nlp.to_disk(tmp_path / "model")
    docs = fresh_docs(nlp)
    trained = [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe([d.copy() for d in docs])]
    assert any(e[1] - e[0] > 1 for ents in trained for e in ents)
    config = {
        "probabilities": False,
        "spans_key": "flat",
        "suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 1},
    }
    loaded = spacy.load(tmp_path / "model", config={"components": {"dgm_ner": config}})
    assert loaded.config["components"]["dgm_ner"]["spans_key"] == "flat"
    assert loaded.config["components"]["dgm_ner"]["probabilities"] is False
    assert loaded.config["components"]["dgm_ner"]["suggester"]["max_length"] == 1
    for doc in loaded.pipe([d.copy() for d in docs]):
        assert "dgm_ner" not in doc.spans and "scores" not in doc.spans["flat"].attrs
        assert [(e.start, e.end) for e in doc.spans["flat"]] == [(e.start, e.end) for e in doc.ents]
        assert all(len(e) == 1 for e in doc.ents)
    same = spacy.load(tmp_path / "model")
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in same.pipe([d.copy() for d in docs])] == trained
    (tmp_path / "model" / "dgm_ner" / "cfg").unlink()
    with pytest.raises(ValueError, match="missing or corrupt"):
        spacy.load(tmp_path / "model")


def test_chains_cut_at_every_sentence_start_no_span_crosses():
    """The lattice's chains (``chain_offsets``, ``layout``) against their
    definition, on random sentences and spans."""
    import numpy as np

    from spacy_depner.doc_arrays.spans import chain_offsets
    from spacy_depner.structures.lattice import layout

    rng = np.random.default_rng(0)
    for _ in range(300):
        lengths = rng.integers(0, 6, size=rng.integers(1, 4))
        doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        n = int(doc_offsets[-1])
        cuts = sorted({int(x) for x in rng.integers(0, n + 1, size=rng.integers(0, 4))} | set(doc_offsets.tolist()))
        sentence_offsets = np.array(cuts, dtype=np.int64)
        spans = {(t, t) for t in range(n)}
        for _ in range(rng.integers(0, 4)):
            d = int(rng.integers(0, len(lengths)))
            if lengths[d]:
                first, last = sorted(rng.integers(doc_offsets[d], doc_offsets[d + 1], size=2).tolist())
                spans.add((first, last))
        spans = np.array(sorted(spans, key=lambda s: (s[1], s[0])), dtype=np.int64).reshape(-1, 2)
        lattice = layout(spans, chain_offsets(spans, doc_offsets, sentence_offsets))
        span_offsets, offsets = lattice.span_offsets, lattice.offsets
        expected = sorted(
            {b for b in cuts if not any(f < b <= l for f, l in spans.tolist())} | set(doc_offsets.tolist())
        )
        assert offsets.tolist() == expected
        for c in range(len(expected) - 1):
            inside = spans[span_offsets[c] : span_offsets[c + 1]]
            assert ((inside >= expected[c]) & (inside < expected[c + 1])).all()
        assert span_offsets[-1] == spans.shape[0]


def test_a_doc_of_sentences_is_decoded_sentence_by_sentence():
    """predict on a Doc of several sentences gives the marginals of each
    sentence's lattice decoded alone (no transition across a sentence
    start), not those of one chain over the Doc."""
    from spacy.tokens import Doc

    from spacy_depner.structures.lattice import LATTICE, layout

    nlp, ner, _, _ = train(steps=30)
    offsets = np.cumsum([0] + [len(words) for words, _, _, _ in TINY])
    doc = Doc(
        nlp.vocab,
        words=[w for words, _, _, _ in TINY for w in words],
        heads=[h + o for (_, heads, _, _), o in zip(TINY, offsets) for h in heads],
        deps=[d for _, _, deps, _ in TINY for d in deps],
        sent_starts=[i == 0 for words, _, _, _ in TINY for i in range(len(words))],
    )
    batch = ner.read([doc])
    scores, transitions = (ner.model.ops.to_numpy(x) for x in ner.model.predict(([doc], batch.spans)))
    marginals = ner.structure.marginals((scores, transitions), ner.layout(batch)).scores[0]
    per_sentence = LATTICE.marginals((scores, transitions), layout(batch.spans, offsets)).scores[0]
    one_chain = LATTICE.marginals((scores, transitions), layout(batch.spans, batch.doc_offsets)).scores[0]
    assert np.allclose(marginals, per_sentence, atol=1e-9)
    assert not np.allclose(marginals, one_chain, atol=1e-6)
