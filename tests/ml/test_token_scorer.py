"""``TokenScorer.v1``: per-token scores with no gazetteer and no transitions,
and ``TagScorer.v1`` built from the same layers."""

import numpy as np
import pytest
from scorer_helpers import assert_gradients_match, copy_weights, make_docs, small_tok2vec
from spacy.util import registry
from thinc.api import NumpyOps

from spacy_depner.ml.tag_scorer import build_tag_scorer
from spacy_depner.ml.token_scorer import build_token_scorer


def make_token_scorer(docs, n_out=5, **config):
    model = build_token_scorer(small_tok2vec(), hidden_width=6, **config)
    model.set_dim("nO", n_out)
    model.initialize(X=docs)
    return model


def test_shapes_registration_and_parameters():
    assert registry.architectures.get("spacy_depner.TokenScorer.v1") is build_token_scorer
    docs = make_docs()
    model = make_token_scorer(docs)
    scores = model.predict(docs)
    assert scores.shape == (sum(len(doc) for doc in docs), 5) and scores.dtype == np.float32
    names = {name for node in model.walk() for name in node.param_names}
    assert "transitions" not in names and "gazetteer_embeddings" not in names


def test_tag_scorer_without_gazetteer_is_the_token_scorer_plus_transitions():
    docs = make_docs()
    n_tokens = sum(len(doc) for doc in docs)
    tokens = make_token_scorer(docs)
    tags = build_tag_scorer(small_tok2vec(), hidden_width=6)
    tags.set_dim("nO", 5)
    tags.set_dim("n_gazetteer", 0)
    gazetteer = np.zeros((n_tokens, 0), dtype="i")
    tags.initialize(X=(docs, gazetteer))
    assert [node.name for node in tags.walk()][1:] == [node.name for node in tokens.walk()][1:]
    copy_weights(tags, tokens)
    scores, transitions = tags.predict((docs, gazetteer))
    assert transitions.shape == (6, 6)
    np.testing.assert_array_equal(tokens.predict(docs), scores)


def _loss(model, docs, weights):
    return float((model.predict(docs).astype(np.float64) * weights).sum())


def test_gradients_match_finite_differences():
    docs = make_docs()
    model = make_token_scorer(docs, n_out=3)
    weights = np.random.default_rng(0).normal(size=(sum(len(doc) for doc in docs), 3))
    scores, backprop = model.begin_update(docs)
    assert backprop(weights.astype("f")) is docs
    embed = next(node for node in model.walk() if node.name == "hashembed")
    output = model.get_ref("output_layer")
    assert_gradients_match(model, lambda: _loss(model, docs, weights), ((output, "W"), (output, "b"), (embed, "E")))


def test_dependency_features():
    parsed = make_docs(parsed=True)
    model = make_token_scorer(parsed, dependency_features=True, dependency_width=4)
    assert model.attrs["dependency_features"] and isinstance(model.ops, NumpyOps)
    assert model.predict(parsed).shape == (sum(len(doc) for doc in parsed), 5)
    with pytest.raises(ValueError, match="needs dependency trees"):
        model.predict(make_docs())
