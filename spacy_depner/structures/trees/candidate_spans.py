"""Candidate segments of a batch of sentences, from dependency trees or by length.

Pure numpy/numba: no spaCy. A batch is flat: ``heads[t]`` is the absolute index
(in the batch) of token ``t``'s head, ``-1`` or ``t`` itself for a root, and
``sentence_offsets`` (n_sentences + 1,) marks where sentences start. An arc whose
two ends lie in different sentences is ignored, like an arc to the root.

The heads must form a forest within each sentence (no cycle; several roots
and crossing arcs are fine): on a cycle the spans would be wrong (heads
[1, 2, 0] list the span [0, 2] twice). ``valid_spans`` and
``single_arc_spans`` check it (``forest.check_no_cycle``, O(N): a ValueError naming
the cycle), as the Doc glue (``spacy_depner.pipeline.doc_arrays.tree_arrays``)
and the readers do where trees enter the package.

Every function returns ``spans``, an int64 array of shape (S, 2) holding the
first and the last token (inclusive) of each span, in batch coordinates, sorted
by last token then first token. Every single token is a span. ``max_length`` is
the largest span length in tokens; ``None`` means unbounded (a span never
crosses a sentence end, so the sentence bounds it).

The three spaces are those of Jie, Muis & Lu (2017):

* ``valid_spans``: DGM, Definition 1. A *valid span* is a single word, or a
  word sequence u..v covered by a chain of undirected arcs none of which is
  covered by another. In a tree the path from u to v is unique, and "no arc
  covers another" holds exactly when that path visits strictly increasing
  positions u = p0 < p1 < ... < pk = v.
* ``single_arc_spans``: DGM-S, a single word or u..v with u and v joined by
  one arc.
* ``all_spans``: the semi-Markov CRF space, every span of length at most L
  (eq. 5).
"""

from typing import Optional

import numpy as np
from numba import njit

from .forest import check_no_cycle

UNBOUNDED = -1


def _as_bound(max_length: Optional[int]) -> int:
    if max_length is None:
        return UNBOUNDED
    if int(max_length) < 1:
        raise ValueError(f"max_length must be a positive integer or None, not {max_length!r}")
    return int(max_length)


def _as_batch(heads, sentence_offsets):
    heads = np.ascontiguousarray(heads, dtype=np.int64)
    sentence_offsets = np.ascontiguousarray(sentence_offsets, dtype=np.int64)
    n = heads.shape[0]
    if sentence_offsets.shape[0] < 1 or sentence_offsets[0] != 0 or sentence_offsets[-1] != n:
        raise ValueError("sentence_offsets must start at 0 and end at the number of tokens")
    problem = _batch_problem(heads, sentence_offsets)
    if problem == 1:
        raise ValueError("sentence_offsets must be non-decreasing")
    if problem == 2:
        raise ValueError("heads must be token indices of the batch, or -1 for a root")
    return heads, sentence_offsets


def _as_forest(heads, sentence_offsets):
    """``_as_batch``, and a ValueError naming the token and the cycle unless
    the arcs within each sentence form a forest (``forest.check_no_cycle``; an arc
    across a sentence end is ignored, as everywhere here)."""
    heads, sentence_offsets = _as_batch(heads, sentence_offsets)
    check_no_cycle(heads, sentence_offsets)
    return heads, sentence_offsets


@njit(cache=True)
def _batch_problem(heads, sentence_offsets):
    """1 if sentence_offsets decrease somewhere, 2 if a head is not -1 or a
    token of the batch, else 0: the checks of ``_as_batch`` in one pass."""
    for s in range(sentence_offsets.shape[0] - 1):
        if sentence_offsets[s + 1] < sentence_offsets[s]:
            return 1
    n = heads.shape[0]
    for t in range(n):
        if heads[t] < -1 or heads[t] >= n:
            return 2
    return 0


@njit(cache=True, inline="always")
def _sort_starts(spans, begin, end):
    """Insertion sort of spans[begin:end] by first token (the group is small).
    Inlined into its caller (numba IR), as ``_copy_group``: a compiled call per
    token costs more than the work of most groups."""
    for a in range(begin + 1, end):
        value = spans[a, 0]
        b = a - 1
        while b >= begin and spans[b, 0] > value:
            spans[b + 1, 0] = spans[b, 0]
            b -= 1
        spans[b + 1, 0] = value


