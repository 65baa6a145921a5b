"""Thinc span scorer for the segment-lattice components.

``spacy_depner.SpanScorer.v1`` maps ``(docs, spans)`` to ``(span_scores,
transitions)``:

    docs: List[Doc] (B docs, N tokens in all)
    spans: Ints2d (S, 2), first and last token of each span in batch coordinates
    span_scores: Floats2d (S, 1 + T), column 0 the O score, then one per label
    transitions: Floats2d (T + 2, T + 2), label-transition scores (eq. 6 of
        Jie et al. 2017), index T + 1 the document boundary

A tok2vec embeds the tokens; optionally each token's vector is joined with its
head's vector and an embedding of its dependency label (Ling & Weld 2012); a
maxout layer and a linear layer give per-token begin/end/inside/O scores, from
which ``span_kernels`` builds every span's score in O(1) (endpoint-factorised,
plus a learnt score per span-width bucket). The model knows nothing of the
lattice or its dynamic program.
"""
from typing import List, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import HashEmbed, Linear, Maxout, Model, chain, list2array
from thinc.types import Floats2d, Ints2d

from .span_kernels import assemble_span_scores, assemble_span_scores_backward


@registry.architectures("spacy_depner.SpanScorer.v1")
def build_span_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 2,
    width_buckets: int = 8,
    dependency_features: bool = False,
    dependency_width: int = 32,
) -> Model[Tuple[List[Doc], Ints2d], Tuple[Floats2d, Floats2d]]:
    """Span-label and transition scores over any spaCy tok2vec.

    width_buckets: spans of width >= width_buckets share the last width score.
    dependency_features: join each token with its head's vector and its
        dependency label embedding (needs a parse on every Doc).
    """
    if width_buckets < 1:
        raise ValueError("width_buckets must be at least 1")
    encoder = with_dependency_features(tok2vec, dependency_width) if dependency_features else chain(tok2vec, list2array())
    output_layer = Linear()
    token_scores = chain(encoder, Maxout(nO=hidden_width, nP=maxout_pieces, normalize=True), output_layer)
    model = Model(
        "span_scorer",
        span_scorer_forward,
        init=init_span_scorer,
        layers=[token_scores],
        dims={"nO": None, "width_buckets": width_buckets},
        params={"width_scores": None, "transitions": None},
        refs={"tok2vec": tok2vec, "output_layer": output_layer},
        attrs={"dependency_features": dependency_features},
    )
    return model


def init_span_scorer(model: Model, X=None, Y=None) -> Model:
    """nO (= 1 + number of labels) must be set before initialization."""
    n_labels = model.get_dim("nO") - 1
    if not model.get_ref("output_layer").has_dim("nO"):
        model.get_ref("output_layer").set_dim("nO", 1 + 3 * n_labels)
    model.layers[0].initialize(X=X[0] if X is not None else None)
    model.set_param("width_scores", model.ops.alloc2f(model.get_dim("width_buckets"), n_labels))
    model.set_param("transitions", model.ops.alloc2f(n_labels + 2, n_labels + 2))
    return model


def span_scorer_forward(model: Model, inputs, is_train: bool):
    docs, spans = inputs
    spans = np.ascontiguousarray(model.ops.to_numpy(spans), dtype=np.int64)
    token_scores, backprop_tokens = model.layers[0](docs, is_train)
    width_scores = model.get_param("width_scores")
    scores = assemble_span_scores(
        np.ascontiguousarray(model.ops.to_numpy(token_scores)),
        spans,
        np.ascontiguousarray(model.ops.to_numpy(width_scores)),
    )
    n_tokens = token_scores.shape[0]

    def backprop(d_outputs):
        d_scores, d_transitions = d_outputs
        d_tokens, d_widths = assemble_span_scores_backward(
            np.ascontiguousarray(model.ops.to_numpy(d_scores), dtype=np.float32), spans, n_tokens, width_scores.shape[0]
        )
        model.inc_grad("width_scores", model.ops.asarray2f(d_widths))
        model.inc_grad("transitions", model.ops.asarray2f(d_transitions, dtype="f"))
        backprop_tokens(model.ops.asarray2f(d_tokens))
        return inputs

    return (model.ops.asarray2f(scores), model.get_param("transitions").copy()), backprop


def with_dependency_features(tok2vec: Model[List[Doc], List[Floats2d]], width: int) -> Model[List[Doc], Floats2d]:
    """Each token's vector, its head's vector and its dependency-label embedding:
    List[Doc] -> Floats2d (N, 2 * tok2vec width + width)."""
    label_embed = HashEmbed(nO=width, nV=512, column=0, seed=17)
    return Model(
        "dependency_features",
        dependency_features_forward,
        init=init_dependency_features,
        layers=[tok2vec, label_embed],
    )


def init_dependency_features(model: Model, X=None, Y=None) -> Model:
    model.layers[0].initialize(X=X)
    model.layers[1].initialize()
    return model


def batch_heads_and_labels(docs: List[Doc]) -> Tuple[np.ndarray, np.ndarray]:
    """Absolute head of each token in the batch (a root is its own head) (N,)
    and its dependency label hash (N, 1) uint64."""
    heads, labels, offset = [], [], 0
    for doc in docs:
        if len(doc) and not doc.has_annotation("DEP"):
            raise ValueError(
                "Dependency features need a dependency parse on every Doc: put a parser "
                "before this component, or pass the trees in the input Docs."
            )
        array = doc.to_array([HEAD, DEP])
        heads.append(array[:, 0].astype(np.int64) + np.arange(len(doc)) + offset)
        labels.append(array[:, 1:2])
        offset += len(doc)
    if not heads:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.uint64)
    return np.concatenate(heads), np.concatenate(labels).astype(np.uint64)


def dependency_features_forward(model: Model, docs: List[Doc], is_train: bool):
    tok2vec, label_embed = model.layers
    heads, labels = batch_heads_and_labels(docs)
    vectors, backprop_tok2vec = tok2vec(docs, is_train)
    lengths = [v.shape[0] for v in vectors]
    X = model.ops.flatten(vectors) if vectors else model.ops.alloc2f(0, tok2vec.get_dim("nO"))
    embedded, backprop_embed = label_embed(model.ops.asarray(labels, dtype="uint64"), is_train)
    width = X.shape[1]
    heads_ops = model.ops.asarray1i(heads)
    output = model.ops.xp.hstack([X, X[heads_ops], embedded])

    def backprop(d_output):
        d_X = model.ops.xp.ascontiguousarray(d_output[:, :width])
        model.ops.scatter_add(d_X, heads_ops, model.ops.xp.ascontiguousarray(d_output[:, width : 2 * width]))
        backprop_embed(model.ops.xp.ascontiguousarray(d_output[:, 2 * width :]))
        return backprop_tok2vec(model.ops.unflatten(d_X, lengths))

    return output, backprop
