"""Whether the heads of a batch of sentences form a forest within each sentence.

Pure numpy/numba: no spaCy. A batch is flat, as in ``candidate_spans``:
``heads[t]`` (N,) is the absolute index (in the batch) of token ``t``'s head,
``-1`` or ``t`` itself for a root, and ``sentence_offsets`` (U + 1,) marks
where sentences start. The heads form a forest when every head is a root
marker or a token of the same sentence, and following heads from any token
reaches a root. Several roots in a sentence and crossing
(non-projective) arcs are allowed.

A token is at fault when its head lies outside its sentence (or the batch):
``HEAD_OUTSIDE_SENTENCE``, or when it lies on a cycle of heads within its
sentence: ``CYCLE``. ``first_fault`` finds the fault of the lowest token in
O(N) and is called once per batch where trees enter the package (the Doc
glue ``tree_arrays`` of ``spacy_depner.ml.dependency_features``, re-exported
by ``spacy_depner.pipeline.doc_arrays``, and the readers); the structures
that take heads assume a forest and do not check again.
"""

from typing import Tuple

import numpy as np
from numba import njit

NO_FAULT = 0
HEAD_OUTSIDE_SENTENCE = 1
CYCLE = 2

#: What each fault means, for messages.
FAULTS = {
    HEAD_OUTSIDE_SENTENCE: "its head is outside its sentence",
    CYCLE: "it lies on a cycle of heads",
}

_UNSEEN, _ON_PATH, _DONE = 0, 1, 2


@njit(cache=True)
def _first_fault(heads, sentence_offsets, outside_is_root):
    """(token, kind): the lowest token at fault and its kind; (-1, NO_FAULT)
    for a forest. With ``outside_is_root`` a head outside the token's
    sentence makes it a root (as ``candidate_spans`` reads an arc across a
    sentence end): only cycles are faults.

    One walk up the heads from every token not yet seen, marking the tokens on
    the walk; a walk that meets a token of its own walk has closed a cycle
    (those tokens are marked), one that meets a root or a finished token ends.
    Each token is walked over once.
    """
    n = heads.shape[0]
    parent = np.full(n, -1, dtype=np.int64)  # head within the sentence, -1 for a root
    outside = np.zeros(n, dtype=np.bool_)
    for s in range(sentence_offsets.shape[0] - 1):
        first, end = sentence_offsets[s], sentence_offsets[s + 1]
        for t in range(first, end):
            h = heads[t]
            if h == -1 or h == t:
                continue
            if h < first or h >= end:
                outside[t] = not outside_is_root
            else:
                parent[t] = h
    state = np.zeros(n, dtype=np.int8)
    on_cycle = np.zeros(n, dtype=np.bool_)
    path = np.empty(n, dtype=np.int64)
    for t in range(n):
        length = 0
        v = t
        while v != -1 and state[v] == _UNSEEN:
            state[v] = _ON_PATH
            path[length] = v
            length += 1
            v = parent[v]
        if v != -1 and state[v] == _ON_PATH:  # the walk came back to itself
            w = v
            on_cycle[w] = True
            w = parent[w]
            while w != v:
                on_cycle[w] = True
                w = parent[w]
        for k in range(length):
            state[path[k]] = _DONE
    for t in range(n):
        if outside[t]:
            return t, HEAD_OUTSIDE_SENTENCE
        if on_cycle[t]:
            return t, CYCLE
    return -1, NO_FAULT


def _as_forest_batch(heads, sentence_offsets):
    heads = np.ascontiguousarray(heads, dtype=np.int64).reshape(-1)
    sentence_offsets = np.ascontiguousarray(sentence_offsets, dtype=np.int64).reshape(-1)
    n = heads.shape[0]
    if sentence_offsets.shape[0] < 1 or sentence_offsets[0] != 0 or sentence_offsets[-1] != n:
        raise ValueError(
            f"sentence_offsets must start at 0 and end at the number of tokens ({n}), "
            f"not {sentence_offsets[:3].tolist()}...{sentence_offsets[-1:].tolist()}"
        )
    if np.any(np.diff(sentence_offsets) < 0):
        raise ValueError("sentence_offsets must be non-decreasing")
    return heads, sentence_offsets


def first_fault(heads, sentence_offsets) -> Tuple[int, int]:
    """The lowest token whose head is outside its sentence or that lies on a
    cycle, and the kind of fault (``HEAD_OUTSIDE_SENTENCE`` or ``CYCLE``);
    ``(-1, NO_FAULT)`` when the heads form a forest within each sentence.

    heads: (N,) int, absolute head of each token, -1 or itself for a root
    (any other value outside the token's sentence, e.g. -2 or N, is a fault).
    sentence_offsets: (U + 1,) int, from 0 to N, non-decreasing (else ValueError).
    """
    heads, sentence_offsets = _as_forest_batch(heads, sentence_offsets)
    token, kind = _first_fault(heads, sentence_offsets, False)
    return int(token), int(kind)


def check_no_cycle(heads, sentence_offsets) -> None:
    """``check`` for cycles only: a head outside its token's sentence reads as
    a root (``candidate_spans`` ignores such arcs). heads (N,) and
    sentence_offsets (U + 1,) int64, checked by the caller."""
    token, kind = _first_fault(heads, sentence_offsets, True)
    if kind == CYCLE:
        sentence = np.repeat(np.arange(sentence_offsets.shape[0] - 1), np.diff(sentence_offsets))
        inside = (heads >= 0) & (sentence[np.maximum(heads, 0)] == sentence)
        check(np.where(inside, heads, -1), sentence_offsets)


def cycle_through(heads, token: int, limit: int = 12) -> list:
    """The tokens of the cycle of heads through ``token`` (a token at fault
    ``CYCLE``), starting and ending with it, at most ``limit`` + 1 of them
    (a longer cycle is cut, its last entry is then not ``token``): for messages."""
    tokens = [int(token)]
    v = int(heads[token])
    while len(tokens) <= limit:
        tokens.append(v)
        if v == token:
            break
        v = int(heads[v])
    return tokens


def check(heads, sentence_offsets) -> None:
    """A ValueError if the heads are not a forest within each sentence (see
    ``first_fault``), naming the token, its head and the fault in batch
    coordinates; for callers that have no Docs to name."""
    heads, sentence_offsets = _as_forest_batch(heads, sentence_offsets)
    token, kind = first_fault(heads, sentence_offsets)
    if kind == NO_FAULT:
        return
    sentence = int(np.searchsorted(sentence_offsets, token, side="right")) - 1
    first, end = int(sentence_offsets[sentence]), int(sentence_offsets[sentence + 1])
    detail = (
        f"the heads {' -> '.join(map(str, cycle_through(heads, token)))} form a cycle"
        if kind == CYCLE
        else f"its head {int(heads[token])} is not a token of its sentence ({first}-{end - 1})"
    )
    raise ValueError(
        f"The parse is not a forest: token {token} of sentence {sentence} has head {int(heads[token])}: {detail}. "
        "Each head must be a token of the same sentence, or -1 or the token itself for a root, and following "
        "heads must reach a root: fix the heads of that sentence."
    )
