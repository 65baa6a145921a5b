"""Endpoint-factorised span scores (``SpanScorer.v1``, ``MentionScorer.v1``):
the numba and the ``model.ops`` implementations against a reference written
from the formula, the mention scorer against the span scorer, gradients, and
the dependency-parse check."""

import numpy as np
import pytest
from scorer_helpers import VOCAB, assert_gradients_match, batch_spans, copy_weights, make_docs, small_tok2vec
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import NumpyOps, Ops

from spacy_depner.doc_arrays.trees import require_parse
from spacy_depner.ml.pooled_span_scorer import build_pooled_span_scorer
from spacy_depner.ml.span_scorer import (
    assemble_span_scores,
    build_mention_scorer,
    build_span_scorer,
    numba_span_scores,
    xp_span_scores,
)


def reference_span_scores(token_scores, spans, width_scores, o):
    """score[s, :o] = O[a]; score[s, o+y] = begin[a, y] + end[b, y] +
    sum_{t=a..b} inside[t, y] + width[min(b - a, W - 1), y], in float64."""
    n_widths, T = width_scores.shape
    x = token_scores.astype(np.float64)
    out = np.zeros((len(spans), o + T))
    for s, (a, b) in enumerate(spans):
        out[s, :o] = x[a, :o]
        out[s, o:] = x[a, o : o + T] + x[b, o + T : o + 2 * T] + x[a : b + 1, o + 2 * T :].sum(0)
        out[s, o:] += width_scores[min(b - a, n_widths - 1)]
    return out


def reference_gradients(d_scores, spans, n_tokens, n_widths, o):
    T = d_scores.shape[1] - o
    d_tokens = np.zeros((n_tokens, o + 3 * T))
    d_widths = np.zeros((n_widths, T))
    for s, (a, b) in enumerate(spans):
        g = d_scores[s, o:].astype(np.float64)
        d_tokens[a, :o] += d_scores[s, :o]
        d_tokens[a, o : o + T] += g
        d_tokens[b, o + T : o + 2 * T] += g
        d_tokens[a : b + 1, o + 2 * T :] += g
        d_widths[min(b - a, n_widths - 1)] += g
    return d_tokens, d_widths


def random_problem(seed, n_tokens, n_spans, T, n_widths, o):
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, max(n_tokens, 1), n_spans)
    ends = np.minimum(starts + rng.integers(0, 12, n_spans), n_tokens - 1)
    spans = np.stack([starts, ends], axis=1).astype(np.int64).reshape(-1, 2)
    token_scores = rng.normal(size=(n_tokens, o + 3 * T)).astype("f")
    width_scores = rng.normal(size=(n_widths, T)).astype("f")
    d_scores = rng.normal(size=(n_spans, o + T)).astype("f")
    return token_scores, spans, width_scores, d_scores


@pytest.mark.parametrize("o", [0, 1])
@pytest.mark.parametrize("seed,n_tokens,n_spans,T,n_widths", [(0, 300, 1000, 4, 8), (1, 7, 20, 1, 1), (2, 0, 0, 3, 4)])
def test_numba_and_ops_implementations_match_the_formula(o, seed, n_tokens, n_spans, T, n_widths):
    token_scores, spans, width_scores, d_scores = random_problem(seed, n_tokens, n_spans, T, n_widths, o)
    expected = reference_span_scores(token_scores, spans, width_scores, o)
    d_expected = reference_gradients(d_scores, spans, n_tokens, n_widths, o)
    results = []
    # NumpyOps: the numba kernels; the base Ops (numpy arrays): the xp code that runs on any device
    for implementation, ops in ((numba_span_scores, NumpyOps()), (xp_span_scores, Ops())):
        scores, backprop = implementation(ops, token_scores, spans, width_scores, o)
        d_tokens, d_widths = backprop(d_scores)
        assert scores.dtype == d_tokens.dtype == d_widths.dtype == np.float32
        assert scores.shape == (n_spans, o + T) and d_tokens.shape == token_scores.shape
        np.testing.assert_allclose(scores, expected, rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(d_tokens, d_expected[0], rtol=1e-6, atol=1e-5)
        np.testing.assert_allclose(d_widths, d_expected[1], rtol=1e-6, atol=1e-5)
        results.append((scores, d_tokens, d_widths))
    for numba_array, xp_array in zip(*results):  # the same float32 numbers
        np.testing.assert_allclose(numba_array, xp_array, rtol=1e-6, atol=0)


def make_scorer(build, n_out, docs, **config):
    model = build(small_tok2vec(), hidden_width=6, width_buckets=2, **config)
    model.set_dim("nO", n_out)
    model.initialize(X=(docs, batch_spans(docs)))
    return model


def test_registration_and_parameters():
    assert registry.architectures.get("spacy_depner.MentionScorer.v1") is build_mention_scorer
    docs = make_docs()
    mentions = make_scorer(build_mention_scorer, 3, docs)
    assert not any(node.has_param("transitions") for node in mentions.walk())
    assert mentions.get_param("width_scores").shape == (2, 3)
    assert mentions.get_ref("output_layer").get_dim("nO") == 3 * 3
    spans = make_scorer(build_span_scorer, 4, docs)
    assert spans.get_param("transitions").shape == (5, 5)
    assert spans.get_ref("output_layer").get_dim("nO") == 1 + 3 * 3


def test_mention_scores_are_the_label_columns_of_the_span_scorer():
    docs = make_docs()
    spans = batch_spans(docs)
    span_scorer = make_scorer(build_span_scorer, 4, docs)
    mention_scorer = make_scorer(build_mention_scorer, 3, docs)
    copy_weights(span_scorer, mention_scorer, output_rows=slice(1, None))
    span_scorer.set_param("width_scores", span_scorer.get_param("width_scores") + 0.5)
    mention_scorer.set_param("width_scores", span_scorer.get_param("width_scores").copy())
    (scores, transitions), _ = span_scorer((docs, spans), is_train=False)
    mentions = mention_scorer.predict((docs, spans))
    assert scores.shape == (len(spans), 4) and transitions.shape == (5, 5) and mentions.shape == (len(spans), 3)
    np.testing.assert_allclose(mentions, scores[:, 1:], rtol=1e-6, atol=1e-6)
    # and both follow the formula from the per-token scores
    token_scores = span_scorer.layers[0].predict(docs)
    expected = reference_span_scores(token_scores, spans, span_scorer.get_param("width_scores"), 1)
    np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-5)


