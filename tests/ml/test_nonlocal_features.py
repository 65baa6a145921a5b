"""Two-stage non-local majority features (Krishnan & Manning 2006, sec. 4):
the pure counts and majorities, corpus statistics, the thinc layer
``spacy_depner.NonLocalFeatures.v1``, and the UNER reader's whole documents."""

import json
from pathlib import Path

import numpy as np
import pytest
import spacy
import srsly
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.ml.featureextractor import FeatureExtractor
from spacy.tokens import Span
from spacy.util import registry
from thinc.api import Adam, HashEmbed, chain, with_array

from spacy_depner.ml.majority_counts import CorpusStatistics
from spacy_depner.ml.majority_labels import nonlocal_features
from spacy_depner.ml.nonlocal_features import (
    build_nonlocal_features,
    configure_nonlocal_features,
    corpus_statistics,
)
from spacy_depner.ml.tag_scorer import build_tag_scorer
from spacy_depner.readers.uner import corpus_examples, document_groups, read_uner_corpus

LABELS = ["PER", "LOC", "ORG", "MISC"]
PER, LOC, ORG, MISC = 1, 2, 3, 4
DOC_TOKEN, DOC_ENTITY, DOC_SUPER, CORPUS_TOKEN, CORPUS_ENTITY, CORPUS_SUPER = range(6)
DATA = Path(__file__).parents[1] / "data"


def features(text, spans, labels=LABELS, corpus=None):
    return nonlocal_features(text.split(), spans, labels, corpus)


# --- pure features -----------------------------------------------------------


def test_token_majority_of_the_paper_document_level():
    # "three occurrences of the token Australia, two labeled Location and one
    # Organization: token-majority Location for all three" (sec. 4)
    text = "Australia beat India . Australia Post said Australia won"
    #        0         1    2     3 4         5    6    7         8
    f = features(text, [(0, 1, "LOC"), (4, 6, "ORG"), (7, 8, "LOC")])
    assert f.shape == (9, 6) and f.dtype == np.int32
    assert f[[0, 4, 7], DOC_TOKEN].tolist() == [LOC, LOC, LOC]
    assert f[5, DOC_TOKEN] == ORG  # "Post" only inside the ORG entity
    assert f[[1, 2, 3, 6], DOC_TOKEN].tolist() == [0, 0, 0, 0]  # O majority / never labelled
    assert not f[:, 3:].any()  # no corpus: corpus columns 0


def test_token_majority_counts_outside_occurrences_as_o():
    # "may": O twice, PER once -> O wins, no feature
    f = features("may came in may and may left", [(0, 1, "PER")])
    assert f[[0, 3, 5], DOC_TOKEN].tolist() == [0, 0, 0]


def test_token_majority_corpus_level_over_documents():
    docs = [
        ("Australia won".split(), [(0, 1, "LOC")]),
        ("Rain in Australia".split(), [(2, 3, "LOC")]),
        ("Australia signed Smith".split(), [(0, 1, "ORG"), (2, 3, "PER")]),
    ]
    corpus = CorpusStatistics(docs)
    assert corpus.n_documents == 3
    for (tokens, spans), position in zip(docs, (0, 2, 0)):
        f = nonlocal_features(tokens, spans, LABELS, corpus)
        assert f[position, CORPUS_TOKEN] == LOC  # two LOC, one ORG over the corpus
    f = nonlocal_features(*docs[2], LABELS, corpus)
    assert f[0, DOC_TOKEN] == ORG  # the document alone says ORG
    assert f[2, CORPUS_TOKEN] == PER and f[1, CORPUS_TOKEN] == 0


def test_entity_majority_of_the_paper():
    # two "Bank of Australia" ORG and one LOC: ORG on every token of all three
    text = "Bank of Australia and Bank of Australia and bank of australia"
    f = features(text, [(0, 3, "ORG"), (4, 7, "ORG"), (8, 11, "LOC")])
    assert f[[0, 1, 2, 4, 5, 6, 8, 9, 10], DOC_ENTITY].tolist() == [ORG] * 9
    assert f[[3, 7], DOC_ENTITY].tolist() == [0, 0]


def test_entity_majority_of_a_token_outside_entities_is_its_single_token_entity_majority():
    # "york" O; as a single-token entity PER twice -> PER
    f = features("york met York and YORK in New York", [(2, 3, "PER"), (4, 5, "PER"), (6, 8, "LOC")])
    #             0    1   2    3   4    5  6   7
    assert f[0, DOC_ENTITY] == PER  # outside: majority as a single-token entity
    assert f[7, DOC_ENTITY] == LOC  # inside "New York": the entity's own majority
    assert f[1, DOC_ENTITY] == 0  # "met": never an entity
    # a token that occurs only inside longer entities has no entity-majority
    g = features("york and New York", [(2, 4, "LOC")])
    assert g[0, DOC_ENTITY] == 0


