"""Thinc span scorers for the segment-lattice and nested-mention components.

``spacy_depner.SpanScorer.v1`` maps ``(docs, spans)`` to ``(span_scores,
transitions)``:

    docs: List[Doc] (B docs, N tokens in all)
    spans: Ints2d (S, 2), first and last token of each span in batch coordinates
    span_scores: Floats2d (S, 1 + T), column 0 the O score, then one per label
    transitions: Floats2d (T + 2, T + 2), label-transition scores (eq. 6 of
        Jie et al. 2017), index T + 1 the document boundary

``spacy_depner.MentionScorer.v1`` maps ``(docs, spans)`` to the mention
scores ``Floats2d (S, T)``, one per span and label: the same scores without
the O column, and no transitions.

A tok2vec embeds the tokens; optionally each token's vector is joined with its
head's vector and an embedding of its dependency label (Ling & Weld 2012); a
maxout layer and a linear layer give per-token begin/end/inside (and O) scores,
from which ``assemble_span_scores`` builds every span's score in O(1)
(endpoint-factorised, plus a learnt score per span-width bucket; formula in
``span_kernels``). The models know nothing of the lattice or its dynamic program.
"""

from typing import Callable, List, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, NumpyOps, Ops, chain
from thinc.types import Floats2d, Ints2d

from . import span_kernels
from .dependency_features import token_encoder
from .token_scorer import maxout_output


@registry.architectures("spacy_depner.SpanScorer.v1")
def build_span_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 2,
    width_buckets: int = 8,
    dependency_features: bool = False,
    dependency_width: int = 32,
    endpoint_width: int = 0,
) -> Model[Tuple[List[Doc], Ints2d], Tuple[Floats2d, Floats2d]]:
    """Span-label and transition scores over any spaCy tok2vec; ``nO`` (1 +
    number of labels) is set by the component.

    width_buckets: spans of width >= width_buckets share the last width score.
    dependency_features: join each token with its head's vector and its
        dependency label embedding (needs a parse on every Doc).
    endpoint_width: d > 0 adds to each span's label score the dot product of
        a d-wide start vector of its first token and end vector of its last
        token, per label (formula in ``span_kernels``); 0: none.
    """
    return _build_endpoint_scorer(
        "span_scorer",
        span_scorer_forward,
        init_span_scorer,
        ("width_scores", "transitions"),
        tok2vec,
        hidden_width,
        maxout_pieces,
        width_buckets,
        dependency_features,
        dependency_width,
        endpoint_width,
    )


@registry.architectures("spacy_depner.MentionScorer.v1")
def build_mention_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 2,
    width_buckets: int = 8,
    dependency_features: bool = False,
    dependency_width: int = 32,
    endpoint_width: int = 0,
) -> Model[Tuple[List[Doc], Ints2d], Floats2d]:
    """Mention scores (S, T) over any spaCy tok2vec, scored as the label
    columns of ``SpanScorer``; ``nO`` (T, the number of labels) is set by the
    component. Hyperparameters as ``SpanScorer``."""
    return _build_endpoint_scorer(
        "mention_scorer",
        mention_scorer_forward,
        init_mention_scorer,
        ("width_scores",),
        tok2vec,
        hidden_width,
        maxout_pieces,
        width_buckets,
        dependency_features,
        dependency_width,
        endpoint_width,
    )


def _build_endpoint_scorer(
    name: str,
    forward: Callable,
    init: Callable,
    params: Tuple[str, ...],
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int,
    maxout_pieces: int,
    width_buckets: int,
    dependency_features: bool,
    dependency_width: int,
    endpoint_width: int,
) -> Model:
    if width_buckets < 1:
        raise ValueError("width_buckets must be at least 1")
    if endpoint_width < 0:
        raise ValueError(f"endpoint_width must be 0 (no endpoint interaction) or more, not {endpoint_width}")
    maxout, output_layer = maxout_output(hidden_width, maxout_pieces)
    token_scores = chain(token_encoder(tok2vec, dependency_features, dependency_width), maxout, output_layer)
    return Model(
        name,
        forward,
        init=init,
        layers=[token_scores],
        dims={"nO": None, "width_buckets": width_buckets, "endpoint_width": endpoint_width},
        params={param: None for param in params},
        refs={"tok2vec": tok2vec, "output_layer": output_layer},
        attrs={"dependency_features": dependency_features},
    )


