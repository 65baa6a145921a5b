"""The two-stage model's glue: cross-validation folds, first-stage records,
the first_stage_spans component, the second stage's corpus counts at
initialization, and its test-time corpus counts (the `spacy project run
two_stage` workflow is tested in tests/experiments)."""

import json
import os
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

from spacy_depner.ml.corpus_layers import initialize_corpus_layers
from spacy_depner.readers.documents import attach_first_stage, first_stage_records, fold_indices

HERE = Path(__file__).parents[1]


@pytest.mark.parametrize("n, folds", [(0, 2), (1, 2), (7, 3), (25, 10)])
def test_folds_partition_the_documents_and_never_train_on_their_own_fold(n, folds):
    held_out = [fold_indices(n, folds, only_fold=f) for f in range(folds)]
    assert sorted(i for fold in held_out for i in fold) == list(range(n))
    for f in range(folds):
        training = fold_indices(n, folds, exclude_fold=f)
        assert not set(training) & set(held_out[f])
        assert sorted(training + held_out[f]) == list(range(n))


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(folds=-1),
        dict(folds=0, only_fold=0),
        dict(folds=3, only_fold=3),
        dict(folds=3, only_fold=1, exclude_fold=2),
    ],
)
def test_bad_fold_settings_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        fold_indices(10, **kwargs)


def test_gum_named_mentions_are_the_outermost_mentions_with_a_proper_noun_head():
    from spacy_depner.readers.documents import gum_named_examples
    from spacy_depner.readers.gum import read_gum

    nlp = spacy.blank("en")
    path = HERE / "data" / "nested_gum.conllu"
    examples = gum_named_examples(nlp.vocab, path)
    documents = read_gum(path)
    assert len(examples) == len(documents)
    for eg, document in zip(examples, documents):
        sentences = list(document)
        words = [w for s in sentences for w in s.sentence.words]
        upos = [p for s in sentences for p in s.sentence.upos]
        assert [t.text for t in eg.predicted] == words
        offsets = np.cumsum([0] + [len(s.sentence.words) for s in sentences])
        named = {
            (m.start + o, m.end + o, m.label)
            for s, o in zip(sentences, offsets)
            for m in s.mentions
            if any(upos[h + o] == "PROPN" for h in range(m.head_start, m.head_end))
        }
        outermost = {m for m in named if not any(n != m and n[0] <= m[0] and m[1] <= n[1] for n in named)}
        assert {(e.start, e.end, e.label_) for e in eg.reference.ents} == outermost
    assert any(len(eg.reference.ents) for eg in examples)


