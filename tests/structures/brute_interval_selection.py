"""Brute-force reference for ``spacy_depner.structures.interval_selection``,
written from the definitions of its docstring, not from its sweeps: spans are
(first, last) pairs, inclusive.

``brute_outermost``: the spans no other span strictly contains (pairwise
test), then longest first, earlier first, lower rank first, a span kept when
it shares no token with a kept one (token sets). ``brute_most_probable``:
every subset of pairwise disjoint spans enumerated, the best by (sum of
weights, tokens covered); returns that key and every subset reaching it.
"""

import itertools


def overlap(a, b):
    return not (a[1] < b[0] or b[1] < a[0])


def strictly_inside(a, b):
    return b[0] <= a[0] and a[1] <= b[1] and tuple(a) != tuple(b)


def brute_outermost(spans, rank):
    spans = [tuple(int(x) for x in s) for s in spans]
    candidates = [m for m, s in enumerate(spans) if not any(strictly_inside(s, o) for o in spans)]
    candidates.sort(key=lambda m: (-(spans[m][1] - spans[m][0]), spans[m][0], rank[m]))
    taken_tokens = set()
    kept = set()
    for m in candidates:
        tokens = set(range(spans[m][0], spans[m][1] + 1))
        if not tokens & taken_tokens:
            kept.add(m)
            taken_tokens |= tokens
    return kept


def disjoint_subsets(spans):
    """Every subset (tuple of indices) of pairwise disjoint spans, the empty one included."""
    spans = [tuple(int(x) for x in s) for s in spans]
    for size in range(len(spans) + 1):
        for subset in itertools.combinations(range(len(spans)), size):
            if all(not overlap(spans[a], spans[b]) for a, b in itertools.combinations(subset, 2)):
                yield subset


def subset_key(subset, spans, weights):
    """(sum of weights, tokens covered) of a subset of disjoint spans."""
    return (sum(float(weights[m]) for m in subset), sum(int(spans[m][1] - spans[m][0] + 1) for m in subset))


def brute_most_probable(spans, weights):
    """(best key, the subsets (as sets) that reach it)."""
    scored = [(subset_key(s, spans, weights), set(s)) for s in disjoint_subsets(spans)]
    best = max(key for key, _ in scored)
    return best, [s for key, s in scored if key == best]
