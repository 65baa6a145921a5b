"""Brute-force references for ``spacy_depner.structures.trees.candidate_spans``, and
the tree helpers of the structure tests, written from the definitions only
(not from the code under test).

Candidate spans: for every pair of positions u < v of one sentence, find the
path between them in the undirected dependency graph by an explicit search,
and test Definition 1 of Jie, Muis & Lu (2017) literally: the arcs of that
path form a chain from u to v and no arc of the chain covers another.

Trees: ``random_recursive_tree`` (random, in general non-projective trees),
``is_projective`` and ``is_tree``.
"""

from collections import deque

import numpy as np
from brute_shared import sentence_of_each_token


def undirected_arcs(heads, sentence_offsets):
    """Set of frozenset({a, b}) arcs that count: head not a root marker, and
    both ends in the same sentence."""
    sentence = sentence_of_each_token(sentence_offsets)
    arcs = set()
    for t, h in enumerate(heads):
        h = int(h)
        if h == -1 or h == t:
            continue
        if sentence[h] != sentence[t]:
            continue
        arcs.add(frozenset((t, h)))
    return arcs


def neighbours_of(arcs, n_tokens):
    adjacency = {t: set() for t in range(n_tokens)}
    for arc in arcs:
        a, b = tuple(arc)
        adjacency[a].add(b)
        adjacency[b].add(a)
    return adjacency


def tree_path(adjacency, u, v):
    """The node sequence of the path u -> v by breadth-first search, or None.
    (In a forest the path is unique when it exists.)"""
    previous = {u: None}
    queue = deque([u])
    while queue:
        x = queue.popleft()
        if x == v:
            break
        for w in sorted(adjacency[x]):
            if w not in previous:
                previous[w] = x
                queue.append(w)
    if v not in previous:
        return None
    path = [v]
    while path[-1] != u:
        path.append(previous[path[-1]])
    return path[::-1]


def covers(outer, inner):
    """Arc ``outer`` (a, b) covers arc ``inner`` when inner's interval lies in outer's."""
    return min(outer) <= min(inner) and max(inner) <= max(outer)


def is_valid_by_covering(adjacency, u, v):
    """Definition 1, literally: u..v is covered by a chain of undirected arcs
    (the path from u to v) none of which is covered by another arc of the chain,
    and the chain covers exactly the words u..v."""
    if u == v:
        return True
    path = tree_path(adjacency, u, v)
    if path is None:
        return False
    chain = [(path[i], path[i + 1]) for i in range(len(path) - 1)]
    for i, a in enumerate(chain):
        for j, b in enumerate(chain):
            if i != j and covers(a, b):
                return False
    covered = set()
    for a in chain:
        covered.update(range(min(a), max(a) + 1))
    return covered == set(range(u, v + 1))


def is_valid_by_increasing_path(adjacency, u, v):
    """The equivalent form of the module docstring: the path from u to v
    visits strictly increasing positions."""
    if u == v:
        return True
    path = tree_path(adjacency, u, v)
    return path is not None and all(path[i] < path[i + 1] for i in range(len(path) - 1))


def _pairs_within_sentences(sentence_offsets, max_length):
    for s in range(len(sentence_offsets) - 1):
        first, end = int(sentence_offsets[s]), int(sentence_offsets[s + 1])
        for u in range(first, end):
            for v in range(u, end):
                if max_length is None or v - u + 1 <= max_length:
                    yield u, v


def brute_valid_spans(heads, sentence_offsets, max_length=None):
    """Set of (u, v): single tokens, and u < v of one sentence forming a valid span."""
    adjacency = neighbours_of(undirected_arcs(heads, sentence_offsets), len(heads))
    return {
        (u, v)
        for u, v in _pairs_within_sentences(sentence_offsets, max_length)
        if is_valid_by_covering(adjacency, u, v)
    }


def brute_single_arc_spans(heads, sentence_offsets, max_length=None):
    """Set of (u, v): single tokens, and u < v of one sentence joined by one arc."""
    arcs = undirected_arcs(heads, sentence_offsets)
    return {
        (u, v) for u, v in _pairs_within_sentences(sentence_offsets, max_length) if u == v or frozenset((u, v)) in arcs
    }


def brute_all_spans(sentence_offsets, max_length):
    """Set of (u, v): every span within one sentence of at most max_length tokens."""
    return set(_pairs_within_sentences(sentence_offsets, max_length))


def sorted_span_array(span_set):
    """(S, 2) int64 array of the set, sorted by (last, first)."""
    rows = sorted(span_set, key=lambda uv: (uv[1], uv[0]))
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


def random_recursive_tree(n, rng):
    """Parent of each node of a random recursive tree (node i > 0 hangs from a
    uniform node < i; node 0 is the root, parent -1), positions then shuffled,
    so that the tree is in general non-projective. Returns local heads (n,)."""
    parent = [-1] + [int(rng.integers(i)) for i in range(1, n)]
    position = rng.permutation(n)  # node i sits at position[i]
    heads = np.full(n, -1, dtype=np.int64)
    for node in range(n):
        if parent[node] >= 0:
            heads[position[node]] = position[parent[node]]
    return heads


def is_projective(heads):
    """True when no two arcs (root arcs ignored) cross."""
    arcs = [(min(t, h), max(t, h)) for t, h in enumerate(heads) if h >= 0 and h != t]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return True


def is_tree(heads) -> bool:
    """One root (head -1) and no cycle."""
    heads = np.asarray(heads)
    if np.count_nonzero(heads == -1) != 1:
        return False
    for t in range(len(heads)):
        seen, v = set(), t
        while heads[v] != -1:
            if v in seen:
                return False
            seen.add(v)
            v = heads[v]
    return True
