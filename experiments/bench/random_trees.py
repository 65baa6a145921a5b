"""Uniformly random dependency trees, for benchmarks and tests.

A uniformly random labelled tree on n nodes (a random Prüfer sequence) is the
average case of Jie et al. (2017), Theorem 1: DGM then has at most e·n valid
spans per sentence on average, whatever n.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def _prufer_heads(code, root, n):
    """Heads (n,) of the tree with Prüfer code ``code`` (n-2,), rooted at ``root`` (head -1)."""
    degree = np.ones(n, dtype=np.int64)
    for x in code:
        degree[x] += 1
    start = np.empty(n + 1, dtype=np.int64)
    neighbours = np.empty(2 * (n - 1), dtype=np.int64)
    edges = np.empty((n - 1, 2), dtype=np.int64)
    remaining = degree.copy()
    k = 0
    for x in code:
        leaf = 0
        while remaining[leaf] != 1:
            leaf += 1
        edges[k, 0] = leaf
        edges[k, 1] = x
        remaining[leaf] -= 1
        remaining[x] -= 1
        k += 1
    last = np.flatnonzero(remaining == 1)
    edges[k, 0] = last[0]
    edges[k, 1] = last[1]
    start[0] = 0
    for v in range(n):
        start[v + 1] = start[v] + degree[v]
    fill = start[:-1].copy()
    for e in range(n - 1):
        a, b = edges[e, 0], edges[e, 1]
        neighbours[fill[a]] = b
        fill[a] += 1
        neighbours[fill[b]] = a
        fill[b] += 1
    heads = np.full(n, -2, dtype=np.int64)
    heads[root] = -1
    stack = np.empty(n, dtype=np.int64)
    stack[0] = root
    top = 1
    while top > 0:
        top -= 1
        v = stack[top]
        for j in range(start[v], start[v + 1]):
            w = neighbours[j]
            if heads[w] == -2:
                heads[w] = v
                stack[top] = w
                top += 1
    return heads


def random_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """Heads (n,) of a uniformly random labelled tree with a random root (-1)."""
    if n == 1:
        return np.array([-1], dtype=np.int64)
    root = int(rng.integers(n))
    if n == 2:
        return np.array([-1, 0] if root == 0 else [1, -1], dtype=np.int64)
    return _prufer_heads(rng.integers(0, n, n - 2).astype(np.int64), root, n)


def random_forest(lengths, rng: np.random.Generator):
    """One random tree per sentence: (heads (N,) absolute, -1 for roots; sentence_offsets)."""
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    heads = [
        np.where(h >= 0, h + offset, -1)
        for h, offset in ((random_tree(int(n), rng), o) for n, o in zip(lengths, offsets))
    ]
    return np.concatenate(heads), offsets
