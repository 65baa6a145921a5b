"""Brute-force references for the exactness tests of ``candidate_spans`` and
``segment_lattice``, written from the definitions only (not from the code under test).

Candidate spans: for every pair of positions u < v of one sentence, find the
path between them in the undirected dependency graph by an explicit search,
and test Definition 1 of Jie, Muis & Lu (2017) literally: the arcs of that
path form a chain from u to v and no arc of the chain covers another.

Segment lattice: enumerate every segmentation of a document recursively
(every way to tile its tokens with candidate spans), then every labelling of
it (O only on one-token segments), score each one by the formula of the
``segment_lattice`` docstring, and sum / maximise over all of them.
"""
import math
from collections import deque

import numpy as np

# ---------------------------------------------------------------------------
# Trees and candidate spans
# ---------------------------------------------------------------------------


def sentence_of_each_token(sentence_offsets):
    """List: the sentence index of every token."""
    sentence = []
    for s in range(len(sentence_offsets) - 1):
        sentence.extend([s] * (int(sentence_offsets[s + 1]) - int(sentence_offsets[s])))
    return sentence


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
    return {(u, v) for u, v in _pairs_within_sentences(sentence_offsets, max_length) if is_valid_by_covering(adjacency, u, v)}


def brute_single_arc_spans(heads, sentence_offsets, max_length=None):
    """Set of (u, v): single tokens, and u < v of one sentence joined by one arc."""
    arcs = undirected_arcs(heads, sentence_offsets)
    return {(u, v) for u, v in _pairs_within_sentences(sentence_offsets, max_length) if u == v or frozenset((u, v)) in arcs}


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


# ---------------------------------------------------------------------------
# Segment lattice
# ---------------------------------------------------------------------------


def segmentations(first, end, spans_by_start):
    """Every tiling of tokens [first, end) by candidate spans, as lists of span
    rows, found recursively: choose the segment starting at ``first``, recurse."""
    if first == end:
        yield []
        return
    for row, last in spans_by_start.get(first, []):
        if last < end:
            for rest in segmentations(last + 1, end, spans_by_start):
                yield [row] + rest


def _labellings(segment_rows, spans, n_labels):
    """All labellings of a segmentation as an (R, M) int array: one-token
    segments take labels 0..K-1, longer ones 1..K-1 (mixed-radix enumeration)."""
    choices = [np.arange(0 if spans[r, 0] == spans[r, 1] else 1, n_labels) for r in segment_rows]
    sizes = [len(c) for c in choices]
    total = int(np.prod(sizes))
    labels = np.zeros((total, len(segment_rows)), dtype=np.int64)
    codes = np.arange(total)
    for m, (c, size) in enumerate(zip(choices, sizes)):
        if total:
            labels[:, m] = c[codes % size]
            codes = codes // size
    return labels


def labelled_segmentations_of_document(spans, lo, hi, first, end, n_labels):
    """List of (segment rows (M,), labels (R, M)) covering every labelled
    segmentation of the document of tokens [first, end) with span rows [lo, hi)."""
    spans_by_start = {}
    for row in range(lo, hi):
        spans_by_start.setdefault(int(spans[row, 0]), []).append((row, int(spans[row, 1])))
    groups = []
    for rows in segmentations(first, end, spans_by_start):
        if rows:
            labels = _labellings(rows, spans, n_labels)
            if labels.shape[0]:
                groups.append((np.array(rows, dtype=np.int64), labels))
        else:
            groups.append((np.zeros(0, dtype=np.int64), np.zeros((1, 0), dtype=np.int64)))
    return groups


def _group_scores(rows, labels, scores, transitions):
    """Score of each labelling (R,) of one segmentation, by the docstring formula."""
    K = scores.shape[1]
    R, M = labels.shape
    if M == 0:
        return np.zeros(R)
    unary = scores[rows[None, :], labels].sum(axis=1)
    sequence = np.concatenate([np.full((R, 1), K), labels, np.full((R, 1), K)], axis=1)
    binary = transitions[sequence[:, :-1], sequence[:, 1:]].sum(axis=1)
    return unary + binary


