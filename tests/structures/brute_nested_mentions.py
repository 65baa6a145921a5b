"""Brute-force reference for ``spacy_depner.structures.nested._mentions``,
written from the definitions of Corro (2023), sec. 3.1, not from the
deduction rules: an analysis is a set of labelled spans, at most one label
per span; "inside" is strict containment; the children of a mention are the
mentions inside it that are not inside another mention inside it. The spaces
are predicates on span sets: semi_markov (pairwise disjoint), cyk (pairwise
disjoint or nested) and quadratic (cyk, and every mention has at most one
child longer than one word). Span sets are enumerated by pruned backtracking
with the pairwise cyk test (checked equal to filtering all 2^S subsets for
n <= 5 by the tests), then filtered by each predicate and labelled in every
way; the enumerations are cached per (structure, n, T). ``COUNTS`` counts the
analyses by recursions on the same definitions.
"""

import functools
import itertools
import math

import numpy as np


def span_list(n):
    """The spans (first, last) (inclusive) of an n-word document in the
    documented row order: by last word, then first word."""
    return [(first, last) for last in range(n) for first in range(last + 1)]


def length(span):
    return span[1] - span[0] + 1


def disjoint(a, b):
    return a[1] < b[0] or b[1] < a[0]


def inside(a, b):
    """a is inside b (Corro 2023, sec. 3.1; with inclusive last words)."""
    return (b[0] < a[0] and a[1] <= b[1]) or (b[0] <= a[0] and a[1] < b[1])


def children(family, mention):
    within = [c for c in family if inside(c, mention)]
    return [c for c in within if not any(inside(c, x) for x in within)]


def in_semi_markov(family):
    return all(disjoint(a, b) for a, b in itertools.combinations(family, 2))


def in_cyk(family):
    return all(disjoint(a, b) or inside(a, b) or inside(b, a) for a, b in itertools.combinations(family, 2))


def in_quadratic(family):
    return in_cyk(family) and all(sum(length(c) > 1 for c in children(family, m)) <= 1 for m in family)


IN_SPACE = {"semi_markov": in_semi_markov, "cyk": in_cyk, "quadratic": in_quadratic}


@functools.lru_cache(maxsize=None)
def laminar_families(n):
    """Every set of spans (as sorted tuples of rows) that passes ``in_cyk``,
    by backtracking over the spans with the pairwise test."""
    spans = span_list(n)
    found = []

    def extend(start, chosen):
        found.append(tuple(chosen))
        for r in range(start, len(spans)):
            if all(
                disjoint(spans[r], spans[c]) or inside(spans[r], spans[c]) or inside(spans[c], spans[r]) for c in chosen
            ):
                chosen.append(r)
                extend(r + 1, chosen)
                chosen.pop()

    extend(0, [])
    return tuple(found)


@functools.lru_cache(maxsize=None)
def span_families(structure, n):
    spans = span_list(n)
    return tuple(f for f in laminar_families(n) if IN_SPACE[structure]([spans[r] for r in f]))


@functools.lru_cache(maxsize=None)
def labelled_analyses(structure, n, T):
    """(columns (A, k) int: row * T + label of each mention, padded with
    S * T; span bits (A,) uint64: the rows used), every labelled analysis."""
    S = n * (n + 1) // 2
    families = span_families(structure, n)
    k_max = max(len(f) for f in families)
    blocks, bits = [], []
    for k in range(k_max + 1):
        same_size = [f for f in families if len(f) == k]
        if not same_size:
            continue
        group = np.array(same_size, dtype=np.int64).reshape(len(same_size), k)
        labels = np.array(list(itertools.product(range(T), repeat=k)), dtype=np.int64).reshape(T**k, k)
        columns = (group[:, None, :] * T + labels[None, :, :]).reshape(len(same_size) * T**k, k)
        blocks.append(np.concatenate([columns, np.full((columns.shape[0], k_max - k), S * T, dtype=np.int64)], axis=1))
        span_bits = (
            (np.uint64(1) << group.astype(np.uint64)).sum(axis=1, dtype=np.uint64)
            if k
            else np.zeros(group.shape[0], np.uint64)
        )
        bits.append(np.repeat(span_bits, labels.shape[0]))
    return np.concatenate(blocks), np.concatenate(bits)


