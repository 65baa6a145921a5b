"""Dependency features of the token scorers (Ling & Weld 2012).

``with_dependency_features(tok2vec, width)`` is a ``Model[List[Doc],
Floats2d]``: each token's tok2vec vector joined with its head's vector and an
embedding of its dependency label, (N, 2 * tok2vec width + width). It reads
the trees with ``doc_arrays.trees.batch_heads_and_labels``: those a
component read and checked with its batch (in scope while its model runs),
else read and checked here (a parse, a forest). ``token_encoder`` picks it or
the plain tok2vec for the scorers.
"""

from typing import Callable, List

from spacy.tokens import Doc
from thinc.api import HashEmbed, Model, chain, list2array
from thinc.types import Floats2d

from ..doc_arrays.trees import batch_heads_and_labels


def token_encoder(
    tok2vec: Model[List[Doc], List[Floats2d]],
    dependency_features: bool,
    dependency_width: int,
    join: Callable[[], Model] = list2array,
) -> Model:
    """The token vectors of a scorer: ``with_dependency_features`` (Floats2d),
    or the tok2vec's vectors joined by ``join()`` (list2array: Floats2d)."""
    if dependency_features:
        return with_dependency_features(tok2vec, dependency_width)
    return chain(tok2vec, join())


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