def test_superentity_majority_of_the_paper():
    # two "Bank of Australia" ORG, one "Australia Cup" MISC -> ORG for every
    # entity "Australia" (the entity's own label does not count)
    text = "Bank of Australia , Bank of Australia , Australia Cup , Australia , australia"
    #       0    1  2         3 4    5  6         7 8         9   10 11       12 13
    spans = [(0, 3, "ORG"), (4, 7, "ORG"), (8, 10, "MISC"), (11, 12, "LOC"), (13, 14, "PER")]
    f = features(text, spans)
    assert f[[11, 13], DOC_SUPER].tolist() == [ORG, ORG]
    # "Bank of Australia" is contained in no other entity
    assert f[[0, 1, 2, 4, 5, 6], DOC_SUPER].tolist() == [0] * 6
    assert f[[8, 9], DOC_SUPER].tolist() == [0, 0]


def test_superentity_needs_strict_containment():
    f = features("Paris and Paris", [(0, 1, "LOC"), (2, 3, "LOC")])
    assert f[:, DOC_SUPER].tolist() == [0, 0, 0]


def test_superentity_majority_of_a_token_outside_entities():
    # "york" O; entities containing it: "New York" LOC twice, "New York Knicks" ORG -> LOC
    text = "york , New York , New York , New York Knicks"
    f = features(text, [(2, 4, "LOC"), (5, 7, "LOC"), (8, 11, "ORG")])
    assert f[0, DOC_SUPER] == LOC
    assert f[0, DOC_ENTITY] == 0  # never a single-token entity
    # "New York" itself: contained in "New York Knicks" only -> ORG
    assert f[[2, 3, 5, 6], DOC_SUPER].tolist() == [ORG] * 4
    # a single-token entity also contains the token (three PER beat two LOC)
    g = features(
        "york , New York , New York , York , York , York",
        [(2, 4, "LOC"), (5, 7, "LOC"), (8, 9, "PER"), (10, 11, "PER"), (12, 13, "PER")],
    )
    assert g[0, DOC_SUPER] == PER


def test_superentity_counts_each_containing_entity_once():
    # "a" is twice inside the one ORG "a b a", once in each of two LOC: LOC 2 > ORG 1
    # (ORG is first in this label list, so counting "a b a" twice would tie and give ORG)
    spans = [(0, 1, "PER"), (2, 5, "ORG"), (6, 8, "LOC"), (9, 11, "LOC")]
    f = nonlocal_features("a . a b a . a c . a d".split(), spans, ["ORG", "LOC", "PER"])
    assert f[0, DOC_SUPER] == 2  # LOC in ["ORG", "LOC", "PER"]


def test_matching_ignores_case():
    f = features("AUSTRALIA australia Australia", [(0, 1, "LOC"), (1, 2, "LOC"), (2, 3, "ORG")])
    assert f[:, DOC_TOKEN].tolist() == [LOC] * 3
    assert f[:, DOC_ENTITY].tolist() == [LOC] * 3
    g = features("BANK OF AUSTRALIA australia", [(0, 3, "ORG"), (3, 4, "LOC")])
    assert g[3, DOC_SUPER] == ORG


def test_ties_go_to_the_label_first_in_the_label_list():
    text, spans = "Jordan and Jordan", [(0, 1, "PER"), (2, 3, "LOC")]
    f = nonlocal_features(text.split(), spans, ["PER", "LOC"])
    assert f[[0, 2], DOC_TOKEN].tolist() == [1, 1] and f[[0, 2], DOC_ENTITY].tolist() == [1, 1]
    g = nonlocal_features(text.split(), spans, ["LOC", "PER"])
    assert g[[0, 2], DOC_TOKEN].tolist() == [1, 1]  # now LOC is first
    assert nonlocal_features(text.split(), spans[::-1], ["LOC", "PER"]).tolist() == g.tolist()
    # O ties with a label: O wins (no feature)
    h = nonlocal_features("Jordan and jordan".split(), [(0, 1, "PER")], ["PER"])
    assert h[[0, 2], DOC_TOKEN].tolist() == [0, 0]


def test_unknown_labels_are_not_counted_and_bad_input_is_a_clear_error():
    f = features("Acme and Acme", [(0, 1, "PRODUCT"), (2, 3, "ORG")])
    assert f[[0, 2], DOC_TOKEN].tolist() == [ORG, ORG]  # PRODUCT ignored, O not counted there
    with pytest.raises(ValueError, match="not inside a document of 3 tokens"):
        features("a b c", [(2, 5, "PER")])
    with pytest.raises(ValueError, match="not inside"):
        features("a b c", [(1, 1, "PER")])
    with pytest.raises(ValueError, match="label"):
        features("a b c", [(0, 1, "")])
    with pytest.raises(ValueError, match="distinct"):
        features("a b c", [], labels=["PER", "PER"])
    assert features("", [], corpus=CorpusStatistics()).shape == (0, 6)


def test_overlapping_spans_take_the_longest_covering_entity():
    # nested first-stage output: "Bank of Australia" ORG containing "Australia" LOC
    text = "Bank of Australia and Bank of Australia"
    f = features(text, [(0, 3, "ORG"), (2, 3, "LOC"), (4, 7, "ORG")])
    assert f[2, DOC_ENTITY] == ORG  # the longer span decides
    assert f[2, DOC_TOKEN] == ORG  # "australia": ORG, LOC (position 2), ORG -> ORG
    assert f[0, DOC_SUPER] == 0