def _loss(model, inputs, weights):
    return float((model.predict(inputs).astype(np.float64) * weights).sum())


@pytest.mark.parametrize("ops", [NumpyOps(), Ops()], ids=["numba", "xp"])
def test_mention_scorer_gradients_match_finite_differences(ops):
    docs = make_docs()
    inputs = (docs, batch_spans(docs))
    model = make_scorer(build_mention_scorer, 2, docs)
    model.ops = ops  # the model's own forward: numba kernels on NumpyOps, ops arrays otherwise
    model.set_param("width_scores", np.arange(4, dtype="f").reshape(2, 2) / 4)
    weights = np.random.default_rng(0).normal(size=(len(inputs[1]), 2))
    scores, backprop = model.begin_update(inputs)
    assert backprop(weights.astype("f")) is inputs
    embed = next(node for node in model.walk() if node.name == "hashembed")
    output = model.get_ref("output_layer")
    assert_gradients_match(
        model,
        lambda: _loss(model, inputs, weights),
        ((model, "width_scores"), (output, "W"), (output, "b"), (embed, "E")),
    )


def test_span_scorer_backprop_is_unchanged_by_the_backend():
    docs = make_docs()
    inputs = (docs, batch_spans(docs))
    gradients, first = [], None
    for ops in (NumpyOps(), Ops()):
        model = make_scorer(build_span_scorer, 3, docs)
        if first is not None:
            copy_weights(first, model)
        else:
            first = model
        model.ops = ops
        (scores, transitions), backprop = model.begin_update(inputs)
        d_scores = np.linspace(-1, 1, scores.size, dtype="f").reshape(scores.shape)
        backprop((d_scores, np.ones_like(transitions)))
        gradients.append(
            [scores] + [node.get_grad(n) for node in model.walk() for n in node.param_names if node.has_grad(n)]
        )
    assert len(gradients[0]) == len(gradients[1])
    for a, b in zip(*gradients):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_dependency_features_need_a_parse():
    parsed = make_docs(parsed=True)
    model = make_scorer(build_mention_scorer, 2, parsed, dependency_features=True)
    assert model.attrs["dependency_features"]
    assert model.predict((parsed, batch_spans(parsed))).shape == (len(batch_spans(parsed)), 2)
    unparsed = make_docs()
    with pytest.raises(ValueError, match="'dependency_features' needs dependency trees"):
        model.predict((unparsed, batch_spans(unparsed)))
    with pytest.raises(ValueError, match=r"'my_ner' needs dependency trees.*Put a parser before 'my_ner'"):
        require_parse(unparsed, "my_ner")
    require_parse(parsed + [Doc(VOCAB, words=[])], "my_ner")  # parsed and empty Docs pass


@pytest.mark.parametrize("dependency_features", [False, True])
def test_pooled_span_scorer_runs_on_any_ops(dependency_features):
    docs = make_docs(parsed=True)
    spans = batch_spans(docs)
    model = build_pooled_span_scorer(small_tok2vec(), hidden_width=6, dependency_features=dependency_features)
    model.set_dim("nO", 3)
    model.initialize(X=(docs, spans))
    results = []
    for ops in (NumpyOps(), Ops()):
        model.ops = ops
        (scores, transitions), backprop = model.begin_update((docs, spans))
        assert scores.shape == (len(spans), 3) and transitions.shape == (4, 4)
        backprop((np.ones_like(scores), np.zeros_like(transitions)))
        results.append(scores)
    np.testing.assert_array_equal(*results)