def _init_endpoint_scorer(model: Model, X, n_labels: int, n_outside: int) -> None:
    """Per-token output width n_outside + (3 + 2 * endpoint_width) * n_labels,
    the layers, and the width scores."""
    if not model.get_ref("output_layer").has_dim("nO"):
        model.get_ref("output_layer").set_dim("nO", n_outside + (3 + 2 * model.get_dim("endpoint_width")) * n_labels)
    model.layers[0].initialize(X=X[0] if X is not None else None)
    model.set_param("width_scores", model.ops.alloc2f(model.get_dim("width_buckets"), n_labels))


def init_span_scorer(model: Model, X=None, Y=None) -> Model:
    """nO (= 1 + number of labels) must be set before initialization."""
    n_labels = model.get_dim("nO") - 1
    _init_endpoint_scorer(model, X, n_labels, n_outside=1)
    model.set_param("transitions", model.ops.alloc2f(n_labels + 2, n_labels + 2))
    return model


def init_mention_scorer(model: Model, X=None, Y=None) -> Model:
    """nO (= number of labels) must be set before initialization."""
    _init_endpoint_scorer(model, X, model.get_dim("nO"), n_outside=0)
    return model


def span_scorer_forward(model: Model, inputs, is_train: bool):
    scores, backprop_scores = _endpoint_forward(model, inputs, is_train, n_outside=1)

    def backprop(d_outputs):
        d_scores, d_transitions = d_outputs
        model.inc_grad("transitions", model.ops.asarray2f(d_transitions, dtype="f"))
        return backprop_scores(d_scores)

    return (scores, model.get_param("transitions").copy()), backprop


def mention_scorer_forward(model: Model, inputs, is_train: bool):
    return _endpoint_forward(model, inputs, is_train, n_outside=0)


def _endpoint_forward(model: Model, inputs, is_train: bool, n_outside: int):
    docs, spans = inputs
    token_scores, backprop_tokens = model.layers[0](docs, is_train)
    scores, backprop_spans = assemble_span_scores(
        model.ops, token_scores, spans, model.get_param("width_scores"), n_outside, model.get_dim("endpoint_width")
    )

    def backprop(d_scores):
        d_tokens, d_widths = backprop_spans(d_scores)
        model.inc_grad("width_scores", d_widths)
        backprop_tokens(d_tokens)
        return inputs

    return scores, backprop


def assemble_span_scores(
    ops: Ops, token_scores: Floats2d, spans: Ints2d, width_scores: Floats2d, n_outside: int, endpoint_width: int = 0
):
    """Span scores (S, n_outside + T) from token scores (N, n_outside + (3 +
    2d)T) with d = endpoint_width, spans (S, 2) and width scores (W, T), and
    their backprop, d_scores -> (d_token_scores, d_width_scores); formula in
    ``span_kernels``. The numba kernels on NumpyOps (the same numbers),
    ``ops`` array operations otherwise."""
    numba = isinstance(ops, NumpyOps)
    if endpoint_width == 0:
        return (numba_span_scores if numba else xp_span_scores)(ops, token_scores, spans, width_scores, n_outside)
    T, first = width_scores.shape[1], n_outside + 3 * width_scores.shape[1]
    # the numba kernel reads only the first columns, so it takes the whole array (no copy)
    base = token_scores if numba else token_scores[:, :first]
    scores, backprop_base = (numba_span_scores if numba else xp_span_scores)(ops, base, spans, width_scores, n_outside)
    products, backprop_products = (numba_endpoint_products if numba else xp_endpoint_products)(
        ops, token_scores, spans, first, T, endpoint_width
    )
    scores[:, n_outside:] += products

    def backprop(d_scores):
        d_base, d_widths = backprop_base(d_scores)
        d_pairs = backprop_products(ops.xp.ascontiguousarray(d_scores[:, n_outside:], dtype="float32"))
        return ops.xp.concatenate([d_base, d_pairs], axis=1), d_widths

    return scores, backprop


def numba_endpoint_products(ops: NumpyOps, token_scores, spans, first: int, T: int, d: int):
    """The endpoint interactions (S, T) of ``span_kernels.endpoint_products``
    and their backprop, d_products -> d of the 2Td columns from ``first``."""
    token_scores = np.ascontiguousarray(token_scores)
    spans = np.ascontiguousarray(spans, dtype=np.int64)
    products = span_kernels.endpoint_products(token_scores, spans, first, T, d)
    return products, lambda d_products: span_kernels.endpoint_products_backward(
        d_products, token_scores, spans, first, T, d
    )


