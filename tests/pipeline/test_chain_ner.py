"""The chain_ner component: CRF and perceptron learning, tag constraints,
gazetteer and dependency features, settings given at load, serialization,
multiprocessing, bad input."""

import numpy as np
import pytest
import spacy
import srsly
from tiny_corpus import SMALL_TOK2VEC, TINY, check_unknown_gold_label, input_doc, make_example, train_component

from spacy_depner.structures.chain import CHAIN


def train(steps=40, model=None, trees=True, **config):
    if model:
        config["model"] = model
    nlp, ner, examples, history = train_component(
        "chain_ner", config, lambda nlp: [make_example(nlp, *row, trees=trees) for row in TINY], steps
    )
    return nlp, ner, examples, [step["chain_ner"] for step in history]


def predictions(docs):
    return [[(e.start, e.end, e.label_) for e in d.ents] for d in docs]


def fresh_docs(nlp):
    return [input_doc(nlp, words, heads, deps) for words, heads, deps, _ in TINY]


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["BIO", "BILOU"])
def test_crf_learns_tiny_corpus(scheme):
    nlp, ner, examples, history = train(scheme=scheme)
    assert history[-1] < history[0] * 0.01 and sum(history[-5:]) < sum(history[:5])
    assert nlp.evaluate(examples)["ents_f"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["BIO", "BILOU"])
def test_perceptron_learns_tiny_corpus(scheme):
    nlp, ner, examples, history = train(steps=40, scheme=scheme, loss="perceptron")
    assert history[0] > 0
    assert history[-1] == 0.0  # the Viterbi tags are the gold tags
    assert nlp.evaluate(examples)["ents_f"] == 1.0


@pytest.mark.slow
def test_learns_with_dependency_features():
    model = {"@architectures": "spacy_depner.TagScorer.v1", "dependency_features": True, "tok2vec": SMALL_TOK2VEC}
    nlp, ner, examples, history = train(model=model)
    assert history[-1] < history[0] * 0.01
    assert nlp.evaluate(examples)["ents_f"] == 1.0
    with pytest.raises(ValueError, match="parser before"):
        ner(input_doc(nlp, "Mary lives in Paris".split()))


@pytest.mark.slow
def test_gazetteer_codes_and_round_trip(tmp_path):
    path = tmp_path / "gazetteer.jsonl"
    srsly.write_jsonl(
        path,
        [
            {"label": "LOC", "pattern": "new york"},
            {"label": "LOC", "pattern": "Paris"},
            {"label": "PER", "pattern": "Mary Smith"},
        ],
    )
    nlp, ner, examples, history = train(gazetteer=str(path), trees=False)
    assert nlp.evaluate(examples)["ents_f"] == 1.0
    doc = input_doc(nlp, "Mary Smith left New York for Paris".split())
    codes = ner.gazetteer.codes([doc])
    # columns: LOC, PER; 0 none, 1 begin, 2 inside, 3 last, 4 unit
    assert codes.tolist() == [[0, 1], [0, 3], [0, 0], [1, 0], [3, 0], [0, 0], [4, 0]]
    path.unlink()  # the phrases are saved with the pipeline, not read again
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe("chain_ner").gazetteer.codes([doc]).tolist() == codes.tolist()
    assert predictions(loaded.pipe(fresh_docs(loaded))) == predictions(nlp.pipe(fresh_docs(nlp)))


def test_missing_gazetteer_file_is_a_clear_error(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("chain_ner", config={"gazetteer": str(tmp_path / "none.jsonl")})
    examples = [make_example(nlp, *row) for row in TINY]
    with pytest.raises(ValueError, match="gazetteer file not found"):
        nlp.initialize(lambda: examples)


@pytest.mark.parametrize("scheme", ["BIO", "BILOU"])
def test_decoding_never_breaks_the_tag_constraints(scheme):
    """Untrained, random weights: every predicted tag sequence is valid."""
    nlp, ner, _, _ = train(steps=0, scheme=scheme)
    rng = np.random.default_rng(0)
    words = [str(w) for w in rng.choice(["Mary", "lives", "in", "Paris", "New", "York", "."], 300)]
    docs = [input_doc(nlp, words[i : i + 30]) for i in range(0, 300, 30)]
    batch = ner.read(docs)
    scores = ner.structure_scores(ner.model.predict(ner.model_input(batch)))
    analysis, _ = ner.decode(scores, ner.layout(batch))
    tags, doc_offsets = analysis.encoding, batch.doc_offsets
    prediction = ner.predict(docs)
    assert np.array_equal(prediction.mentions, analysis.mentions)
    allowed = CHAIN.allowed_transitions(len(ner.labels), scheme)
    boundary = allowed.shape[0] - 1
    for d in range(len(docs)):
        sequence = [boundary] + tags[doc_offsets[d] : doc_offsets[d + 1]].tolist() + [boundary]
        assert all(allowed[a, b] for a, b in zip(sequence, sequence[1:]))
    # the decoded entities are the tags' entities, each inside one Doc
    names = CHAIN.tag_names(list(ner.labels), scheme)
    for first, last, label in prediction.mentions.tolist():
        assert names[tags[first]] in (f"B-{ner.labels[label]}", f"U-{ner.labels[label]}")
        assert all(names[t] == f"I-{ner.labels[label]}" for t in tags[first + 1 : last])
        assert np.searchsorted(doc_offsets, first, side="right") == np.searchsorted(doc_offsets, last, side="right")


def test_disk_and_bytes_round_trips(tmp_path):
    nlp, ner, _, _ = train(steps=10)
    expected = predictions(nlp.pipe(fresh_docs(nlp)))
    assert any(expected)
    nlp.to_disk(tmp_path / "model")
    from_disk = spacy.load(tmp_path / "model")
    assert predictions(from_disk.pipe(fresh_docs(from_disk))) == expected
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("chain_ner").from_bytes(ner.to_bytes())
    assert predictions(from_bytes.pipe(fresh_docs(from_bytes))) == expected


def test_corrupt_model_directory(tmp_path):
    nlp, _, _, _ = train(steps=1)
    nlp.to_disk(tmp_path / "model")
    (tmp_path / "model" / "chain_ner" / "model").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="chain_ner"):
        spacy.load(tmp_path / "model")