def reference_endpoint_products(token_scores, spans, first, T, d):
    """sum_k u[a, y, k] * v[b, y, k], u and v the label-major d-wide vectors
    after column ``first``, in float64; and its gradient for d_products."""
    x = token_scores.astype(np.float64)
    u = x[:, first : first + T * d].reshape(-1, T, d)
    v = x[:, first + T * d :].reshape(-1, T, d)
    return np.array([[u[a, y] @ v[b, y] for y in range(T)] for a, b in spans]).reshape(len(spans), T)


@pytest.mark.parametrize("o", [0, 1])
@pytest.mark.parametrize("seed,n_tokens,n_spans,T,d", [(0, 200, 700, 3, 4), (1, 5, 15, 1, 1), (2, 0, 0, 2, 3)])
def test_endpoint_interactions_match_the_formula_with_either_backend(o, seed, n_tokens, n_spans, T, d):
    rng = np.random.default_rng(seed)
    base, spans, width_scores, d_scores = random_problem(seed, n_tokens, n_spans, T, 2, o)
    token_scores = np.concatenate([base, rng.normal(size=(n_tokens, 2 * T * d)).astype("f")], axis=1)
    first = o + 3 * T
    expected = reference_span_scores(base, spans, width_scores, o)
    expected[:, o:] += reference_endpoint_products(token_scores, spans, first, T, d)
    # the gradient of sum(d_scores * scores), written from the formula
    d_expected = np.zeros(token_scores.shape)
    d_expected[:, :first] = reference_gradients(d_scores, spans, n_tokens, 2, o)[0]
    for s, (a, b) in enumerate(spans):
        for y in range(T):
            u, v = first + y * d, first + (T + y) * d
            d_expected[a, u : u + d] += d_scores[s, o + y] * token_scores[b, v : v + d]
            d_expected[b, v : v + d] += d_scores[s, o + y] * token_scores[a, u : u + d]
    results = []
    for ops in (NumpyOps(), Ops()):
        scores, backprop = assemble_span_scores(ops, token_scores, spans, width_scores, o, d)
        d_tokens, _ = backprop(d_scores)
        assert scores.dtype == d_tokens.dtype == np.float32 and d_tokens.shape == token_scores.shape
        np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(d_tokens, d_expected, rtol=1e-5, atol=1e-4)
        results.append((scores, d_tokens))
    for numba_array, xp_array in zip(*results):
        np.testing.assert_allclose(numba_array, xp_array, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ops", [NumpyOps(), Ops()], ids=["numba", "xp"])
def test_endpoint_width_widens_the_output_and_its_gradients_match_finite_differences(ops):
    docs = make_docs()
    inputs = (docs, batch_spans(docs))
    model = make_scorer(build_mention_scorer, 2, docs, endpoint_width=3)
    assert model.get_ref("output_layer").get_dim("nO") == (3 + 2 * 3) * 2
    model.ops = ops
    weights = np.random.default_rng(1).normal(size=(len(inputs[1]), 2))
    without = make_scorer(build_mention_scorer, 2, docs)
    assert not np.allclose(model.predict(inputs)[:, :1], 0) and without.get_dim("endpoint_width") == 0
    _, backprop = model.begin_update(inputs)
    backprop(weights.astype("f"))
    output = model.get_ref("output_layer")
    assert_gradients_match(model, lambda: _loss(model, inputs, weights), ((output, "W"), (output, "b")))
    with pytest.raises(ValueError, match="endpoint_width must be 0"):
        build_mention_scorer(small_tok2vec(), endpoint_width=-1)


def test_endpoint_interaction_is_the_dot_product_of_the_end_tokens_vectors():
    docs = make_docs()
    spans = batch_spans(docs)
    model = make_scorer(build_span_scorer, 3, docs, endpoint_width=2)  # T = 2, d = 2
    token_scores = model.layers[0].predict(docs)
    (scores, _), _ = model((docs, spans), is_train=False)
    base = reference_span_scores(token_scores[:, : 1 + 3 * 2], spans, model.get_param("width_scores"), 1)
    u, v = token_scores[:, 7:11].reshape(-1, 2, 2), token_scores[:, 11:15].reshape(-1, 2, 2)
    pairs = np.array([[u[a, y] @ v[b, y] for y in range(2)] for a, b in spans])
    np.testing.assert_allclose(scores[:, 1:], base[:, 1:] + pairs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores[:, 0], base[:, 0], rtol=1e-6)
