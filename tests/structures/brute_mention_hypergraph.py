"""Brute-force reference for ``spacy_depner.structures.hypergraph._mention_hypergraph``,
written from Lu & Roth (2015), not from the code under test.

``hypergraph`` lists the nodes and hyperedges of sec. 3.2 (A, E, T, I, X;
the three I hyperedges of Figure 1) or, with heads, of sec. 3.6 as the module
documents it (I-B, I-W, I-A nodes, one hyperedge per non-empty set of a
node's successors); ``sub_hypergraphs`` enumerates every sub-hypergraph by
depth-first search over the nodes in topological order (the root A^0 is in;
every node in it picks one of its hyperedges, whose children are then in
it). A sub-hypergraph scores the sum of its hyperedges' scores plus the
penalty per I node a T hyperedge opens (``brute``). ``union_of_paths`` builds
a mention set's sub-hypergraph from the paths of its mentions (Theorem 3.1);
``cross``, ``runs``, ``documented_reading`` and ``paper_unambiguous`` are the
characterisations of the type-I reading (sec. 3.2, Figure 3) that the tests
check ``edges_to_mentions`` and ``representable`` against, and
``all_mention_sets`` enumerates every mention set of one type.
"""

import functools
import itertools

import numpy as np

from spacy_depner.structures.hypergraph import _mention_hypergraph as mh
from spacy_depner.structures.hypergraph._mention_hypergraph import n_kinds

# hyperedge (parent letter, set of child letters) -> kind index; "X" is the terminal
KIND_OF = {
    False: {
        ("T", frozenset({"X"})): mh.KIND_T_X,
        ("T", frozenset({"I"})): mh.KIND_T_I,
        ("I", frozenset({"I"})): mh.KIND_I_I,
        ("I", frozenset({"I", "X"})): mh.KIND_I_IX,
        ("I", frozenset({"X"})): mh.KIND_I_X,
    },
    True: {
        ("T", frozenset({"X"})): mh.HEAD_T_X,
        ("T", frozenset({"B"})): mh.HEAD_T_B,
        ("T", frozenset({"W"})): mh.HEAD_T_W,
        ("T", frozenset({"B", "W"})): mh.HEAD_T_BW,
        ("B", frozenset({"B"})): mh.HEAD_B_B,
        ("B", frozenset({"W"})): mh.HEAD_B_W,
        ("B", frozenset({"B", "W"})): mh.HEAD_B_BW,
        ("W", frozenset({"W"})): mh.HEAD_W_W,
        ("W", frozenset({"A"})): mh.HEAD_W_A,
        ("W", frozenset({"X"})): mh.HEAD_W_X,
        ("W", frozenset({"W", "A"})): mh.HEAD_W_WA,
        ("W", frozenset({"W", "X"})): mh.HEAD_W_WX,
        ("W", frozenset({"A", "X"})): mh.HEAD_W_AX,
        ("W", frozenset({"W", "A", "X"})): mh.HEAD_W_WAX,
        ("A", frozenset({"A"})): mh.HEAD_A_A,
        ("A", frozenset({"X"})): mh.HEAD_A_X,
        ("A", frozenset({"A", "X"})): mh.HEAD_A_AX,
    },
}
# I nodes and their one-step successors at the next token ("X": the mention ends)
SUCCESSORS = {False: {"I": ("I", "X")}, True: {"B": ("B", "W"), "W": ("W", "A", "X"), "A": ("A", "X")}}
OPENS = {False: ("I",), True: ("B", "W")}  # the I nodes a T node can open at its own token


def hypergraph(n, T, heads):
    """[(node, [(children, kind, penalty count)])] in topological order; a
    node is (letter, k) or (letter, k, t); kind is (k, t, index) or None for
    the hyperedges of A and E (no choice, no score). A hyperedge exists iff
    its children do (no token n; an I-B node needs a next token)."""
    nodes = []
    for k in range(n):
        nodes.append((("A", k), [((("E", k), ("A", k + 1)) if k + 1 < n else (("E", k),), None, 0)]))
        nodes.append((("E", k), [(tuple(("T", k, t) for t in range(T)), None, 0)]))
        for t in range(T):
            hyperedges = []
            for size in range(len(OPENS[heads]) + 1):
                for opened in itertools.combinations(OPENS[heads], size):
                    children = tuple((letter, k, t) for letter in opened)
                    if any(letter == "B" and k + 1 >= n for letter in opened):
                        continue
                    kind = KIND_OF[heads][("T", frozenset(opened or ("X",)))]
                    hyperedges.append((children, (k, t, kind), size))
            nodes.append((("T", k, t), hyperedges))
        for t in range(T):
            for letter, successors in SUCCESSORS[heads].items():
                if letter == "B" and k + 1 >= n:
                    continue
                existing = [s for s in successors if s == "X" or (k + 1 < n and not (s == "B" and k + 2 >= n))]
                hyperedges = []
                for size in range(1, len(existing) + 1):
                    for chosen in itertools.combinations(existing, size):
                        children = tuple((s, k + 1, t) for s in chosen if s != "X")
                        hyperedges.append((children, (k, t, KIND_OF[heads][(letter, frozenset(chosen))]), 0))
                nodes.append(((letter, k, t), hyperedges))
    return nodes


