"""Dependency features of the token scorers, and the trees of a batch of
Docs, read and checked once where they enter the package.

``with_dependency_features(tok2vec, width)`` is a ``Model[List[Doc],
Floats2d]``: each token's tok2vec vector joined with its head's vector and an
embedding of its dependency label (Ling & Weld 2012), (N, 2 * tok2vec width +
width). ``token_encoder`` picks it or the plain tok2vec for the scorers.

``require_parse`` is the error every component and model raises for a Doc
without a parse. ``tree_arrays`` reads the heads and sentences of a batch as
flat arrays (re-exported by ``spacy_depner.pipeline.doc_arrays``, the glue of
the components and suggesters) and, like ``batch_heads_and_labels`` of the
dependency features, checks with ``structures.forest`` that they form a
forest within each sentence (``require_forest``): spaCy accepts any heads,
cycles included, and a cycle would give a lattice duplicate spans.
"""
from typing import Callable, Iterable, List, Optional, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD, SENT_START
from spacy.tokens import Doc
from thinc.api import HashEmbed, Model, chain, list2array
from thinc.types import Floats2d

from ..structures import forest


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


def doc_offsets_of(docs: List[Doc]) -> np.ndarray:
    """(B + 1,) int64: the tokens of Doc b are doc_offsets[b]:doc_offsets[b+1] of the batch."""
    return np.concatenate([[0], np.cumsum([len(doc) for doc in docs])]).astype(np.int64)


def token_table(docs: List[Doc], attrs: List[int]) -> np.ndarray:
    """(N, len(attrs)) int64: ``doc.to_array(attrs)`` of every Doc, stacked
    (uint64 columns such as DEP hashes wrap to negative values: ``.view(np.uint64)``)."""
    tables = [doc.to_array(attrs).astype(np.int64).reshape(len(doc), len(attrs)) for doc in docs if len(doc)]
    return np.concatenate(tables) if tables else np.zeros((0, len(attrs)), dtype=np.int64)


def sentence_offsets_of(sent_start: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """(U + 1,) int64 from the SENT_START column (N,): a sentence starts where
    it is 1 and at the start of every Doc (a Doc without boundaries is one sentence)."""
    starts = sent_start == 1
    starts[doc_offsets[:-1][np.diff(doc_offsets) > 0]] = True
    return np.concatenate([np.flatnonzero(starts), doc_offsets[-1:]]).astype(np.int64)


def _checked_trees(docs: List[Doc], table: np.ndarray, component: Optional[str]):
    """heads (N,) absolute, -1 for a root; sentence_offsets (U + 1,);
    doc_offsets (B + 1,) from the HEAD and SENT_START columns ``table`` (N, 2),
    after ``require_forest``."""
    doc_offsets = doc_offsets_of(docs)
    relative = table[:, 0]
    heads = np.where(relative == 0, -1, relative + np.arange(relative.shape[0], dtype=np.int64))
    sentence_offsets = sentence_offsets_of(table[:, 1], doc_offsets)
    require_forest(docs, heads, sentence_offsets, doc_offsets, component)
    return heads, sentence_offsets, doc_offsets


def tree_arrays(docs: List[Doc], component: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """heads (N,) absolute, -1 for a root (every token of a Doc without a
    parse), sentence_offsets (U + 1,) and doc_offsets (B + 1,) of a batch; a
    ValueError (``require_forest``, naming ``component`` if given) if the heads
    of a Doc are not a forest within each of its sentences."""
    docs = list(docs)
    return _checked_trees(docs, token_table(docs, [HEAD, SENT_START]), component)


def require_forest(docs: List[Doc], heads: np.ndarray, sentence_offsets: np.ndarray, doc_offsets: np.ndarray,
                   component: Optional[str] = None) -> None:
    """Raise a clear error if ``heads`` (N,) (absolute, -1 or itself for a
    root) of the batch ``docs`` are not a forest within each sentence
    (``forest.first_fault``, called once): it names the Doc, the sentence,
    the first token at fault, its head, the fault and the fix."""
    token, kind = forest.first_fault(heads, sentence_offsets)
    if kind == forest.NO_FAULT:
        return
    b = int(np.searchsorted(doc_offsets, token, side="right")) - 1
    doc, base = docs[b], int(doc_offsets[b])
    sentence = int(np.searchsorted(sentence_offsets, token, side="right")) - 1
    first_of_doc = int(np.searchsorted(sentence_offsets, base, side="right")) - 1
    start, end = int(sentence_offsets[sentence]) - base, int(sentence_offsets[sentence + 1]) - base
    i, h = token - base, int(heads[token]) - base
    words = " ".join(t.text for t in doc[:8]) + (" ..." if len(doc) > 8 else "")
    head = f"token {h} {doc[h].text!r}" if 0 <= h < len(doc) else f"{h}, outside the Doc"
    if kind == forest.CYCLE:
        path = forest.cycle_through(heads, token)
        cycle = " -> ".join(str(t - base) for t in path) + ("" if path[-1] == token else " -> ...")
        fault = (f"it lies on the cycle of heads {cycle}, so following heads from it never reaches a root. "
                 "Make one token of the cycle a root (its own head) or hang it from a token outside the cycle")
    else:
        fault = ("that head is outside its sentence. spaCy starts a sentence at the leftmost token under each "
                 "root, so the subtrees of two roots must not interleave: give the sentence one root or make each "
                 "root's subtree a contiguous run of tokens")
    prefix = f"'{component}': " if component else ""
    raise ValueError(
        f"{prefix}the parse is not a forest (each head must be a token of the same sentence, or the token itself "
        f"for a root, and following heads must reach a root): in Doc {b} of the batch ({words!r}), sentence "
        f"{sentence - first_of_doc} (tokens {start}-{end - 1}), token {i} {doc[i].text!r} has head {head}: {fault}, "
        f"in the parser or input data of that Doc (or with doc[{i}].head), or leave the Doc out."
    )


def batch_heads_and_labels(docs: List[Doc], component: str = "dependency_features") -> Tuple[np.ndarray, np.ndarray]:
    """Absolute head of each token in the batch (a root is its own head) (N,)
    and its dependency label hash (N, 1) uint64. ``require_parse`` and
    ``require_forest`` first, with ``component`` in their messages."""
    docs = list(docs)
    require_parse(docs, component)
    table = token_table(docs, [HEAD, SENT_START, DEP])
    heads, _, _ = _checked_trees(docs, table[:, :2], component)
    heads = np.where(heads == -1, np.arange(heads.shape[0], dtype=np.int64), heads)
    return heads, np.ascontiguousarray(table[:, 2:3]).view(np.uint64)


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
