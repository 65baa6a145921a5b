"""Dependency features of the token scorers, and the one check that Docs have
a dependency parse.

``with_dependency_features(tok2vec, width)`` is a ``Model[List[Doc],
Floats2d]``: each token's tok2vec vector joined with its head's vector and an
embedding of its dependency label (Ling & Weld 2012), (N, 2 * tok2vec width +
width). ``token_encoder`` picks it or the plain tok2vec for the scorers.
``require_parse`` is the error every component and model raises for a Doc
without a parse.
"""
from typing import Callable, Iterable, List, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.tokens import Doc
from thinc.api import HashEmbed, Model, chain, list2array
from thinc.types import Floats2d


def require_parse(docs: Iterable[Doc], component: str) -> None:
    """Raise a clear error for a non-empty Doc without a dependency parse."""
    for i, doc in enumerate(docs):
        if len(doc) and not doc.has_annotation("DEP"):
            raise ValueError(
                f"'{component}' needs dependency trees, but Doc {i} of the batch has no dependency parse "
                f"(text: {doc.text[:60]!r}). Put a parser before '{component}' in the pipeline "
                "(and list it in [training] annotating_components to train on its trees), "
                "or pass Docs whose heads and deps are set (for example with the "
                "spacy_depner.UNERCorpus.v1 reader and dependencies = \"given\"). "
                "Dependency features and the DGM suggesters read the trees; "
                "spacy_depner.all_spans_suggester.v1 does not."
            )


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


def batch_heads_and_labels(docs: List[Doc], component: str = "dependency_features") -> Tuple[np.ndarray, np.ndarray]:
    """Absolute head of each token in the batch (a root is its own head) (N,)
    and its dependency label hash (N, 1) uint64. ``require_parse`` first, with
    ``component`` in its message."""
    require_parse(docs, component)
    heads, labels, offset = [], [], 0
    for doc in docs:
        array = doc.to_array([HEAD, DEP])
        heads.append(array[:, 0].astype(np.int64) + np.arange(len(doc)) + offset)
        labels.append(array[:, 1:2])
        offset += len(doc)
    if not heads:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 1), dtype=np.uint64)
    return np.concatenate(heads), np.concatenate(labels).astype(np.uint64, copy=False)  # to_array gives uint64


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