def test_corpus_statistics_update_and_round_trip():
    docs = [
        ("Bank of Australia opened".split(), [(0, 3, "ORG")]),
        ("Australia won".split(), [(0, 1, "LOC")]),
        ("the Australia Cup".split(), [(1, 3, "MISC")]),
    ]
    whole = CorpusStatistics(docs)
    grown = CorpusStatistics(docs[:1]).update(docs[1:])
    assert grown == whole and grown.n_documents == 3
    assert whole.tokens["australia"] == {"ORG": 1, "LOC": 1, "MISC": 1}
    assert whole.tokens["opened"] == {"": 1}
    data = whole.to_dict()
    assert CorpusStatistics.from_dict(json.loads(json.dumps(data))) == whole
    assert CorpusStatistics.from_dict(srsly.msgpack_loads(srsly.msgpack_dumps(data))) == whole
    copy = CorpusStatistics.from_dict(data)
    copy.update(docs[:1])
    assert CorpusStatistics.from_dict(data) == whole  # from_dict copies by default
    tokens, spans = docs[1]
    assert (
        nonlocal_features(tokens, spans, LABELS, CorpusStatistics.from_dict(data)).tolist()
        == nonlocal_features(tokens, spans, LABELS, whole).tolist()
    )
    with pytest.raises(ValueError, match="version"):
        CorpusStatistics.from_dict({"tokens": {}})
    with pytest.raises(ValueError, match="lack"):
        CorpusStatistics.from_dict({"version": 1, "tokens": {}})


WORDS = st.sampled_from(["a", "A", "b", "B", "c", "new", "York", "york"])


@st.composite
def documents(draw):
    tokens = draw(st.lists(WORDS, min_size=0, max_size=12))
    spans, position = [], 0
    while position < len(tokens):
        length = draw(st.integers(0, 3))
        if length and position + length <= len(tokens):
            spans.append((position, position + length, draw(st.sampled_from(["PER", "LOC", "ORG"]))))
            position += length
        else:
            position += 1
    return tokens, spans


@settings(max_examples=60, deadline=None)
@given(documents(), st.randoms(use_true_random=False))
def test_properties_of_the_features(document, random):
    tokens, spans = document
    labels = ["PER", "LOC", "ORG"]
    f = nonlocal_features(tokens, spans, labels, CorpusStatistics([document]))
    # a corpus of this document alone gives the document-level values
    assert f[:, 3:].tolist() == f[:, :3].tolist()
    # the order of the spans and the case of the tokens do not matter
    shuffled = list(spans)
    random.shuffle(shuffled)
    upper = [t.upper() for t in tokens]
    assert nonlocal_features(upper, shuffled, labels).tolist() == nonlocal_features(tokens, spans, labels).tolist()
    # tokens with the same lowercased text share their token-majority
    for i, t in enumerate(tokens):
        for j, u in enumerate(tokens):
            if t.lower() == u.lower():
                assert f[i, 0] == f[j, 0]
    # a corpus with another copy of the document doubles every count: same majorities
    g = nonlocal_features(tokens, spans, labels, CorpusStatistics([document, document]))
    assert g.tolist() == f.tolist()
    assert f.min(initial=0) >= 0 and f.max(initial=0) <= len(labels)


# --- thinc layer ------------------------------------------------------------

TOK2VEC_WIDTH, WIDTH = 8, 4


def small_tok2vec():
    return chain(FeatureExtractor(["ORTH"]), with_array(HashEmbed(nO=TOK2VEC_WIDTH, nV=64, column=0, seed=3)))


@pytest.fixture
def nlp():
    return spacy.blank("en")


def make_docs(nlp, key="first_stage"):
    texts = [
        ("Australia beat India in Australia", [(0, 1, "LOC"), (2, 3, "LOC"), (4, 5, "ORG")]),
        ("Bank of Australia said Australia", [(0, 3, "ORG"), (4, 5, "LOC")]),
    ]
    docs = []
    for text, spans in texts:
        doc = nlp.make_doc(text)
        doc.spans[key] = [Span(doc, s, e, label=label) for s, e, label in spans]
        docs.append(doc)
    return docs


def make_layer(docs, statistics=True, **config):
    layer = build_nonlocal_features(small_tok2vec(), width=WIDTH, **config)
    configure_nonlocal_features(layer, LABELS, corpus_statistics(docs) if statistics else None)
    layer.initialize(X=docs)
    return layer


