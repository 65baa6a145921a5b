"""Significance of a difference in entity F1 between two systems.

Both tests work on per-item counts: ``a`` and ``b`` are integer arrays of
shape ``(M, 3)`` whose row ``m`` holds (true positives, false positives,
false negatives) of system A, resp. system B, on item ``m`` (a sentence or a
document; the same ``M`` items, in the same order, for both systems).  The F1
of a set of items is computed from the summed counts (micro-averaged),
``F1 = 2*TP / (2*TP + FP + FN)`` (``metrics.f1``), and is 0 when the denominator is 0.  Since
F1 is not a mean of per-item scores, the tests resample or permute the items
and recompute F1 from the counts each time.

* :func:`paired_bootstrap` -- the paired bootstrap of Koehn (2004),
  "Statistical significance tests for machine translation evaluation",
  EMNLP 2004.
* :func:`approximate_randomization` -- the approximate randomization
  (stratified shuffling) test of Noreen (1989), "Computer-Intensive Methods
  for Testing Hypotheses", Wiley; Yeh (2000), "More accurate tests for the
  statistical significance of result differences", COLING 2000; used with
  1000 iterations by Krishnan & Manning (2006), "An effective two-stage model
  for exploiting non-local dependencies in named entity recognition",
  ACL 2006.
* :func:`item_counts` turns gold and predicted entity sets into the counts.

Both tests are vectorised with numpy: the random draws form one ``(n, M)``
matrix that is generated and consumed in consecutive blocks of rows, so that
memory stays around ``_CHUNK_BYTES`` (~50 MB) whatever ``M``.  Splitting into
blocks does not change the draws: with ``rng = np.random.default_rng(seed)``
they are exactly those of the single call documented in each function, so a
slow reference implementation can reproduce them.
"""

from typing import Dict, Hashable, Iterable, Optional, Sequence, Union

import numpy as np

from ..util.numbers import is_positive_int
from .metrics import f1, prf_from_counts

__all__ = [
    "f1_from_counts",
    "item_counts",
    "paired_bootstrap",
    "approximate_randomization",
]

#: Approximate memory bound of one block of random draws and its temporaries.
_CHUNK_BYTES = 50 * 2**20
#: Temporary bytes per (row, item) cell: bootstrap holds int64 indices (8) and
#: the gathered (.., 6) int64 counts (48); randomization holds float64
#: uniforms (8), the boolean mask (1) and its int64 copy for the product (8).
_BYTES_PER_CELL = 56
#: Relative tolerance of the "at least as extreme" comparison of the
#: randomization test, so that shuffled differences equal to the observed one
#: up to floating-point rounding count as ties (and therefore as extreme).
_TIE_RTOL = 1e-12

ArrayLike = Union[np.ndarray, Sequence[Sequence[int]]]


# --------------------------------------------------------------------------
# validation and F1


def _as_counts(x: ArrayLike, name: str) -> np.ndarray:
    """``x`` as an int64 array of shape (M, 3) with M >= 1 and counts >= 0."""
    arr = np.asarray(x)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must hold integer counts, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape (M, 3) of (TP, FP, FN) per item, got shape {arr.shape}")
    if arr.shape[0] < 1:
        raise ValueError(f"{name} must hold at least one item (M >= 1), got M = 0")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold integer counts, got non-integral values")
    if np.any(arr < 0):
        raise ValueError(f"{name} must hold non-negative counts, got a minimum of {arr.min()}")
    return arr.astype(np.int64)