def _logsumexp(values):
    top = np.max(values)
    if top == -np.inf:
        return -np.inf
    return float(top + math.log(np.sum(np.exp(values - top))))


def brute_lattice(spans, span_offsets, doc_offsets, scores, transitions):
    """Everything by enumeration: dict with log_z (D,), span_marginals (S, K),
    transition_marginals (K+1, K+1), best_score (D,), best_labels (S,) (-1 where
    not a segment of the best segmentation), and n_labelled (D,) (how many
    labelled segmentations each document has)."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    scores = np.asarray(scores, dtype=np.float64)
    transitions = np.asarray(transitions, dtype=np.float64)
    S, K = scores.shape
    D = len(doc_offsets) - 1
    log_z = np.zeros(D)
    best_score = np.zeros(D)
    best_labels = np.full(S, -1, dtype=np.int64)
    span_marginals = np.zeros((S, K))
    transition_marginals = np.zeros((K + 1, K + 1))
    n_labelled = np.zeros(D, dtype=np.int64)
    for d in range(D):
        groups = labelled_segmentations_of_document(
            spans, int(span_offsets[d]), int(span_offsets[d + 1]), int(doc_offsets[d]), int(doc_offsets[d + 1]), K
        )
        group_scores = [_group_scores(rows, labels, scores, transitions) for rows, labels in groups]
        everything = np.concatenate(group_scores)
        n_labelled[d] = everything.shape[0]
        log_z[d] = _logsumexp(everything)
        # MAP
        best_group = int(np.argmax([g.max() for g in group_scores]))
        rows, labels = groups[best_group]
        r = int(np.argmax(group_scores[best_group]))
        best_score[d] = group_scores[best_group][r]
        best_labels[rows] = labels[r]
        # Marginals: expected indicator of each (span, label) and (label, label) pair
        if doc_offsets[d + 1] == doc_offsets[d]:
            continue
        for (rows, labels), g in zip(groups, group_scores):
            weight = np.exp(g - log_z[d])
            for m, row in enumerate(rows):
                span_marginals[row] += np.bincount(labels[:, m], weights=weight, minlength=K)
            R = labels.shape[0]
            sequence = np.concatenate([np.full((R, 1), K), labels, np.full((R, 1), K)], axis=1)
            pair = sequence[:, :-1] * (K + 1) + sequence[:, 1:]
            transition_marginals += np.bincount(
                pair.ravel(), weights=np.repeat(weight, pair.shape[1]), minlength=(K + 1) ** 2
            ).reshape(K + 1, K + 1)
    return {
        "log_z": log_z,
        "span_marginals": span_marginals,
        "transition_marginals": transition_marginals,
        "best_score": best_score,
        "best_labels": best_labels,
        "n_labelled": n_labelled,
    }


def pure_python_labelled_segmentations(spans, first, end, n_labels):
    """Generator of [(span row, label), ...] for one document whose spans are
    all of ``spans`` (no numpy tricks: plain recursion over segments and labels)."""
    if first == end:
        yield []
        return
    for row in range(len(spans)):
        u, v = int(spans[row][0]), int(spans[row][1])
        if u != first or v >= end:
            continue
        for label in range(0 if u == v else 1, n_labels):
            for rest in pure_python_labelled_segmentations(spans, v + 1, end, n_labels):
                yield [(row, label)] + rest


def pure_python_score(segmentation, scores, transitions):
    """score(y) = sum scores[s, y] + T[B, y1] + sum T[y_m, y_m+1] + T[y_M, B]."""
    if not segmentation:
        return 0.0
    K = len(scores[0])
    labels = [K] + [label for _, label in segmentation] + [K]
    total = sum(float(scores[row][label]) for row, label in segmentation)
    total += sum(float(transitions[a][b]) for a, b in zip(labels, labels[1:]))
    return total


def transition_counts_of(segment_labels, n_labels):
    """(K+1, K+1) counts of one document's label sequence with boundaries."""
    counts = np.zeros((n_labels + 1, n_labels + 1))
    if len(segment_labels) == 0:
        return counts
    sequence = [n_labels] + list(segment_labels) + [n_labels]
    for a, b in zip(sequence, sequence[1:]):
        counts[a, b] += 1
    return counts


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