def allowed_rows(n, max_length, mask):
    """(S,) bool: spans that may be mentions."""
    lengths = np.array([length(s) for s in span_list(n)], dtype=np.int64).reshape(-1)
    allowed = np.ones(lengths.shape[0], dtype=bool) if mask is None else np.asarray(mask, dtype=bool).copy()
    if max_length is not None:
        allowed &= lengths <= max_length
    return allowed


def brute(structure, scores, max_length=None, mask=None):
    """log Z, marginals (S, T), MAP score and a MAP labelling (S,) of one
    document by enumeration of every labelled analysis."""
    S, T = scores.shape
    n = int(round((math.sqrt(8 * S + 1) - 1) / 2))
    assert n * (n + 1) // 2 == S
    if n == 0:
        return 0.0, np.zeros((0, T)), 0.0, np.zeros(0, dtype=np.int64)
    columns, bits = labelled_analyses(structure, n, T)
    forbidden = np.uint64(0)
    for r in np.flatnonzero(~allowed_rows(n, max_length, mask)):
        forbidden |= np.uint64(1) << np.uint64(r)
    columns = columns[(bits & forbidden) == 0]
    flat = np.append(scores.ravel(), 0.0)
    weights = flat[columns].sum(axis=1)
    top = weights.max()
    log_z = top + np.log(np.exp(weights - top).sum())
    p = np.exp(weights - log_z)
    marg = np.bincount(columns.ravel(), weights=np.repeat(p, columns.shape[1]), minlength=S * T + 1)[: S * T].reshape(
        S, T
    )
    labels = np.full(S, -1, dtype=np.int64)
    for c in columns[int(np.argmax(weights))]:
        if c < S * T:
            labels[c // T] = c % T
    return float(log_z), marg, float(top), labels


def count_cyk(n, T):
    """Number of cyk analyses of n words, by a recursion on the definition:
    inner(k) counts the contents of a k-word mention (any analysis of its
    words without a mention on the whole span), every(k) those of k free
    words; a k-word segment starts with a gap or with a first mention."""
    every, inner = [1], [0]
    for k in range(1, n + 1):
        inner.append(every[k - 1] + sum(T * inner[a] * every[k - a] for a in range(1, k)))
        every.append(inner[k] * (1 + T))
    return every[n]


def count_quadratic(n, T):
    """Number of quadratic analyses of n words: the contents of a k-word
    mention are its words, each a gap or a one-word mention ((1 + T)^k, k >= 2),
    or that with one long child of L words (2 <= L < k) at one of k - L + 1
    places; free words are as in ``count_cyk``."""
    inner = [0, 1]
    for k in range(2, n + 1):
        inner.append((1 + T) ** k + sum((k - L + 1) * (1 + T) ** (k - L) * T * inner[L] for L in range(2, k)))
    every = [1]
    for k in range(1, n + 1):
        every.append(every[k - 1] + sum(T * inner[a] * every[k - a] for a in range(1, k + 1)))
    return every[n]


def count_semi_markov(n, T):
    every = [1]
    for k in range(1, n + 1):
        every.append(every[k - 1] + sum(T * every[k - a] for a in range(1, k + 1)))
    return every[n]


COUNTS = {"semi_markov": count_semi_markov, "cyk": count_cyk, "quadratic": count_quadratic}


def family_of(labels, n):
    """The spans (first, last), in document coordinates, labelled >= 0."""
    spans = span_list(n)
    return [spans[r] for r in np.flatnonzero(np.asarray(labels) >= 0)]