def test_layer_output_shape_and_registration(nlp):
    docs = make_docs(nlp)
    layer = make_layer(docs)
    assert registry.architectures.get("spacy_depner.NonLocalFeatures.v1") is build_nonlocal_features
    assert layer.get_dim("nO") == TOK2VEC_WIDTH + 6 * WIDTH
    assert layer.get_dim("n_labels") == len(LABELS)
    assert layer.get_param("embeddings").shape == (6 * (len(LABELS) + 1), WIDTH)
    outputs = layer.predict(docs)
    assert [o.shape for o in outputs] == [(5, TOK2VEC_WIDTH + 6 * WIDTH), (5, TOK2VEC_WIDTH + 6 * WIDTH)]
    # the first columns are the wrapped tok2vec's vectors
    inner = layer.layers[0].predict(docs)
    for o, v in zip(outputs, inner):
        np.testing.assert_allclose(o[:, :TOK2VEC_WIDTH], v)
    # "Australia" in doc 0: token-majority LOC in the document (LOC, ORG: tie) and in
    # the corpus (LOC 2, ORG 2: tie); column c embeds value v with row c * (K + 1) + v
    table, rows_per_column = layer.get_param("embeddings"), len(LABELS) + 1
    first = outputs[0][0, TOK2VEC_WIDTH:].reshape(6, WIDTH)
    np.testing.assert_allclose(first[DOC_TOKEN], table[DOC_TOKEN * rows_per_column + LOC])
    np.testing.assert_allclose(first[CORPUS_TOKEN], table[CORPUS_TOKEN * rows_per_column + LOC])
    np.testing.assert_allclose(first[DOC_SUPER], table[DOC_SUPER * rows_per_column + 0])
    np.testing.assert_allclose(
        first[CORPUS_SUPER], table[CORPUS_SUPER * rows_per_column + ORG]
    )  # in "Bank of Australia"
    assert layer.predict([]) == []


def test_first_stage_spans_change_the_output(nlp):
    docs = make_docs(nlp)
    layer = make_layer(docs, statistics=False)
    before = layer.predict(docs)[0]
    docs[0].spans["first_stage"] = [Span(docs[0], 0, 1, label="PER")]
    after = layer.predict(docs)[0]
    np.testing.assert_allclose(before[:, :TOK2VEC_WIDTH], after[:, :TOK2VEC_WIDTH])
    assert not np.allclose(before[:, TOK2VEC_WIDTH:], after[:, TOK2VEC_WIDTH:])


def test_corpus_statistics_change_the_output(nlp):
    docs = make_docs(nlp)
    layer = make_layer(docs, statistics=False)
    without = layer.predict(docs)[1]
    corpus_columns = slice(TOK2VEC_WIDTH + 3 * WIDTH, None)
    other = CorpusStatistics([(["said"], [(0, 1, "PER")])])
    configure_nonlocal_features(layer, corpus_statistics=other)
    with_corpus = layer.predict(docs)[1]
    np.testing.assert_allclose(without[:, : TOK2VEC_WIDTH + 3 * WIDTH], with_corpus[:, : TOK2VEC_WIDTH + 3 * WIDTH])
    assert not np.allclose(without[3, corpus_columns], with_corpus[3, corpus_columns])  # "said": PER


def _loss(layer, docs, targets):
    outputs = layer.predict(docs)
    return float(sum(((o - t) ** 2).sum() for o, t in zip(outputs, targets)))


def test_gradients_match_finite_differences(nlp):
    docs = make_docs(nlp)
    layer = make_layer(docs)
    rng = np.random.default_rng(0)
    targets = [rng.normal(size=o.shape).astype("f") for o in layer.predict(docs)]
    outputs, backprop = layer.begin_update(docs)
    backprop([2 * (o - t) for o, t in zip(outputs, targets)])
    embed = next(node for node in layer.walk() if node.name == "hashembed")
    checks = [(layer, "embeddings", (LOC, 0)), (layer, "embeddings", (6 * 5 - 1, 1)), (embed, "E", None)]
    for node, name, index in checks:
        grad = node.get_grad(name)
        if index is None:  # the largest tok2vec gradient entry
            index = np.unravel_index(np.abs(grad).argmax(), grad.shape)
        param = node.get_param(name).copy()
        eps = 1e-2
        shifted = param.copy()
        shifted[index] += eps
        node.set_param(name, shifted)
        up = _loss(layer, docs, targets)
        shifted[index] -= 2 * eps
        node.set_param(name, shifted)
        down = _loss(layer, docs, targets)
        node.set_param(name, param)
        numeric = (up - down) / (2 * eps)
        assert grad[index] == pytest.approx(numeric, rel=1e-2, abs=1e-3), (name, index)
    assert np.abs(embed.get_grad("E")).sum() > 0


def test_a_training_step_reduces_the_loss(nlp):
    docs = make_docs(nlp)
    layer = make_layer(docs)
    rng = np.random.default_rng(1)
    targets = [rng.normal(size=o.shape).astype("f") for o in layer.predict(docs)]
    optimizer = Adam(0.05)
    start = _loss(layer, docs, targets)
    for _ in range(5):
        outputs, backprop = layer.begin_update(docs)
        backprop([2 * (o - t) for o, t in zip(outputs, targets)])
        layer.finish_update(optimizer)
    assert _loss(layer, docs, targets) < start


def test_layer_serializes_with_its_attrs(nlp):
    docs = make_docs(nlp)
    layer = make_layer(docs)
    data = layer.to_bytes()
    fresh = build_nonlocal_features(small_tok2vec(), width=WIDTH)
    fresh.from_bytes(data)
    assert fresh.attrs["labels"] == LABELS
    assert CorpusStatistics.from_dict(fresh.attrs["corpus_statistics"]) == corpus_statistics(docs)
    for a, b in zip(layer.predict(docs), fresh.predict(docs)):
        np.testing.assert_allclose(a, b)


