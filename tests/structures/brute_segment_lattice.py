"""Brute-force reference for ``spacy_depner.structures.lattice._segment_lattice``,
written from the definitions only (not from the code under test).

Enumerate every segmentation of a document recursively (every way to tile
its tokens with candidate spans), then every labelling of it (O only on
one-token segments), score each one by the formula of the
``segment_lattice`` docstring, and sum / maximise over all of them
(``brute_lattice``); ``pure_python_labelled_segmentations`` and
``pure_python_score`` do the same with plain recursion, no numpy.
"""

import numpy as np
from brute_shared import logsumexp


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
        log_z[d] = logsumexp(everything)
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