def test_settings_given_at_load(tmp_path):
    nlp, _, _, _ = train(steps=10, scheme="BIO")
    expected = predictions(nlp.pipe(fresh_docs(nlp)))
    assert any(expected)
    nlp.to_disk(tmp_path / "model")
    # loss and gazetteer are settings: given at load, the config and the component show them
    loaded = spacy.load(
        tmp_path / "model", config={"components": {"chain_ner": {"loss": "perceptron", "gazetteer": "none.jsonl"}}}
    )
    assert loaded.config["components"]["chain_ner"]["loss"] == "perceptron"
    settings = loaded.get_pipe("chain_ner").settings
    assert {key: settings[key] for key in ("loss", "gazetteer")} == {"loss": "perceptron", "gazetteer": "none.jsonl"}
    assert predictions(loaded.pipe(fresh_docs(loaded))) == expected
    # the weights are for BIO tags: another scheme at load is a clear error
    with pytest.raises(ValueError, match="trained with scheme = 'BIO'"):
        spacy.load(tmp_path / "model", config={"components": {"chain_ner": {"scheme": "BILOU"}}})


def test_multiprocessing_equals_single_process():
    nlp, _, _, _ = train(steps=10)
    docs = fresh_docs(nlp) * 5
    single = predictions(nlp.pipe([d.copy() for d in docs]))
    assert predictions(nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=4)) == single


@pytest.mark.slow
def test_empty_one_token_and_long_docs():
    nlp, ner, _, _ = train(steps=20)
    assert list(ner(input_doc(nlp, [])).ents) == []
    # a one-token Doc: the only BILOU tags it may take are O and U-X, and the
    # corpus's "Paris" is a location
    one = input_doc(nlp, ["Paris"])
    assert ner.predict([one]).mentions.tolist() == [[0, 0, list(ner.labels).index("LOC")]]
    assert [(e.start, e.end, e.label_) for e in ner(one).ents] == [(0, 1, "LOC")]
    words = ["Mary", "lives", "in", "Paris", "."] * 1000
    doc = ner(input_doc(nlp, words))
    # away from the Doc's ends every window looks the same, so the tags repeat with the text
    middle = [(e.start % 5, e.end - e.start, e.label_) for e in doc.ents if 100 <= e.start < 4900]
    assert len(middle) % 960 == 0 and middle[: len(middle) // 960] * 960 == middle
    assert len(middle) >= 960


def test_unknown_gold_label_and_bad_settings():
    nlp = check_unknown_gold_label(
        "chain_ner", {}, lambda nlp: [make_example(nlp, *row) for row in TINY], ["PER", "LOC"], "MISC"
    )
    with pytest.raises(ValueError, match="scheme"):
        nlp.add_pipe("chain_ner", name="a", config={"scheme": "IO"})
    with pytest.raises(ValueError, match="loss"):
        nlp.add_pipe("chain_ner", name="b", config={"loss": "hinge"})


def test_chain_offsets_cut_at_sentence_starts_no_span_crosses():
    from spacy_depner.doc_arrays.spans import chain_offsets

    doc_offsets = np.array([0, 5, 9])
    sentence_offsets = np.array([0, 3, 5, 7, 9])
    none = np.zeros((0, 2), dtype=np.int64)
    assert chain_offsets(none, doc_offsets, sentence_offsets).tolist() == [0, 3, 5, 7, 9]
    assert chain_offsets(np.array([[2, 3]]), doc_offsets, sentence_offsets).tolist() == [0, 5, 7, 9]
    assert chain_offsets(np.array([[3, 4], [6, 7]]), doc_offsets, sentence_offsets).tolist() == [0, 3, 5, 9]


def test_each_sentence_is_its_own_chain():
    """Decoding cuts the chain at every sentence start, so no predicted
    entity crosses one, even from a model trained on gold entities that do
    (in training, sentences that a gold entity joins form one chain, so the
    loss stays finite and falls)."""
    from spacy.tokens import Doc
    from spacy.training import Example

    nlp = spacy.blank("en")
    nlp.add_pipe("chain_ner")
    words = ["Mary", "lives", "in", "New", "York", "now"] * 20
    starts = [i % 4 == 0 for i in range(len(words))]
    tags = ["B-PER", "O", "O", "B-LOC", "I-LOC", "O"] * 20  # "New York" crosses a sentence start every other time
    crossing = Example(
        Doc(nlp.vocab, words=words, sent_starts=starts), Doc(nlp.vocab, words=words, sent_starts=starts, ents=tags)
    )
    assert any(e.start // 4 != (e.end - 1) // 4 for e in crossing.reference.ents)
    optimizer = nlp.initialize(lambda: [crossing])
    losses = [nlp.update([crossing], sgd=optimizer, losses={})["chain_ner"] for _ in range(30)]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0] * 0.5
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    assert len(doc.ents) > 0
    assert all(e.start // 4 == (e.end - 1) // 4 for e in doc.ents)