def test_missing_spans_key_is_a_clear_error(nlp):
    docs = make_docs(nlp, key="other")
    layer = build_nonlocal_features(small_tok2vec(), width=WIDTH, spans_key="first_stage")
    configure_nonlocal_features(layer, LABELS)
    layer.initialize(X=docs)  # initialization needs no first-stage spans
    with pytest.raises(ValueError, match=r"'first_stage'.*first stage's predicted entities must be copied"):
        layer.predict(docs)


def test_labels_are_needed_before_initialization(nlp):
    docs = make_docs(nlp)
    with pytest.raises(ValueError, match="label list"):
        build_nonlocal_features(small_tok2vec(), width=WIDTH).initialize(X=docs)
    layer = build_nonlocal_features(small_tok2vec(), width=WIDTH, n_labels=2)
    layer.initialize(X=docs)
    configure_nonlocal_features(layer, LABELS)
    with pytest.raises(ValueError, match="initialized for 2 labels"):
        layer.predict(docs)


def test_layer_as_the_tok2vec_of_the_tag_scorer(nlp):
    docs = make_docs(nlp)
    layer = build_nonlocal_features(small_tok2vec(), width=WIDTH)
    scorer = build_tag_scorer(layer, hidden_width=8)
    assert configure_nonlocal_features(scorer, LABELS, corpus_statistics(docs)) == 1
    scorer.set_dim("nO", 9)
    scorer.set_dim("n_gazetteer", 0)
    n_tokens = sum(len(doc) for doc in docs)
    gazetteer = np.zeros((n_tokens, 0), dtype="i")
    scorer.initialize(X=(docs, gazetteer))
    (scores, transitions), backprop = scorer.begin_update((docs, gazetteer))
    assert scores.shape == (n_tokens, 9)
    backprop((np.ones_like(scores), np.zeros_like(transitions)))
    assert np.abs(layer.get_grad("embeddings")).sum() > 0


# --- UNER reader: whole documents --------------------------------------------


def write_corpus(tmp_path):
    """Two documents; the second sentence has no newdoc and continues doc A."""
    conllu = (
        "# newdoc id = A\n# sent_id = a1\n1\tKim\tKim\tPROPN\tNNP\t_\t2\tnsubj\t_\t_\n2\tleft\tleave\tVERB\tVBD\t_\t0\troot\t_\t_\n\n"
        "# sent_id = a2\n1\tKim\tKim\tPROPN\tNNP\t_\t2\tnsubj\t_\t_\n2\treturned\treturn\tVERB\tVBD\t_\t0\troot\t_\t_\n3\thome\thome\tADV\tRB\t_\t2\tadvmod\t_\t_\n\n"
        "# newdoc id = B\n# sent_id = b1\n1\tRome\tRome\tPROPN\tNNP\t_\t2\tnsubj\t_\t_\n2\twaits\twait\tVERB\tVBZ\t_\t0\troot\t_\t_\n\n"
    )
    iob2 = (
        "# sent_id = b1\n1\tRome\tB-LOC\n2\twaits\tO\n\n"
        "# sent_id = a1\n1\tKim\tB-PER\n2\tleft\tO\n\n"
        "# sent_id = a2\n1\tKim\tB-PER\n2\treturned\tO\n3\thome\tO\n\n"
    )
    (tmp_path / "c.conllu").write_text(conllu, encoding="utf8")
    (tmp_path / "c.iob2").write_text(iob2, encoding="utf8")
    return tmp_path / "c.conllu", tmp_path / "c.iob2"


@pytest.mark.parametrize("dependencies,has_trees", [("given", True), ("predicted", False)])
def test_uner_reader_whole_documents(tmp_path, dependencies, has_trees):
    conllu, iob2 = write_corpus(tmp_path)
    reader = registry.readers.get("spacy_depner.UNERCorpus.v1")
    examples = list(reader(conllu, iob2, dependencies=dependencies, whole_documents=True)(spacy.blank("en")))
    assert [e.predicted.text for e in examples] == ["Kim left Kim returned home", "Rome waits"]
    first = examples[0]
    assert first.predicted.has_annotation("DEP") == has_trees
    assert [s.text for s in first.predicted.sents] == ["Kim left", "Kim returned home"]
    assert [s.text for s in first.reference.sents] == ["Kim left", "Kim returned home"]
    assert [(e.start, e.text, e.label_) for e in first.reference.ents] == [(0, "Kim", "PER"), (2, "Kim", "PER")]
    assert first.reference[3].head.i == 3 and first.reference[2].head.i == 3  # trees per sentence
    assert [(e.text, e.label_) for e in examples[1].reference.ents] == [("Rome", "LOC")]
    # default: one Example per sentence, as before
    assert len(list(reader(conllu, iob2, dependencies=dependencies)(spacy.blank("en")))) == 3
    # limit counts documents with whole_documents
    limited = list(reader(conllu, iob2, dependencies=dependencies, whole_documents=True, limit=1)(spacy.blank("en")))
    assert [e.predicted.text for e in limited] == ["Kim left Kim returned home"]


