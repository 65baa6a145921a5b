"""Candidate segments of a batch of sentences, from dependency trees or by length.

Pure numpy/numba: no spaCy. A batch is flat: ``heads[t]`` is the absolute index
(in the batch) of token ``t``'s head, ``-1`` or ``t`` itself for a root, and
``sentence_offsets`` (n_sentences + 1,) marks where sentences start. An arc whose
two ends lie in different sentences is ignored, like an arc to the root.

Precondition of every function that takes heads: the heads form a forest
within each sentence (no cycle; several roots and crossing arcs are fine),
checked once by ``forest.first_fault`` at the boundary
(``spacy_depner.pipeline.doc_arrays.tree_arrays``, the readers), not here. On
a cycle the spans are wrong: heads [1, 2, 0] list the span [0, 2] twice.

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
    if np.any(np.diff(sentence_offsets) < 0):
        raise ValueError("sentence_offsets must be non-decreasing")
    if n and (heads.min() < -1 or heads.max() >= n):
        raise ValueError("heads must be token indices of the batch, or -1 for a root")
    return heads, sentence_offsets


@njit(cache=True)
def _sentence_index(sentence_offsets, n_tokens):
    sentence = np.empty(n_tokens, dtype=np.int64)
    for s in range(sentence_offsets.shape[0] - 1):
        for t in range(sentence_offsets[s], sentence_offsets[s + 1]):
            sentence[t] = s
    return sentence


@njit(cache=True)
def _undirected_arcs(heads, sentence_offsets):
    """CSR adjacency (indptr (N+1,), neighbours) of the arcs within sentences."""
    n = heads.shape[0]
    sentence = _sentence_index(sentence_offsets, n)
    degree = np.zeros(n + 1, dtype=np.int64)
    for t in range(n):
        h = heads[t]
        if h >= 0 and h != t and sentence[h] == sentence[t]:
            degree[t + 1] += 1
            degree[h + 1] += 1
    indptr = np.cumsum(degree)
    fill = indptr[:-1].copy()
    neighbours = np.empty(indptr[-1], dtype=np.int64)
    for t in range(n):
        h = heads[t]
        if h >= 0 and h != t and sentence[h] == sentence[t]:
            neighbours[fill[t]] = h
            fill[t] += 1
            neighbours[fill[h]] = t
            fill[h] += 1
    return indptr, neighbours


@njit(cache=True)
def _sort_starts(spans, begin, end):
    """Insertion sort of spans[begin:end] by first token (the group is small)."""
    for a in range(begin + 1, end):
        value = spans[a, 0]
        b = a - 1
        while b >= begin and spans[b, 0] > value:
            spans[b + 1, 0] = spans[b, 0]
            b -= 1
        spans[b + 1, 0] = value


@njit(cache=True)
def _decreasing_paths(indptr, neighbours, max_length, single_arc, spans, write):
    """Walk, from every last token v, the tree paths that decrease strictly.

    Each start u reached this way gives the span u..v (the path from u to v
    increases). With ``single_arc`` only paths of one arc are taken (DGM-S).
    Returns the number of spans; writes them into ``spans`` when ``write``.
    """
    n = indptr.shape[0] - 1
    stack = np.empty(max(n, 1), dtype=np.int64)
    count = 0
    for v in range(n):
        group = count
        if write:
            spans[count, 0] = v
            spans[count, 1] = v
        count += 1
        lowest = 0 if max_length == UNBOUNDED else v - max_length + 1
        top = 0
        stack[top] = v
        top += 1
        while top > 0:
            top -= 1
            x = stack[top]
            for k in range(indptr[x], indptr[x + 1]):
                w = neighbours[k]
                if w < x and w >= lowest:
                    if write:
                        spans[count, 0] = w
                        spans[count, 1] = v
                    count += 1
                    if not single_arc:
                        stack[top] = w
                        top += 1
        if write:
            _sort_starts(spans, group, count)
    return count


@njit(cache=True)
def _tree_spans(heads, sentence_offsets, max_length, single_arc):
    indptr, neighbours = _undirected_arcs(heads, sentence_offsets)
    empty = np.empty((0, 2), dtype=np.int64)
    count = _decreasing_paths(indptr, neighbours, max_length, single_arc, empty, False)
    spans = np.empty((count, 2), dtype=np.int64)
    _decreasing_paths(indptr, neighbours, max_length, single_arc, spans, True)
    return spans


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
    they form a forest within each sentence (checked by ``forest.first_fault``
    at the boundary, not here).
    sentence_offsets: (n_sentences + 1,) int.
    Returns (S, 2) int64 [first, last] sorted by (last, first).
    """
    heads, sentence_offsets = _as_batch(heads, sentence_offsets)
    return _tree_spans(heads, sentence_offsets, _as_bound(max_length), False)


def single_arc_spans(heads, sentence_offsets, max_length: Optional[int] = None) -> np.ndarray:
    """DGM-S spans (Jie et al. 2017): single words and the two ends of one arc.
    Arguments and result as ``valid_spans`` (heads: a forest within each
    sentence, checked by ``forest.first_fault`` at the boundary)."""
    heads, sentence_offsets = _as_batch(heads, sentence_offsets)
    return _tree_spans(heads, sentence_offsets, _as_bound(max_length), True)


def all_spans(sentence_offsets, max_length: Optional[int] = 8) -> np.ndarray:
    """Semi-Markov spans (Sarawagi & Cohen 2004; eq. 5): every span of length <= L."""
    sentence_offsets = np.ascontiguousarray(sentence_offsets, dtype=np.int64)
    if sentence_offsets.shape[0] < 1 or sentence_offsets[0] != 0 or np.any(np.diff(sentence_offsets) < 0):
        raise ValueError("sentence_offsets must start at 0 and be non-decreasing")
    return _length_spans(sentence_offsets, _as_bound(max_length))


STRUCTURES = {"dgm": valid_spans, "dgm_s": single_arc_spans}


def candidate_spans(structure: str, heads, sentence_offsets, max_length: Optional[int]) -> np.ndarray:
    """The candidate spans of ``structure`` ("dgm", "dgm_s" or "semi_markov");
    heads as in ``valid_spans`` (a forest within each sentence, checked by
    ``forest.first_fault`` at the boundary; unused by "semi_markov")."""
    if structure == "semi_markov":
        return all_spans(sentence_offsets, max_length)
    if structure not in STRUCTURES:
        raise ValueError(f"Unknown structure {structure!r}: use 'dgm', 'dgm_s' or 'semi_markov'")
    return STRUCTURES[structure](heads, sentence_offsets, max_length)


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
    found = (rows < keys.shape[0]) & (keys[np.minimum(rows, keys.shape[0] - 1)] == wanted) if keys.shape[0] else np.zeros(wanted.shape[0], bool)
    return np.where(found, rows, -1)
