"""Accepted mentions (a person's "accept" of one proposed mention, on tokens
whose annotation is otherwise missing): the log-partition over the analyses
that hold every accepted mention, and its gradient, exactly, for a structure
whose layout forbids span labels (``Layout.forbidden``; the nested spaces).

An accepted mention says nothing of the mentions inside or around it, so it
is no annotated region; and the structures' recursions can forbid a mention
(the semiring zero) but not force one. Inclusion-exclusion turns holding into
forbidding: for the accepted mentions A of a unit, weights w and any shifts
C_a >= 0 added to the scores of the accepted mentions (w_C),

    sum_{S subset of A} (-1)^|S| Z_C(S forbidden)
        = sum_y w_C(y) sum_{S subset of A - y} (-1)^|S|
        = sum_{y holding A} w_C(y) = exp(sum_a C_a) Z(A held),

since the inner sum is 1 when A - y is empty and 0 otherwise. Its gradient
with respect to the scores is the same signed sum of Z_C(S) times the
marginals of each problem, over the total. The identity holds for any C; C
only keeps the sum from cancelling: with C_a so large that the shifted
problem holds a with probability near 1, the term of S = {} dominates
(C_a = logit(1 - p(a)) plus a margin, p the unshifted marginal), and when
the held mentions still weigh too little beside it the shifts are raised
once by the deficit. A unit whose accepted mentions no analysis holds
together (crossing mentions; mentions the space cannot nest) is a ValueError,
as is one with more than ``MAX_ACCEPTED`` of them (2^k problems).
"""

from dataclasses import replace
from typing import Dict, Tuple

import numpy as np

from .trees.candidate_spans import span_index

MAX_ACCEPTED = 10
MARGIN = 3.0  # nats by which each shifted accepted mention outweighs its absence
CANCELLED = np.log(1e-8)  # below this share of the S = {} term, the sum is cancellation noise


def accepted_mentions(accepted, layout, n_labels: int, structure: str) -> Tuple[np.ndarray, ...]:
    """The layout rows, labels and units of the ``accepted`` mentions (A, 3)
    [first, last, label] (int64, as ``in_runs`` gives them) of a layout with
    spans; a ValueError naming ``structure`` for a mention that is no span of
    the layout, a label out of range, a mention given twice or a unit with
    more than MAX_ACCEPTED."""
    rows = span_index(layout.spans, accepted[:, :2], layout.n_tokens)
    bad = np.flatnonzero((rows < 0) | (accepted[:, 2] < 0) | (accepted[:, 2] >= n_labels))
    if bad.shape[0]:
        first, last, label = (int(v) for v in accepted[bad[0]])
        raise ValueError(
            f"{structure}: the accepted mention {first}..{last} (label {label}) is no mention the model scores "
            f"(a span of its candidates with a label in [0, {n_labels})): drop it, or let the suggester propose its span"
        )
    keys = rows * n_labels + accepted[:, 2]
    if np.unique(keys).shape[0] != keys.shape[0]:
        raise ValueError(f"{structure}: a mention is accepted twice: give each accepted mention once")
    units = np.searchsorted(layout.offsets, accepted[:, 0], side="right") - 1
    counts = np.bincount(units, minlength=layout.offsets.shape[0] - 1)
    if counts.max() > MAX_ACCEPTED:
        raise ValueError(
            f"{structure}: {int(counts.max())} accepted mentions in one stretch of missing tokens (at most "
            f"{MAX_ACCEPTED}: the exact sum has 2^k terms): annotate that stretch as a region instead"
        )
    return rows, accepted[:, 2], units


def in_runs(accepted, conditioned, missing, structure: str) -> np.ndarray:
    """The ``accepted`` mentions (A, 3) [first, last, label] in the compact
    coordinates of ``conditioned``'s runs; a ValueError for one that is not
    wholly on the missing tokens of one run (on annotated tokens the gold
    mentions are all the mentions)."""
    accepted = np.asarray(accepted)
    if accepted.ndim != 2 or accepted.shape[1] != 3 or accepted.dtype.kind not in "iu":
        raise ValueError(
            f"{structure}: accepted mentions must be (A, 3) integers [first, last, label], not {accepted.shape}"
        )
    accepted = accepted.astype(np.int64)
    missing = np.asarray(missing, dtype=bool)
    inside = (accepted[:, 0] >= 0) & (accepted[:, 0] <= accepted[:, 1]) & (accepted[:, 1] < missing.shape[0])
    ends = np.where(inside[:, None], accepted[:, :2], 0)
    missing_before = np.concatenate([[0], np.cumsum(missing)])
    on_missing = inside & (missing_before[ends[:, 1] + 1] - missing_before[ends[:, 0]] == ends[:, 1] - ends[:, 0] + 1)
    compact = np.searchsorted(conditioned.tokens, ends)
    if conditioned.tokens.shape[0]:
        run = np.searchsorted(conditioned.layout.offsets, compact, side="right") - 1
        on_missing &= run[:, 0] == run[:, 1]
    bad = np.flatnonzero(~on_missing)
    if bad.shape[0]:
        first, last, label = (int(v) for v in accepted[bad[0]])
        raise ValueError(
            f"{structure}: the accepted mention {first}..{last} (label {label}) is not wholly on missing tokens of "
            "one unit: on annotated tokens the gold mentions are all the mentions (make it gold there, or leave "
            "its tokens unannotated)"
        )
    return np.concatenate([compact, accepted[:, 2:]], axis=1)