def test_uner_reader_whole_documents_on_the_tiny_fixture():
    # tiny.conllu: "# newdoc id = doc1" on s1 only; s2 and s3 continue it
    corpus = read_uner_corpus(DATA / "tiny.conllu", DATA / "tiny.iob2")
    assert document_groups(corpus) == [[0, 1, 2]]
    (example,) = corpus_examples(spacy.blank("en").vocab, corpus, "predicted", whole_documents=True)
    assert len(list(example.predicted.sents)) == 3 and len(list(example.reference.sents)) == 3
    assert [(e.text, e.label_) for e in example.reference.ents] == [
        ("John Smith", "PER"),
        ("New York", "LOC"),
        ("Acme Corp", "ORG"),
        ("Paris", "LOC"),
        ("Lake Tahoe", "LOC"),
    ]
    # sentences before any newdoc form a document of their own
    corpus.sentences[0].newdoc_id = None
    corpus.sentences[2].newdoc_id = "doc2"
    assert document_groups(corpus) == [[0, 1], [2]]


# --- the first stage's own labels, and the local label feature ----------------


def test_local_labels_give_each_token_its_first_stage_label_and_position(nlp):
    from spacy_depner.ml.nonlocal_features import doc_document, local_labels

    doc = nlp.make_doc("Kim met the Bank of Rome today")
    doc.spans["first_stage"] = [
        Span(doc, 0, 1, label="PER"),
        Span(doc, 3, 6, label="ORG"),
        Span(doc, 6, 7, label="DATE"),  # not among the labels: O
    ]
    index = {"PER": 1, "LOC": 2, "ORG": 3}
    # value 1 + 4 * k + position, k the label's index, position B 0, I 1, L 2, U 3
    _, spans, _ = doc_document(doc, "first_stage")
    assert local_labels(len(doc), spans, index).tolist() == [4, 0, 0, 9, 10, 11, 0]
    assert local_labels(len(doc), [], index).tolist() == [0] * 7


def test_layer_with_the_local_label_embeds_it_in_a_seventh_column(nlp):
    docs = make_docs(nlp)
    docs[0].spans["first_stage"] = [Span(docs[0], 1, 3, label="ORG")]
    layer = make_layer(docs, local=True)
    n = len(LABELS)
    assert layer.get_dim("nO") == TOK2VEC_WIDTH + 7 * WIDTH
    assert layer.get_param("embeddings").shape == (6 * (n + 1) + 1 + 4 * n, WIDTH)
    table, output = layer.get_param("embeddings"), layer.predict(docs)[0]
    local = output[:, TOK2VEC_WIDTH + 6 * WIDTH :]
    first_local_row = 6 * (n + 1)
    np.testing.assert_allclose(local[0], table[first_local_row])  # O
    np.testing.assert_allclose(local[1], table[first_local_row + 1 + 4 * (ORG - 1) + 0])  # B-ORG
    np.testing.assert_allclose(local[2], table[first_local_row + 1 + 4 * (ORG - 1) + 2])  # L-ORG
    # without it, the layer is the six majority features only
    assert make_layer(docs).get_dim("nO") == TOK2VEC_WIDTH + 6 * WIDTH


def test_first_stage_labels_are_read_from_the_corpus_not_the_component():
    from spacy_depner.ml.corpus_layers import initialize_corpus_layers

    nlp = spacy.blank("en")
    docs = []
    for text, spans in [("Kim saw Rome", [(0, 1, "PERSON"), (2, 3, "GPE")]), ("on Monday", [(1, 2, "DATE")])]:
        doc = nlp.make_doc(text)
        doc.spans["first_stage"] = [Span(doc, s, e, label=label) for s, e, label in spans]
        docs.append(doc)
    own = build_nonlocal_features(small_tok2vec(), width=WIDTH, labels="first_stage")
    assert initialize_corpus_layers(own, ["PER", "LOC"], lambda: iter(docs)) == 1
    assert own.attrs["labels"] == ["DATE", "GPE", "PERSON"]
    component = build_nonlocal_features(small_tok2vec(), width=WIDTH)
    initialize_corpus_layers(component, ["PER", "LOC"], lambda: iter(docs))
    assert component.attrs["labels"] == ["PER", "LOC"]
    listed = build_nonlocal_features(small_tok2vec(), width=WIDTH, labels=["GPE", "PERSON"])
    initialize_corpus_layers(listed, ["PER", "LOC"], lambda: iter(docs))
    assert listed.attrs["labels"] == ["GPE", "PERSON"]
    for doc in docs:
        doc.spans["first_stage"] = []
    empty = build_nonlocal_features(small_tok2vec(), width=WIDTH, labels="first_stage")
    with pytest.raises(ValueError, match="found no first-stage entity"):
        initialize_corpus_layers(empty, ["PER"], lambda: iter(docs))
    with pytest.raises(ValueError, match="labels must be null"):
        build_nonlocal_features(small_tok2vec(), labels="ontonotes")


# --- soft votes ------------------------------------------------------------------