def write_genia_lines(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf8")
    return path


def test_genia_abstracts_are_runs_of_one_doc_id_with_the_outermost_mentions(tmp_path):
    from spacy_depner.readers.documents import create_genia_documents_reader, genia_abstract_examples

    def sentence(doc_id, n, words, entities):
        return {"doc_id": doc_id, "sent_id": f"{doc_id}-{n}", "tokens": words, "entities": entities}

    def entity(start, end, label):
        return {"start": start, "end": end, "type": label}

    records = [
        sentence("A", 0, ["IL-2", "gene", "expression", "."], [entity(0, 2, "DNA"), entity(0, 1, "protein")]),
        sentence("A", 1, ["NF-kappa", "B", "binds", "."], [entity(0, 2, "protein")]),
        sentence("B", 0, ["T", "cells", "of", "mice"], [entity(0, 2, "cell_type"), entity(1, 4, "cell_line")]),
        sentence("A", 2, ["IL-2", "again", "."], [entity(0, 1, "protein")]),  # the same doc_id later: its own run
    ]
    path = write_genia_lines(tmp_path / "genia.jsonl", records)
    nlp = spacy.blank("en")
    examples = genia_abstract_examples(nlp.vocab, path)
    assert [len(eg.reference) for eg in examples] == [8, 4, 3]
    assert [t.text for t in examples[0].predicted] == ["IL-2", "gene", "expression", ".", "NF-kappa", "B", "binds", "."]
    assert [s.start for s in examples[0].predicted.sents] == [0, 4]
    assert [s.start for s in examples[0].reference.sents] == [0, 4]
    ents = [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in examples]
    # nested: the outermost; crossing: the one starting first
    assert ents == [[(0, 2, "DNA"), (4, 6, "protein")], [(0, 2, "cell_type")], [(0, 1, "protein")]]
    assert not any(len(eg.predicted.ents) for eg in examples)
    assert len(genia_abstract_examples(nlp.vocab, path, limit=2)) == 2
    kept = create_genia_documents_reader(path, folds=3, only_fold=1)(nlp)
    assert [len(eg.reference) for eg in kept] == [4]
    records[1].pop("doc_id")
    with pytest.raises(ValueError, match="sentence 2 has no 'doc_id'"):
        genia_abstract_examples(nlp.vocab, write_genia_lines(tmp_path / "no_id.jsonl", records))


def test_genia_abstracts_of_the_data_cover_every_sentence_once():
    from spacy_depner.readers.documents import genia_abstract_examples
    from spacy_depner.readers.genia import read_genia_records

    path = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "genia" / "dev.jsonl"
    if not path.is_file():
        pytest.skip(f"{path}: GENIA not here")
    records = read_genia_records(path)
    examples = genia_abstract_examples(spacy.blank("en").vocab, path)
    assert len(examples) == len({doc_id for _, _, doc_id in records})
    assert sum(len(list(eg.reference.sents)) for eg in examples) == len(records)
    assert sum(len(eg.reference) for eg in examples) == sum(len(words) for words, _, _ in records)


def test_records_round_trip_and_check_the_document_length():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="Kim lives in Paris".split())
    doc.ents = [Span(doc, 0, 1, "PER"), Span(doc, 3, 4, "LOC")]
    record = json.loads(json.dumps(first_stage_records([doc], [7])[0]))
    target = Doc(nlp.vocab, words="Kim lives in Paris".split())
    attach_first_stage(target, record, "first_stage")
    assert [(s.start, s.end, s.label_) for s in target.spans["first_stage"]] == [(0, 1, "PER"), (3, 4, "LOC")]
    with pytest.raises(ValueError, match="tokens"):
        attach_first_stage(Doc(nlp.vocab, words=["Kim"]), record, "first_stage")