def _as_pair(a: ArrayLike, b: ArrayLike):
    a = _as_counts(a, "a")
    b = _as_counts(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must count the same items: shapes {a.shape} and {b.shape} differ")
    return a, b


def _check_positive(n: int, name: str) -> int:
    if not is_positive_int(n):
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def _chunk_rows(n: int, m: int, chunk_rows: Optional[int]) -> int:
    if chunk_rows is None:
        return max(1, min(n, _CHUNK_BYTES // (_BYTES_PER_CELL * m)))
    return _check_positive(chunk_rows, "chunk_rows")


def _f1_of_sums(sums: np.ndarray, first: int) -> np.ndarray:
    """F1 (``metrics.f1``) of the summed (TP, FP, FN) in columns
    ``first .. first + 2`` of ``sums`` (..., C)."""
    return f1(sums[..., first], sums[..., first + 1], sums[..., first + 2])


def f1_from_counts(counts: ArrayLike) -> float:
    """Micro F1 of summed counts.

    ``counts`` has shape (3,) -- one (TP, FP, FN) triple -- or (M, 3), one
    triple per item, summed over the items.  Returns
    ``2*TP / (2*TP + FP + FN)``, or 0.0 when that denominator is 0 (no gold
    and no predicted entity).  Raises ValueError for other shapes and for
    negative or non-integral counts.
    """
    arr = np.asarray(counts)
    if arr.ndim == 1:
        if arr.shape != (3,):
            raise ValueError(f"counts must have shape (3,) or (M, 3), got shape {arr.shape}")
        arr = arr[None, :]
    if arr.ndim == 2 and arr.shape[0] == 0 and arr.shape[1] == 3:
        return 0.0
    return prf_from_counts(_as_counts(arr, "counts"))["f"]


def item_counts(gold: Sequence[Iterable[Hashable]], predicted: Sequence[Iterable[Hashable]]) -> np.ndarray:
    """Per-item (TP, FP, FN) counts of exact-match entities.

    ``gold`` and ``predicted`` are sequences of the same length M, one entry
    per item, each an iterable of hashable entities, e.g. ``(start, end,
    label)`` tuples.  Each entry is taken as a set (duplicates count once).
    Returns an int64 array of shape (M, 3) with ``TP = |gold & pred|``,
    ``FP = |pred - gold|`` and ``FN = |gold - pred|`` per item.
    """
    gold = list(gold)
    predicted = list(predicted)
    if len(gold) != len(predicted):
        raise ValueError(
            f"gold and predicted must have one entry per item: lengths {len(gold)} and {len(predicted)} differ"
        )
    out = np.zeros((len(gold), 3), dtype=np.int64)
    for m, (g, p) in enumerate(zip(gold, predicted)):
        g, p = set(g), set(p)
        tp = len(g & p)
        out[m] = (tp, len(p) - tp, len(g) - tp)
    return out


# --------------------------------------------------------------------------
# paired bootstrap (Koehn 2004)


def paired_bootstrap(
    a: ArrayLike,
    b: ArrayLike,
    n_samples: int = 1000,
    seed: int = 0,
    *,
    chunk_rows: Optional[int] = None,
) -> Dict[str, Union[float, int, str, None]]:
    """Paired bootstrap test of an F1 difference (Koehn 2004).

    Koehn, "Statistical significance tests for machine translation
    evaluation", EMNLP 2004, Section 4 (paired bootstrap resampling).

    ``a`` and ``b``: int arrays of shape (M, 3), (TP, FP, FN) of system A and
    system B on each of the same M >= 1 items.  Draws ``n_samples``
    resamples of the M items with replacement -- the same item indices for
    both systems -- and computes ``delta* = F1(A*) - F1(B*)`` on each from
    the summed counts.  The indices are exactly
    ``np.random.default_rng(seed).integers(0, M, size=(n_samples, M))``
    (row s is resample s), generated in blocks of ``chunk_rows`` rows
    (default: about 50 MB of temporaries), which does not change them.

    P-value convention: the test is one-sided in the direction of the
    observed difference, i.e. for the hypothesis that the system with the
    higher observed F1 is better.  ``p_value`` is the fraction of resamples
    in which the sign of delta* is not the observed sign: the fraction with
    ``delta* <= 0`` when the observed delta > 0 (A better), the fraction with
    ``delta* >= 0`` when it is < 0 (B better), and 1.0 when the observed
    delta is 0 (no direction to support).  It is a plain fraction, so it can
    be 0.0 (no resample contradicts the observed ordering).

    Returns a dict with ``delta`` (observed F1(A) - F1(B) on all items),
    ``p_value`` (as above), ``wins`` (fraction of resamples with
    ``delta* > 0``, i.e. where A beats B, whatever the observed sign),
    ``better`` (``"a"``, ``"b"`` or None when delta is 0: the system the
    p-value is about) and ``n_samples``.
    """
    a, b = _as_pair(a, b)
    n = _check_positive(n_samples, "n_samples")
    m = a.shape[0]
    terms = np.concatenate([a, b], axis=1)  # (M, 6): (TP, FP, FN) of A, then of B
    total = terms.sum(axis=0)
    delta = float(_f1_of_sums(total, 0) - _f1_of_sums(total, 3))

    rng = np.random.default_rng(seed)
    rows = _chunk_rows(n, m, chunk_rows)
    n_pos = n_neg = 0
    for start in range(0, n, rows):
        k = min(rows, n - start)
        idx = rng.integers(0, m, size=(k, m))  # (k, M)
        sums = terms[idx].sum(axis=1)  # (k, 6)
        d = _f1_of_sums(sums, 0) - _f1_of_sums(sums, 3)
        n_pos += int(np.count_nonzero(d > 0))
        n_neg += int(np.count_nonzero(d < 0))

    if delta > 0:
        p_value, better = (n - n_pos) / n, "a"
    elif delta < 0:
        p_value, better = (n - n_neg) / n, "b"
    else:
        p_value, better = 1.0, None
    return {
        "delta": delta,
        "p_value": float(p_value),
        "wins": n_pos / n,
        "better": better,
        "n_samples": n,
    }


# --------------------------------------------------------------------------
# approximate randomization (Noreen 1989; Yeh 2000)


def approximate_randomization(
    a: ArrayLike,
    b: ArrayLike,
    n_iterations: int = 1000,
    seed: int = 0,
    *,
    chunk_rows: Optional[int] = None,
) -> Dict[str, Union[float, int]]:
    """Approximate randomization test of an F1 difference.

    Noreen, "Computer-Intensive Methods for Testing Hypotheses" (1989);
    Yeh, "More accurate tests for the statistical significance of result
    differences", COLING 2000; as used (1000 iterations) by Krishnan &
    Manning, "An effective two-stage model for exploiting non-local
    dependencies in named entity recognition", ACL 2006.

    ``a`` and ``b``: int arrays of shape (M, 3), (TP, FP, FN) of system A and
    system B on each of the same M >= 1 items.  Under the null hypothesis
    the two systems are exchangeable on every item, so each iteration swaps
    each item's counts between A and B independently with probability 1/2
    and computes ``|F1(A') - F1(B')|``.  The swap mask is exactly
    ``np.random.default_rng(seed).random((n_iterations, M)) < 0.5``
    (``True`` = swapped; row i is iteration i), generated in blocks of
    ``chunk_rows`` rows (default: about 50 MB of temporaries), which does not
    change it.  The summed counts of A' are ``sum(a) + mask @ (b - a)`` and
    those of B' are ``sum(b) - mask @ (b - a)``.

    The test is two-sided::

        p = (#{i : |delta'_i| >= |delta|} + 1) / (n_iterations + 1)

    where ``delta = F1(A) - F1(B)`` on the unshuffled counts; a shuffled
    difference within a relative 1e-12 of ``|delta|`` counts as a tie, hence
    as at least as extreme.  So ``0 < p <= 1``, identical systems give
    ``p = 1`` and the p-value is the same when ``a`` and ``b`` are swapped.

    Returns a dict with ``delta`` (observed F1(A) - F1(B)), ``p_value`` and
    ``n_iterations``.
    """
    a, b = _as_pair(a, b)
    n = _check_positive(n_iterations, "n_iterations")
    m = a.shape[0]
    diff = b - a  # what swapping item m adds to A' (and removes from B')
    total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    delta = float(_f1_of_sums(total_a, 0) - _f1_of_sums(total_b, 0))
    threshold = abs(delta) * (1.0 - _TIE_RTOL)

    rng = np.random.default_rng(seed)
    rows = _chunk_rows(n, m, chunk_rows)
    n_extreme = 0
    for start in range(0, n, rows):
        k = min(rows, n - start)
        mask = rng.random((k, m)) < 0.5  # (k, M), True = swapped
        shift = mask.astype(np.int64) @ diff  # (k, 3)
        sa, sb = total_a + shift, total_b - shift
        d = np.abs(_f1_of_sums(sa, 0) - _f1_of_sums(sb, 0))
        n_extreme += int(np.count_nonzero(d >= threshold))

    return {
        "delta": delta,
        "p_value": (n_extreme + 1) / (n + 1),
        "n_iterations": n,
    }