def brute_soft_counts(tokens, votes):
    """The counts of soft votes by their definition (module docstring of
    majority_labels, "Soft votes"), one position and one vote at a time."""
    lowered = [t.lower() for t in tokens]
    token_counts, entity_counts, super_counts = {}, {}, {}

    def add(counts, key, label, weight):
        counts.setdefault(key, {}).setdefault(label, 0.0)
        counts[key][label] += weight

    for i, text in enumerate(lowered):
        by_label = {}
        for start, end, label, p in votes:
            if start <= i < end:
                by_label[label] = by_label.get(label, 0.0) + p
        by_label = {label: min(1.0, w) for label, w in by_label.items() if w > 0}
        for label, w in by_label.items():
            add(token_counts, text, label, w)
        if 1.0 - sum(by_label.values()) > 0:
            add(token_counts, text, "", 1.0 - sum(by_label.values()))
    for start, end, label, p in votes:
        if p <= 0:
            continue
        words = lowered[start:end]
        add(entity_counts, "\x1f".join(words), label, p)
        inside = {"\x1f".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}
        for key in inside - {"\x1f".join(words)}:
            add(super_counts, key, label, p)
    return token_counts, entity_counts, super_counts


def assert_counts_close(found, expected):
    assert set(found) == set(expected)
    for key in expected:
        assert set(found[key]) == set(expected[key]), key
        for label in expected[key]:
            assert found[key][label] == pytest.approx(expected[key][label], abs=1e-12), (key, label)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_soft_vote_counts_are_the_definition_on_random_documents(data):
    from spacy_depner.ml.majority_counts import Words, count_document

    n = data.draw(st.integers(1, 9))
    tokens = data.draw(st.lists(st.sampled_from(["a", "A", "b", "c", "d"]), min_size=n, max_size=n))
    votes = []
    for _ in range(data.draw(st.integers(0, 8))):
        start = data.draw(st.integers(0, n - 1))
        end = data.draw(st.integers(start + 1, min(n, start + 3)))
        votes.append((start, end, data.draw(st.sampled_from(LABELS)), data.draw(st.floats(0.0, 1.0))))
    found = count_document(Words.from_tokens(tokens), [], votes)
    for got, expected in zip(found, brute_soft_counts(tokens, votes)):
        assert_counts_close(got, expected)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_hard_votes_are_soft_votes_of_probability_one(data):
    from spacy_depner.ml.majority_counts import Words, count_document

    n = data.draw(st.integers(1, 9))
    tokens = data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    spans = []
    for _ in range(data.draw(st.integers(0, 5))):
        start = data.draw(st.integers(0, n - 1))
        spans.append((start, data.draw(st.integers(start + 1, min(n, start + 3))), data.draw(st.sampled_from(LABELS))))
    spans = sorted(set(spans))
    words = Words.from_tokens(tokens)
    hard = count_document(words, spans)
    assert hard == count_document(words, spans, [(s, e, label, 1.0) for s, e, label in spans])
    assert all(isinstance(c, int) for counts in hard for by_label in counts.values() for c in by_label.values())
    assert_counts_close(hard[0], brute_soft_counts(tokens, [(s, e, label, 1.0) for s, e, label in spans])[0])


def test_a_missed_occurrence_votes_with_its_marginal():
    # "il-2" twice; the first stage labels the first PER and misses the second.
    text = "IL-2 binds and IL-2 rises"
    spans = [(0, 1, "PER")]
    hard = features(text, spans)
    assert hard[[0, 3], DOC_TOKEN].tolist() == [0, 0]  # PER 1, O 1: the tie goes to O
    votes = [(0, 1, "PER", 0.9), (3, 4, "PER", 0.4), (3, 4, "LOC", 0.1)]
    soft = nonlocal_features(text.split(), spans, LABELS, votes=votes)
    assert soft[[0, 3], DOC_TOKEN].tolist() == [PER, PER]  # PER 1.3 against O 0.1 + 0.5
    assert soft[3, DOC_ENTITY] == PER  # outside an entity: "il-2" as an entity, PER 1.3 against LOC 0.1
    corpus = CorpusStatistics([(text.split(), spans, votes), (text.split(), spans)])
    assert corpus.entities["il-2"] == pytest.approx({"PER": 2.3, "LOC": 0.1})
    assert CorpusStatistics.from_dict(json.loads(json.dumps(corpus.to_dict()))) == corpus


@pytest.mark.parametrize(
    "vote,match",
    [((0, 1, "PER"), "probability"), ((0, 9, "PER", 0.5), "not inside"), ((0, 1, "PER", 1.5), r"\[0, 1\]")],
)
def test_bad_votes_raise_value_error(vote, match):
    with pytest.raises(ValueError, match=match):
        nonlocal_features("a b".split(), [], LABELS, votes=[vote])