@functools.lru_cache(maxsize=None)
def sub_hypergraphs(n, T, heads):
    """(indices (G, L) int: flat indices k T K + t K + kind of the scored
    hyperedges of each sub-hypergraph, padded with n T K; penalty counts (G,))."""
    K = n_kinds(heads)
    nodes = hypergraph(n, T, heads)
    found = []
    included = {("A", 0)}
    chosen = []

    def visit(i):
        if i == len(nodes):
            found.append(list(chosen))
            return
        node, hyperedges = nodes[i]
        if node not in included:
            visit(i + 1)
            return
        for children, kind, pen in hyperedges:
            added = [c for c in children if c not in included]
            included.update(added)
            chosen.append((kind, pen))
            visit(i + 1)
            chosen.pop()
            included.difference_update(added)

    visit(0)
    width = max(sum(kind is not None for kind, _ in g) for g in found)
    indices = np.full((len(found), width), n * T * K, dtype=np.int64)
    pens = np.zeros(len(found), dtype=np.int64)
    for g, edges in enumerate(found):
        flat = [k * T * K + t * K + kind for (k, t, kind), _ in (e for e in edges if e[0] is not None)]
        indices[g, : len(flat)] = flat
        pens[g] = sum(p for _, p in edges)
    return indices, pens


def brute(scores, penalty, heads):
    """log Z, marginals (n, T, K), MAP score and MAP edges of one document."""
    n, T, K = scores.shape
    indices, pens = sub_hypergraphs(n, T, heads)
    flat = np.append(scores.ravel(), 0.0)
    weights = flat[indices].sum(axis=1) + penalty * pens
    top = weights.max()
    log_z = top + np.log(np.exp(weights - top).sum())
    p = np.exp(weights - log_z)
    marg = np.bincount(indices.ravel(), weights=np.repeat(p, indices.shape[1]), minlength=n * T * K + 1)
    edges = np.zeros(n * T * K + 1, dtype=np.int8)
    edges[indices[np.argmax(weights)]] = 1
    return float(log_z), marg[:-1].reshape(n, T, K), float(top), edges[:-1].reshape(n, T, K)


def union_of_paths(mentions, n, T, heads):
    """Sub-hypergraph (n, T, K) of mentions (first, last, type[, head_first,
    head_last]) in document coordinates: the union of their paths T -> (B..)
    W..W (..A) -> X, or T -> I..I -> X without heads."""
    opened, successors = {}, {}
    for m in mentions:
        first, last, t = m[:3]
        hf, hl = (m[3], m[4]) if heads else (first, last)

        def letter(k):
            return "I" if not heads else ("B" if k < hf else ("W" if k <= hl else "A"))

        opened.setdefault((first, t), set()).add(letter(first))
        for k in range(first, last + 1):
            successors.setdefault((letter(k), k, t), set()).add("X" if k == last else letter(k + 1))
    edges = np.zeros((n, T, n_kinds(heads)), dtype=np.int8)
    for k in range(n):
        for t in range(T):
            edges[k, t, KIND_OF[heads][("T", frozenset(opened.get((k, t), {"X"})))]] = 1
    for (letter, k, t), s in successors.items():
        edges[k, t, KIND_OF[heads][(letter, frozenset(s))]] = 1
    return edges


def overlap(a, b):
    return not (a[1] < b[0] or b[1] < a[0])


def cross(a, b):
    """Overlap with neither containing the other (the paper's type-II pair)."""
    return a[0] < b[0] <= a[1] < b[1] or b[0] < a[0] <= b[1] < a[1]


def runs(spans):
    """Connected components of the overlap graph of a set of same-type spans."""
    groups = []
    for s in sorted(spans):
        touching = [g for g in groups if any(overlap(s, x) for x in g)]
        merged = [s] + [x for g in touching for x in g]
        groups = [g for g in groups if g not in touching] + [merged]
    return groups


def documented_reading(spans):
    """The module's characterisation of the type-I reading: no crossing pair,
    and in each run every start but the first and every end but the last
    belongs to exactly one mention."""
    if any(cross(a, b) for a, b in itertools.combinations(spans, 2)):
        return False
    for g in runs(spans):
        starts = [s[0] for s in g]
        ends = [s[1] for s in g]
        if any(starts.count(x) != 1 for x in starts if x != min(starts)):
            return False
        if any(ends.count(x) != 1 for x in ends if x != max(ends)):
            return False
    return True


def paper_unambiguous(spans):
    """Sec. 3.2: ambiguity needs two overlapping same-type mentions whose
    boundaries are all different; so sets where overlapping mentions share
    their first or last token are represented exactly."""
    return all(not overlap(a, b) or a[0] == b[0] or a[1] == b[1] for a, b in itertools.combinations(spans, 2))


def all_mention_sets(n):
    spans = [(b, e) for b in range(n) for e in range(b, n)]
    return [c for r in range(len(spans) + 1) for c in itertools.combinations(spans, r)]