def held(structure, scores: np.ndarray, layout, accepted, options: Dict) -> Tuple[np.ndarray, np.ndarray]:
    """log Z (U,) over the analyses of each unit that hold all its ``accepted``
    mentions (A, 3), and the expected indicator of those analyses in the
    shape of ``scores`` (S, T) (module docstring); the layout's own
    forbidden labels stay forbidden."""
    scores = np.asarray(scores, dtype=np.float64)
    n_units = layout.offsets.shape[0] - 1
    rows, labels, units = accepted_mentions(accepted, layout, scores.shape[1], structure.name)
    base = np.zeros(scores.shape, dtype=bool) if layout.forbidden is None else np.asarray(layout.forbidden, dtype=bool)
    if base[rows, labels].any():
        i = int(np.flatnonzero(base[rows, labels])[0])
        first, last = (int(v) for v in layout.spans[rows[i]])
        raise ValueError(
            f"{structure.name}: the accepted mention {first}..{last} (label {int(labels[i])}) is also rejected: "
            "an annotation cannot both accept and reject it (drop one of the two)"
        )
    probability = structure.marginals(scores, layout, **options).scores[rows, labels]
    if np.any(probability <= 0.0):
        i = int(np.flatnonzero(probability <= 0.0)[0])
        first, last = (int(v) for v in layout.spans[rows[i]])
        raise ValueError(
            f"{structure.name}: no analysis holds the accepted mention {first}..{last} (label {int(labels[i])}) "
            "(the space excludes it, or its probability is below float64's range): drop it"
        )
    shifts = np.maximum(0.0, np.log1p(-np.minimum(probability, 1.0 - 1e-16)) - np.log(probability)) + MARGIN
    shifts += np.log(2.0) * np.bincount(units, minlength=n_units)[units]
    log_z, expected, share = _signed_sum(structure, scores, layout, base, rows, labels, units, shifts, options)
    low = share < -MARGIN
    if low.any():
        shifts = shifts + np.where(low[units], -share[units] + MARGIN, 0.0)
        log_z, expected, share = _signed_sum(structure, scores, layout, base, rows, labels, units, shifts, options)
    if np.any(share < CANCELLED):
        u = int(np.flatnonzero(share < CANCELLED)[0])
        mentions = ", ".join(
            f"{int(layout.spans[r][0])}..{int(layout.spans[r][1])} (label {int(lab)})"
            for r, lab in zip(rows[units == u], labels[units == u])
        )
        raise ValueError(
            f"{structure.name}: no analysis holds the accepted mentions {mentions} together (they cross, or the "
            "space cannot nest them): drop the ones that conflict"
        )
    return log_z, expected


def _signed_sum(structure, scores, layout, base, rows, labels, units, shifts, options):
    """log Z (U,) of the held analyses, their expected indicator, and per unit
    the log of the signed sum's share of its S = {} term."""
    n_units = layout.offsets.shape[0] - 1
    k = np.bincount(units, minlength=n_units)
    order = np.argsort(units, kind="stable")
    position = np.empty(rows.shape[0], dtype=np.int64)  # the rank of each accepted mention within its unit
    position[order] = np.arange(rows.shape[0]) - np.searchsorted(units[order], units[order])
    shifted = scores.copy()
    shifted[rows, labels] += shifts
    span_unit = np.searchsorted(layout.offsets, layout.spans[:, 0], side="right") - 1
    logs, signs, margins = [], [], []
    for subset in range(2 ** int(k.max())):
        forbidden = base.copy()
        chosen = (subset >> position) & 1 == 1
        forbidden[rows[chosen], labels[chosen]] = True
        marginals = structure.marginals(shifted, replace(layout, forbidden=forbidden), **options)
        valid = subset < 2**k  # a unit with fewer accepted mentions counts its subsets once
        logs.append(np.where(valid, marginals.log_z, -np.inf))
        signs.append(np.where(bin(subset).count("1") % 2 == 0, 1.0, -1.0))
        margins.append(np.asarray(marginals.scores, dtype=np.float64))
    logs, signs = np.array(logs), np.array(signs)  # (2^K, U), (2^K,)
    top = logs[0]
    total = (signs[:, None] * np.exp(logs - top[None, :])).sum(axis=0)
    share = np.log(np.maximum(total, 1e-300))
    log_total = top + share
    expected = np.zeros(scores.shape)
    for sign, log, margin in zip(signs, logs, margins):
        weight = sign * np.exp(log - log_total)  # (U,)
        expected += weight[span_unit][:, None] * margin
    unit_shift = np.bincount(units, weights=shifts, minlength=n_units)
    return log_total - unit_shift, expected, share