@njit(cache=True)
def _lower_neighbours(heads, sentence_offsets):
    """The tree neighbours of each token that precede it, within its
    sentence: its head (lower_head[v], -1 if none or after v) and its
    children, ascending (first_child[v], then next_sibling[c]; -1 ends)."""
    n = heads.shape[0]
    lower_head = np.full(n, -1, dtype=np.int64)
    first_child = np.full(n, -1, dtype=np.int64)
    next_sibling = np.full(n, -1, dtype=np.int64)
    for s in range(sentence_offsets.shape[0] - 1):
        first, end = sentence_offsets[s], sentence_offsets[s + 1]
        for t in range(end - 1, first - 1, -1):  # pushed in front: children ascending
            h = heads[t]
            if h >= first and h < end and h != t:
                next_sibling[t] = first_child[h]
                first_child[h] = t
                if h < t:
                    lower_head[t] = h
    return lower_head, first_child, next_sibling


@njit(cache=True, inline="always")
def _copy_group(spans, count, begin, end, lowest, v):
    """Append the spans of rows [begin, end) (one last token, sorted by first
    token) whose first token is at least ``lowest``, as spans ending at v."""
    k = begin
    if lowest > spans[begin, 0]:
        k = end
        while k > begin and spans[k - 1, 0] >= lowest:
            k -= 1
    for r in range(k, end):
        spans[count, 0] = spans[r, 0]
        spans[count, 1] = v
        count += 1
    return count


@njit(cache=True)
def _tree_spans(heads, sentence_offsets, max_length, single_arc):
    """The spans u..v whose tree path from v to u decreases strictly, by last
    token v: v itself, and for each neighbour w < v of v the starts of w's
    own group (with ``single_arc``, w alone), those at least ``lowest`` (a
    path that decreases ends at its lowest token, so the length bound holds
    for the whole path iff it holds for its start). Tree paths are unique,
    so the groups of v's lower neighbours are disjoint; they are copied in
    ascending order of the neighbour and sorted by first token (already
    sorted when the tree is projective). O(S + N)."""
    n = heads.shape[0]
    lower_head, first_child, next_sibling = _lower_neighbours(heads, sentence_offsets)
    size = np.empty(n, dtype=np.int64)  # unbounded group sizes: an upper bound of the bounded ones
    capacity = 0
    for v in range(n):
        total = 1
        h = lower_head[v]
        if h >= 0:
            total += 1 if single_arc else size[h]
        c = first_child[v]
        while c >= 0 and c < v:
            total += 1 if single_arc else size[c]
            c = next_sibling[c]
        size[v] = total
        capacity += total if max_length == UNBOUNDED else min(total, max_length)
    spans = np.empty((capacity, 2), dtype=np.int64)
    begin = np.empty(n, dtype=np.int64)
    count = np.int64(0)  # one signature of _copy_group and _sort_starts (a literal 0 would be another)
    for v in range(n):
        group = count
        lowest = 0 if max_length == UNBOUNDED else v - max_length + 1
        h = lower_head[v]
        c = first_child[v]
        while True:
            if c >= 0 and c < v and (h < 0 or c < h):
                w = c
                c = next_sibling[c]
            elif h >= 0:
                w = h
                h = -1
            else:
                break
            if w < lowest:
                continue
            if single_arc:
                spans[count, 0] = w
                spans[count, 1] = v
                count += 1
            else:
                count = _copy_group(spans, count, begin[w], begin[w] + size[w], lowest, v)
        spans[count, 0] = v
        spans[count, 1] = v
        count += 1
        _sort_starts(spans, group, count)
        begin[v] = group
        size[v] = count - group
    return spans[:count].copy() if count < capacity else spans