def test_the_layer_counts_the_votes_group_and_names_a_missing_one():
    from spacy_depner.ml.nonlocal_features import doc_document, votes_key_of
    from spacy_depner.pipeline.span_groups import write_span_group

    nlp = spacy.blank("en")
    doc = nlp("IL-2 binds and IL-2 rises")
    doc.spans["first_stage"] = [Span(doc, 0, 1, "PER")]
    with pytest.raises(ValueError, match="no soft votes in doc.spans\\['first_stage_votes'\\]"):
        doc_document(doc, "first_stage", votes_key_of("first_stage"))
    write_span_group(doc, "first_stage_votes", [Span(doc, 0, 1, "PER"), Span(doc, 3, 4, "PER")], [0.9, 0.4])
    words, spans, votes = doc_document(doc, "first_stage", "first_stage_votes")
    assert spans == [(0, 1, "PER")]
    assert votes == [(0, 1, "PER", pytest.approx(0.9)), (3, 4, "PER", pytest.approx(0.4))]
    layer = build_nonlocal_features(small_tok2vec(), width=WIDTH, labels=LABELS, votes_key="first_stage_votes")
    configure_nonlocal_features(layer, corpus_statistics=corpus_statistics([doc], votes_key="first_stage_votes"))
    layer.initialize(X=[doc])
    assert layer.attrs["corpus_statistics"]["entities"]["il-2"] == pytest.approx({"PER": 1.3})
    hard = build_nonlocal_features(small_tok2vec(), width=WIDTH, labels=LABELS)
    hard.initialize(X=[doc])
    from spacy_depner.ml.nonlocal_features import feature_rows

    # the missed "IL-2" (token 3): document token-majority PER with soft votes, none with hard ones
    assert feature_rows(layer, [doc])[3, DOC_TOKEN] == PER and feature_rows(hard, [doc])[3, DOC_TOKEN] == 0


# --- leave one out ---------------------------------------------------------------


def random_document(data, soft: bool):
    n = data.draw(st.integers(1, 8))
    tokens = data.draw(st.lists(st.sampled_from(["a", "B", "b", "c"]), min_size=n, max_size=n))
    spans, votes = [], []
    for _ in range(data.draw(st.integers(0, 4))):
        start = data.draw(st.integers(0, n - 1))
        span = (start, data.draw(st.integers(start + 1, min(n, start + 3))), data.draw(st.sampled_from(LABELS[:2])))
        spans.append(span)
        votes.append((*span, data.draw(st.integers(1, 8)) / 8))  # eighths: sums and differences exact
    spans = sorted(set(spans))
    return tokens, spans, (votes if soft else None)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.booleans())
def test_leave_one_out_is_the_corpus_without_the_document(data, soft):
    document = random_document(data, soft)
    others = [random_document(data, soft) for _ in range(data.draw(st.integers(0, 3)))]
    tokens, spans, votes = document
    with_it = CorpusStatistics([document, *others])
    left_out = nonlocal_features(tokens, spans, LABELS, with_it, votes, without_document=True)
    expected = nonlocal_features(tokens, spans, LABELS, CorpusStatistics(others), votes)
    assert left_out.tolist() == expected.tolist()


def test_leave_one_out_in_training_and_with_counted_input(nlp):
    from spacy_depner.ml.nonlocal_features import feature_rows

    docs = [nlp("Kim met Lee"), nlp("Lee left")]
    docs[0].spans["first_stage"] = [Span(docs[0], 0, 1, "PER"), Span(docs[0], 2, 3, "PER")]
    docs[1].spans["first_stage"] = []
    layer = build_nonlocal_features(small_tok2vec(), width=WIDTH, leave_one_out=True)
    configure_nonlocal_features(layer, LABELS, corpus_statistics(docs))
    layer.initialize(X=docs)

    def corpus_entity_value(rows):
        return rows[0, CORPUS_ENTITY] - CORPUS_ENTITY * (len(LABELS) + 1)  # the row's feature value

    # "kim" is a PER entity in the corpus only through the document itself
    assert corpus_entity_value(feature_rows(layer, docs[:1])) == PER  # new text: the counts as they are
    assert corpus_entity_value(feature_rows(layer, docs[:1], counted=True)) == 0  # training: left out
    layer.attrs["input_counted"] = True
    assert (feature_rows(layer, docs[:1]) == feature_rows(layer, docs[:1], counted=True)).all()


def test_dropout_blanks_whole_documents_in_training_only(nlp):
    docs = make_docs(nlp)
    docs[0].spans["first_stage"] = [Span(docs[0], 1, 3, label="ORG")]
    layer = make_layer(docs, local=True, dropout=0.5)
    n, table = len(LABELS), layer.get_param("embeddings")
    none = np.concatenate([table[c * (n + 1)] for c in range(6)] + [table[6 * (n + 1)]])
    kept = [o[:, TOK2VEC_WIDTH:] for o in layer.predict(docs)]  # prediction never drops
    assert not np.allclose(kept[0], none[None, :])
    seen = set()
    np.random.seed(0)
    for _ in range(40):
        outputs, _ = layer(docs, is_train=True)
        for i, output in enumerate(outputs):
            features = output[:, TOK2VEC_WIDTH:]
            dropped = np.allclose(features, none[None, :])
            assert dropped or np.allclose(features, kept[i])  # a document is dropped whole or not at all
            seen.add((i, dropped))
    assert seen == {(0, True), (0, False), (1, True), (1, False)}
    with pytest.raises(ValueError, match="dropout"):
        build_nonlocal_features(small_tok2vec(), dropout=1.0)
