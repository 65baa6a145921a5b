"""Span scorer built from spaCy's own span layers, for comparison with the
endpoint-factorised ``SpanScorer``.

``spacy_depner.PooledSpanScorer.v1`` has the same interface as
``spacy_depner.SpanScorer.v1``: ``(docs, spans) -> (span_scores (S, 1 + T),
transitions (T + 2, T + 2))``. Each span's token vectors are gathered with
spaCy's ``extract_spans``, pooled (first, last, mean, max: spaCy's
``build_mean_max_reducer``), passed through a maxout layer, and a linear
layer gives the O score and one score per label. Its cost per span grows with
the span's length, whereas ``SpanScorer`` costs O(1) per span.
"""

from typing import List, Tuple

import numpy as np
from spacy.ml.extract_spans import extract_spans
from spacy.ml.models.spancat import build_mean_max_reducer
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, list2ragged
from thinc.types import Floats2d, Ints2d, Ragged

from .dependency_features import token_encoder


@registry.architectures("spacy_depner.PooledSpanScorer.v1")
def build_pooled_span_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    dependency_features: bool = False,
    dependency_width: int = 32,
) -> Model[Tuple[List[Doc], Ints2d], Tuple[Floats2d, Floats2d]]:
    """Span-label and transition scores from pooled span vectors over any spaCy tok2vec."""
    encoder = token_encoder(tok2vec, dependency_features, dependency_width, join=list2ragged)
    output_layer = Linear()
    span_layers = chain(extract_spans(), build_mean_max_reducer(hidden_width), output_layer)
    return Model(
        "pooled_span_scorer",
        pooled_span_scorer_forward,
        init=init_pooled_span_scorer,
        layers=[encoder, span_layers],
        dims={"nO": None},
        params={"transitions": None},
        refs={"tok2vec": tok2vec, "output_layer": output_layer},
        attrs={"dependency_features": dependency_features},
    )


def init_pooled_span_scorer(model: Model, X=None, Y=None) -> Model:
    """nO (= 1 + number of labels) must be set before initialization."""
    n_labels = model.get_dim("nO") - 1
    model.get_ref("output_layer").set_dim("nO", 1 + n_labels)
    encoder, span_layers = model.layers
    encoder.initialize(X=X[0] if X is not None else None)
    if X is not None and X[0]:
        docs = X[0]
        spans = np.stack([np.arange(len(docs[0])), np.arange(len(docs[0]))], axis=1)
        span_layers.initialize(X=_span_input(model, encoder.predict(docs[:1]), [len(docs[0])], spans))
    else:
        span_layers.initialize()
    model.set_param("transitions", model.ops.alloc2f(n_labels + 2, n_labels + 2))
    return model


def _span_input(model: Model, vectors, lengths: List[int], spans: Ints2d) -> Tuple[Ragged, Ragged]:
    """(token vectors as a Ragged per doc, spans as local [start, end) per doc),
    on model.ops."""
    xp = model.ops.xp
    spans = model.ops.asarray2i(spans)
    lengths_array = model.ops.asarray1i(lengths)
    if not isinstance(vectors, Ragged):
        vectors = Ragged(vectors, lengths_array)
    doc_offsets = xp.concatenate([xp.zeros(1, dtype="int32"), xp.cumsum(lengths_array, dtype="int32")])
    doc_of_span = xp.searchsorted(doc_offsets, spans[:, 0], side="right") - 1
    local = xp.stack([spans[:, 0], spans[:, 1] + 1], axis=1) - doc_offsets[doc_of_span, None]
    spans_per_doc = (
        xp.bincount(doc_of_span, minlength=len(lengths)) if len(spans) else xp.zeros(len(lengths), dtype="int32")
    )
    return vectors, Ragged(model.ops.asarray2i(local), model.ops.asarray1i(spans_per_doc))


def pooled_span_scorer_forward(model: Model, inputs, is_train: bool):
    docs, spans = inputs
    encoder, span_layers = model.layers
    if spans.shape[0] == 0:
        n_labels = model.get_dim("nO") - 1
        return (model.ops.alloc2f(0, 1 + n_labels), model.get_param("transitions").copy()), lambda d_outputs: inputs
    vectors, backprop_encoder = encoder(docs, is_train)
    lengths = [len(doc) for doc in docs]
    as_ragged = not isinstance(vectors, Ragged)
    span_input = _span_input(model, vectors, lengths, spans)
    scores, backprop_spans = span_layers(span_input, is_train)

    def backprop(d_outputs):
        d_scores, d_transitions = d_outputs
        model.inc_grad("transitions", model.ops.asarray2f(d_transitions, dtype="f"))
        d_vectors, _ = backprop_spans(model.ops.asarray2f(d_scores))
        backprop_encoder(d_vectors.dataXd if as_ragged else d_vectors)
        return inputs

    return (scores, model.get_param("transitions").copy()), backprop