@njit(cache=True)
def _length_spans(sentence_offsets, max_length):
    count = 0
    for s in range(sentence_offsets.shape[0] - 1):
        first = sentence_offsets[s]
        for v in range(first, sentence_offsets[s + 1]):
            lowest = first if max_length == UNBOUNDED else max(first, v - max_length + 1)
            count += v - lowest + 1
    spans = np.empty((count, 2), dtype=np.int64)
    k = 0
    for s in range(sentence_offsets.shape[0] - 1):
        first = sentence_offsets[s]
        for v in range(first, sentence_offsets[s + 1]):
            lowest = first if max_length == UNBOUNDED else max(first, v - max_length + 1)
            for u in range(lowest, v + 1):
                spans[k, 0] = u
                spans[k, 1] = v
                k += 1
    return spans


def valid_spans(heads, sentence_offsets, max_length: Optional[int] = None) -> np.ndarray:
    """DGM valid spans (Jie et al. 2017, Definition 1; the set S_L(x) of eq. 6).

    heads: (N,) int, absolute head of each token, -1 or itself for a root;
    they form a forest within each sentence (else a ValueError naming the cycle).
    sentence_offsets: (n_sentences + 1,) int.
    Returns (S, 2) int64 [first, last] sorted by (last, first).
    """
    heads, sentence_offsets = _as_forest(heads, sentence_offsets)
    return _tree_spans(heads, sentence_offsets, _as_bound(max_length), False)


def single_arc_spans(heads, sentence_offsets, max_length: Optional[int] = None) -> np.ndarray:
    """DGM-S spans (Jie et al. 2017): single words and the two ends of one arc.
    Arguments and result as ``valid_spans`` (heads: a forest within each
    sentence, else a ValueError)."""
    heads, sentence_offsets = _as_forest(heads, sentence_offsets)
    return _tree_spans(heads, sentence_offsets, _as_bound(max_length), True)


def all_spans(sentence_offsets, max_length: Optional[int] = 8) -> np.ndarray:
    """Semi-Markov spans (Sarawagi & Cohen 2004; eq. 5): every span of length <= L."""
    sentence_offsets = np.ascontiguousarray(sentence_offsets, dtype=np.int64)
    if sentence_offsets.shape[0] < 1 or sentence_offsets[0] != 0 or np.any(np.diff(sentence_offsets) < 0):
        raise ValueError("sentence_offsets must start at 0 and be non-decreasing")
    return _length_spans(sentence_offsets, _as_bound(max_length))


CANDIDATE_SETS = {"dgm": valid_spans, "dgm_s": single_arc_spans}


def candidate_spans(kind: str, heads, sentence_offsets, max_length: Optional[int]) -> np.ndarray:
    """The candidate spans of ``kind`` ("dgm", "dgm_s" or "semi_markov": every
    span up to ``max_length``); heads as in ``valid_spans`` (a forest within
    each sentence, else a ValueError; unused by "semi_markov")."""
    if kind == "semi_markov":
        return all_spans(sentence_offsets, max_length)
    if kind not in CANDIDATE_SETS:
        raise ValueError(f"Unknown candidate spans {kind!r}: use 'dgm', 'dgm_s' or 'semi_markov'")
    return CANDIDATE_SETS[kind](heads, sentence_offsets, max_length)


def merge_spans(spans: np.ndarray, extra: np.ndarray, n_tokens: int) -> np.ndarray:
    """The union of two span lists, sorted by (last, first), without duplicates."""
    both = np.concatenate([spans, np.asarray(extra, dtype=np.int64).reshape(-1, 2)])
    keys = np.unique(both[:, 1] * (n_tokens + 1) + both[:, 0])
    return np.stack([keys % (n_tokens + 1), keys // (n_tokens + 1)], axis=1)


def span_index(spans: np.ndarray, queries: np.ndarray, n_tokens: int) -> np.ndarray:
    """Row of each query span in ``spans`` (sorted by (last, first)); -1 if absent."""
    queries = np.asarray(queries, dtype=np.int64).reshape(-1, 2)
    keys = spans[:, 1] * (n_tokens + 1) + spans[:, 0]
    wanted = queries[:, 1] * (n_tokens + 1) + queries[:, 0]
    rows = np.searchsorted(keys, wanted)
    found = (
        (rows < keys.shape[0]) & (keys[np.minimum(rows, keys.shape[0] - 1)] == wanted)
        if keys.shape[0]
        else np.zeros(wanted.shape[0], bool)
    )
    return np.where(found, rows, -1)