def test_first_stage_spans_moves_the_entities(tmp_path):
    """The first stage's entities go to the span group and leave doc.ents
    (unannotated), so the second stage decodes freely instead of keeping
    them as entities set before it."""
    nlp = spacy.blank("en")
    nlp.add_pipe("first_stage_spans", config={"spans_key": "firsts"})

    def copied(pipeline):
        doc = pipeline.make_doc("Kim met Lee in Paris")
        doc.ents = [Span(doc, 0, 1, "PER"), Span(doc, 2, 3, "PER"), Span(doc, 4, 5, "LOC")]
        doc = pipeline.get_pipe("first_stage_spans")(doc)
        assert list(doc.ents) == [] and {t.ent_iob_ for t in doc} == {""}
        return [(s.start, s.end, s.label_) for s in doc.spans["firsts"]]

    assert copied(nlp) == [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")]
    # saved and loaded, it keeps its span key and still copies
    nlp.to_disk(tmp_path / "pipeline")
    assert copied(spacy.load(tmp_path / "pipeline")) == [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")]
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("first_stage_spans", config={"spans_key": "firsts"})
    assert copied(from_bytes.from_bytes(nlp.to_bytes())) == [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC")]
    empty = nlp.get_pipe("first_stage_spans")(nlp.make_doc("no entities"))
    assert list(empty.spans["firsts"]) == []


def second_stage_nlp():
    nlp = spacy.blank("en")
    tok2vec = {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "width": 16,
        "depth": 1,
        "embed_size": 100,
        "window_size": 1,
        "maxout_pieces": 2,
        "subword_features": True,
        "pretrained_vectors": None,
    }
    model = {
        "@architectures": "spacy_depner.TagScorer.v1",
        "hidden_width": 16,
        "tok2vec": {"@architectures": "spacy_depner.NonLocalFeatures.v1", "width": 4, "tok2vec": tok2vec},
    }
    nlp.add_pipe("chain_ner", config={"model": model})
    return nlp


def example(nlp, words, gold, first):
    reference = Doc(nlp.vocab, words=words)
    reference.ents = [Span(reference, s, e, label) for s, e, label in gold]
    predicted = Doc(nlp.vocab, words=words)
    predicted.spans["first_stage"] = [Span(predicted, s, e, label) for s, e, label in first]
    return Example(predicted, reference)


@pytest.mark.slow
def test_second_stage_initialize_counts_the_first_stage_entities_and_learns():
    nlp = second_stage_nlp()
    words = "Paris is big . Paris met Kim . paris again".split()
    examples = [
        example(
            nlp,
            words,
            [(0, 1, "LOC"), (4, 5, "LOC"), (6, 7, "PER"), (8, 9, "LOC")],
            [(0, 1, "LOC"), (4, 5, "PER"), (6, 7, "PER"), (8, 9, "LOC")],
        )
    ] * 3
    nlp.initialize(lambda: examples)
    layer = next(node for node in nlp.get_pipe("chain_ner").model.walk() if node.name == "nonlocal_features")
    assert sorted(layer.attrs["labels"]) == ["LOC", "PER"]
    assert layer.attrs["corpus_statistics"]["n_documents"] == 3
    losses = [nlp.update(examples, losses={})["chain_ner"] for _ in range(30)]
    assert losses[-1] < 0.2 * losses[0]
    doc = examples[0].predicted.copy()
    assert [(e.start, e.label_) for e in nlp(doc).ents] == [(0, "LOC"), (4, "LOC"), (6, "PER"), (8, "LOC")]

    def no_docs():
        raise AssertionError("the Docs are read only for a second stage")

    assert initialize_corpus_layers(spacy.blank("en").add_pipe("chain_ner").model, ["LOC"], no_docs) == 0


def test_counting_pipe_adds_the_input_to_the_corpus_counts_for_one_call():
    from spacy_depner.ml.majority_counts import CorpusStatistics
    from spacy_depner.ml.nonlocal_features import configure_nonlocal_features, corpus_statistics
    from spacy_depner.pipeline.corpus_counts import counting_pipe

    SECOND_STAGE = "second_stage"

    second = second_stage_nlp()
    words = "Paris is big . Kim met Lee".split()
    examples = [example(second, words, [(0, 1, "LOC"), (4, 5, "PER"), (6, 7, "PER")], [(0, 1, "LOC"), (4, 5, "PER")])]
    second.initialize(lambda: examples)
    pair = spacy.blank("en", vocab=second.vocab)
    pair.add_pipe("entity_ruler").add_patterns([{"label": "PER", "pattern": "Lee"}])
    pair.add_pipe("first_stage_spans")
    pair.add_pipe("chain_ner", name=SECOND_STAGE, source=second)
    layer = next(n for n in pair.get_pipe(SECOND_STAGE).model.walk() if n.name == "nonlocal_features")
    saved = dict(layer.attrs["corpus_statistics"])
    inputs = [Doc(pair.vocab, words="Lee met Lee".split())]
    counted = counting_pipe(pair, SECOND_STAGE)([d.copy() for d in inputs])
    assert layer.attrs["corpus_statistics"] == saved and layer.attrs["input_counted"] is False  # restored
    # the same as configuring the counts of training + input by hand
    firsts = list(pair.pipe([d.copy() for d in inputs], disable=[SECOND_STAGE]))
    configure_nonlocal_features(
        pair.get_pipe(SECOND_STAGE).model,
        corpus_statistics=corpus_statistics(firsts, "first_stage", CorpusStatistics.from_dict(saved)),
    )
    by_hand = list(pair.get_pipe(SECOND_STAGE).pipe(firsts))
    assert [[(e.start, e.label_) for e in d.ents] for d in counted] == [
        [(e.start, e.label_) for e in d.ents] for d in by_hand
    ]
    assert layer.attrs["corpus_statistics"]["n_documents"] == saved["n_documents"] + 1


def test_stacked_layers_each_count_their_own_first_stage():
    """A second stage over two first stages (NonLocalFeatures wrapping
    NonLocalFeatures, as own_data_two_stage_stacked.cfg): each layer gets the
    labels and corpus counts of its own span group, at initialization and in
    counting_pipe, whatever order the model lists them in."""
    from spacy_depner.pipeline.corpus_counts import counting_pipe

    inner = {"@architectures": "spacy_depner.NonLocalFeatures.v1", "width": 4, "spans_key": "first_stage"}
    inner["labels"] = "first_stage"
    inner["tok2vec"] = second_stage_nlp().config["components"]["chain_ner"]["model"]["tok2vec"]["tok2vec"]
    outer = {"@architectures": "spacy_depner.NonLocalFeatures.v1", "width": 4, "spans_key": "trained_stage"}
    outer.update(labels="first_stage", tok2vec=inner)
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "chain_ner",
        config={"model": {"@architectures": "spacy_depner.TagScorer.v1", "hidden_width": 16, "tok2vec": outer}},
    )
    words = "Paris is big . Kim met Lee".split()
    eg = example(nlp, words, [(0, 1, "LOC"), (4, 5, "PER"), (6, 7, "PER")], [(0, 1, "GPE"), (4, 5, "PERSON")])
    eg.predicted.spans["trained_stage"] = [Span(eg.predicted, 0, 1, "LOC"), Span(eg.predicted, 6, 7, "PER")]
    nlp.initialize(lambda: [eg])
    layers = {n.attrs["spans_key"]: n for n in nlp.get_pipe("chain_ner").model.walk() if n.name == "nonlocal_features"}
    assert layers["first_stage"].attrs["labels"] == ["GPE", "PERSON"]
    assert layers["trained_stage"].attrs["labels"] == ["LOC", "PER"]
    entities = {key: layer.attrs["corpus_statistics"]["entities"] for key, layer in layers.items()}
    assert entities["first_stage"] != entities["trained_stage"]
    assert "kim" in str(entities["first_stage"]).lower() and "kim" not in str(entities["trained_stage"]).lower()
    assert "lee" in str(entities["trained_stage"]).lower() and "lee" not in str(entities["first_stage"]).lower()
    saved = {key: layer.attrs["corpus_statistics"] for key, layer in layers.items()}
    seen = {}
    original = nlp.get_pipe("chain_ner").pipe

    def spy(docs, batch_size=64):
        seen.update({key: str(layer.attrs["corpus_statistics"]["entities"]).lower() for key, layer in layers.items()})
        return original(docs, batch_size=batch_size)

    nlp.get_pipe("chain_ner").pipe = spy
    doc = Doc(nlp.vocab, words="Ann met Bob".split())
    doc.spans["first_stage"] = [Span(doc, 0, 1, "PERSON")]
    doc.spans["trained_stage"] = [Span(doc, 2, 3, "PER")]
    counting_pipe(nlp, "chain_ner")([doc])
    assert "ann" in seen["first_stage"] and "ann" not in seen["trained_stage"]
    assert "bob" in seen["trained_stage"] and "bob" not in seen["first_stage"]
    assert {key: layer.attrs["corpus_statistics"] for key, layer in layers.items()} == saved  # restored


def first_stage_with_votes():
    """A chain_ner first stage trained a few steps on a tiny corpus, then
    first_stage_spans writing its soft votes."""
    nlp = spacy.blank("en")
    nlp.add_pipe("chain_ner")
    words = "Kim met Lee in Paris . Lee left Paris".split()
    examples = [example(nlp, words, [(0, 1, "PER"), (2, 3, "PER"), (4, 5, "LOC"), (6, 7, "PER"), (8, 9, "LOC")], [])]
    nlp.initialize(lambda: examples)
    for _ in range(5):
        nlp.update(examples)
    nlp.add_pipe("first_stage_spans", config={"votes_from": "chain_ner"})
    return nlp


def votes_of(doc, key="first_stage_votes"):
    from spacy_depner.ml.nonlocal_features import doc_votes

    return doc_votes(doc, key)


def same_votes(found, expected):
    return [v[:3] for v in found] == [v[:3] for v in expected] and np.allclose(
        [v[3] for v in found], [v[3] for v in expected], atol=1e-6
    )


def test_first_stage_spans_writes_the_soft_votes_of_the_first_stage(tmp_path):
    import pickle

    from spacy_depner.pipeline.uncertainty import VOTE_FLOOR, soft_votes

    nlp = first_stage_with_votes()
    text = "Kim met Lee in Paris . Ann saw Lee"
    doc = nlp(text)
    votes = votes_of(doc)
    assert votes and all(VOTE_FLOOR <= p <= 1 for *_, p in votes)
    first = nlp.get_pipe("chain_ner")
    with nlp.select_pipes(disable=["first_stage_spans"]):
        again = nlp(text)
    assert [(s, e, label) for s, e, label, _ in votes] == [v[:3] for v in soft_votes(first, [again])[0]]
    # the first stage's own entities vote with the probability it wrote for them
    for span, p in zip(again.spans[first.spans_key], again.spans[first.spans_key].attrs["scores"]):
        if p >= VOTE_FLOOR:
            assert any(v[:3] == (span.start, span.end, span.label_) and abs(v[3] - p) < 1e-5 for v in votes)
    # a flat first stage: at most one entity covers a token, so a token's votes sum to at most 1
    covering = np.zeros(len(doc))
    for s, e, _, p in votes:
        covering[s:e] += p
    assert covering.max() <= 1 + 1e-5
    # the same in a batch, after pickling, and after saving
    assert same_votes(votes_of(list(nlp.pipe([text, "Paris"], batch_size=2))[0]), votes)
    assert same_votes(votes_of(pickle.loads(pickle.dumps(nlp))(text)), votes)
    nlp.to_disk(tmp_path / "pipeline")
    assert same_votes(votes_of(spacy.load(tmp_path / "pipeline")(text)), votes)


def test_votes_from_a_missing_component_names_it():
    nlp = spacy.blank("en")
    nlp.add_pipe("first_stage_spans", config={"votes_from": "ner"})
    with pytest.raises(ValueError, match="votes_from = 'ner'"):
        nlp("Kim met Lee")


def test_records_keep_the_votes_and_refuse_bad_ones(tmp_path):
    from spacy_depner.readers.documents import read_first_stage

    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="Kim lives in Paris".split())
    doc.ents = [Span(doc, 0, 1, "PER")]
    votes = [[(0, 1, "PER", 0.75), (3, 4, "LOC", 0.125)]]
    path = tmp_path / "first.jsonl"
    path.write_text(json.dumps(first_stage_records([doc], [0], votes)[0]) + "\n")
    where, record = read_first_stage(path)[0]
    target = Doc(nlp.vocab, words="Kim lives in Paris".split())
    attach_first_stage(target, record, "first_stage", where)
    assert votes_of(target) == [(0, 1, "PER", 0.75), (3, 4, "LOC", 0.125)]
    assert [(s.start, s.label_) for s in target.spans["first_stage"]] == [(0, "PER")]
    for bad in ([[0, 1, "PER"]], [[0, 1, "PER", 1.5]], [[0, 1, "", 0.5]]):
        path.write_text(json.dumps({**record, "votes": bad}) + "\n")
        with pytest.raises(ValueError, match=r"first.jsonl:1: the votes of a first-stage record"):
            read_first_stage(path)
    with pytest.raises(ValueError, match="vote"):
        attach_first_stage(
            Doc(nlp.vocab, words=["Kim", "x", "y"]),
            {**record, "tokens": 3, "votes": [[2, 4, "LOC", 0.5]]},
            "first_stage",
        )


WESTERN = """# newdoc id = GUM_fixture_west
# global.Entity = GRP-etype-infstat-salience-centering-minspan-link-identity
# sent_id = GUM_fixture_west-1
# text = The Western United States grew.
1	The	the	DET	DT	_	4	det	4:det	Entity=(1-place-new-nnnnn-cf1-2,3,4-sgl
2	Western	Western	ADJ	NNP	_	4	amod	4:amod	_
3	United	United	PROPN	NNP	_	4	compound	4:compound	_
4	States	States	PROPN	NNPS	_	5	nsubj	5:nsubj	Entity=1)
5	grew	grow	VERB	VBD	_	0	root	0:root	SpaceAfter=No
6	.	.	PUNCT	.	_	5	punct	5:punct	_

"""


@pytest.mark.parametrize("extent, expected", [("mention", (0, 4, "place")), ("minspan", (1, 4, "place"))])
def test_gum_named_mentions_cover_the_whole_mention_or_its_minimal_span(tmp_path, extent, expected):
    from spacy_depner.readers.documents import gum_named_examples

    path = tmp_path / "west.conllu"
    path.write_text(WESTERN, encoding="utf8")
    (eg,) = gum_named_examples(spacy.blank("en").vocab, path, extent=extent)
    assert [(e.start, e.end, e.label_) for e in eg.reference.ents] == [expected]


def test_gum_minimal_spans_are_inside_their_mentions_and_an_unknown_extent_is_refused():
    from spacy_depner.readers.documents import gum_named_examples

    vocab, path = spacy.blank("en").vocab, HERE / "data" / "nested_gum.conllu"
    whole, minimal = gum_named_examples(vocab, path), gum_named_examples(vocab, path, extent="minspan")
    for eg_whole, eg_minimal in zip(whole, minimal):
        for e in eg_minimal.reference.ents:
            assert any(w.start <= e.start and e.end <= w.end and w.label_ == e.label_ for w in eg_whole.reference.ents)
    with pytest.raises(ValueError, match="extent"):
        gum_named_examples(vocab, path, extent="head")