def xp_endpoint_products(ops: Ops, token_scores, spans, first: int, T: int, d: int):
    """``numba_endpoint_products`` with ``ops`` array operations (any device):
    gathers of the start and end vectors, scatter-adds back."""
    xp = ops.xp
    spans = ops.asarray2i(spans)
    starts, ends = xp.ascontiguousarray(spans[:, 0]), xp.ascontiguousarray(spans[:, 1])
    start_vectors = token_scores[:, first : first + T * d]
    end_vectors = token_scores[:, first + T * d : first + 2 * T * d]
    at_starts = xp.take(start_vectors, starts, axis=0).reshape(-1, T, d)
    at_ends = xp.take(end_vectors, ends, axis=0).reshape(-1, T, d)
    products = (at_starts * at_ends).sum(axis=2).astype("float32")

    def backprop(d_products):
        g = d_products.reshape(-1, T, 1)
        d_starts, d_ends = ops.alloc2f(token_scores.shape[0], T * d), ops.alloc2f(token_scores.shape[0], T * d)
        ops.scatter_add(d_starts, starts, xp.ascontiguousarray((g * at_ends).reshape(-1, T * d), dtype="float32"))
        ops.scatter_add(d_ends, ends, xp.ascontiguousarray((g * at_starts).reshape(-1, T * d), dtype="float32"))
        return xp.concatenate([d_starts, d_ends], axis=1)

    return products, backprop


def numba_span_scores(ops: NumpyOps, token_scores, spans, width_scores, n_outside: int):
    """``assemble_span_scores`` with the numba kernels (CPU arrays)."""
    spans = np.ascontiguousarray(spans, dtype=np.int64)
    n_tokens, n_widths = token_scores.shape[0], width_scores.shape[0]
    scores = span_kernels.assemble_span_scores(
        np.ascontiguousarray(token_scores), spans, np.ascontiguousarray(width_scores), n_outside
    )

    def backprop(d_scores):
        d_scores = np.ascontiguousarray(d_scores, dtype=np.float32)
        return span_kernels.assemble_span_scores_backward(d_scores, spans, n_tokens, n_widths, n_outside)

    return scores, backprop


def xp_span_scores(ops: Ops, token_scores, spans, width_scores, n_outside: int):
    """``assemble_span_scores`` with ``ops`` array operations (any device):
    prefix sums of the inside scores in float64, gathers at the span ends,
    scatter-adds and a reverse cumulative sum back."""
    xp, o = ops.xp, n_outside
    n_tokens = token_scores.shape[0]
    n_widths, T = width_scores.shape
    spans = ops.asarray2i(spans)
    starts, ends = xp.ascontiguousarray(spans[:, 0]), xp.ascontiguousarray(spans[:, 1])
    after_ends = ends + 1
    widths = xp.minimum(ends - starts, n_widths - 1)
    prefix = xp.zeros((n_tokens + 1, T), dtype="float64")
    xp.cumsum(token_scores[:, o + 2 * T :], axis=0, dtype="float64", out=prefix[1:])
    at_starts = xp.take(token_scores, starts, axis=0)
    total = (at_starts[:, o : o + T] + xp.take(token_scores[:, o + T : o + 2 * T], ends, axis=0)).astype("float64")
    total += xp.take(prefix, after_ends, axis=0)
    total -= xp.take(prefix, starts, axis=0)
    total += xp.take(width_scores, widths, axis=0)
    scores = ops.alloc2f(spans.shape[0], o + T)
    scores[:, :o] = at_starts[:, :o]
    scores[:, o:] = total

    def backprop(d_scores):
        d_scores = xp.ascontiguousarray(d_scores, dtype="float32")
        d_labels = xp.ascontiguousarray(d_scores[:, o:])
        d_tokens = ops.alloc2f(n_tokens, o + 3 * T)
        # O (if any), begin and end columns of d_tokens: the span gradients scattered to a or b
        for column, d_columns, at in ((0, d_scores[:, :o], starts), (o, d_labels, starts), (o + T, d_labels, ends)):
            if d_columns.shape[1]:
                part = ops.alloc2f(n_tokens, d_columns.shape[1])
                ops.scatter_add(part, at, xp.ascontiguousarray(d_columns))
                d_tokens[:, column : column + d_columns.shape[1]] = part
        d_widths = ops.alloc2f(n_widths, T)
        ops.scatter_add(d_widths, widths, d_labels)
        # d prefix[b + 1] += g and d prefix[a] -= g span by span, in float64
        rows = xp.stack([after_ends, starts], axis=1).reshape(-1, 1) * T + xp.arange(T, dtype="int32")
        signed = xp.stack([d_labels, -d_labels], axis=1).reshape(-1)
        d_prefix = xp.bincount(rows.reshape(-1), weights=signed, minlength=(n_tokens + 1) * T).reshape(-1, T)
        d_tokens[:, o + 2 * T :] = xp.cumsum(d_prefix[:0:-1], axis=0)[::-1]
        return d_tokens, d_widths

    return scores, backprop
