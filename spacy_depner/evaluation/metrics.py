"""The one P/R/F of the package, and UAS/LAS: fractions in [0, 1], spaCy's unit.

Precision ``TP / (TP + FP)``, recall ``TP / (TP + FN)`` and F1
``2 TP / (2 TP + FP + FN)`` (the harmonic mean of the two), each 0 when its
denominator is 0. Every P/R/F of the library (entity and nested scores,
head scores, the significance tests, the mention-penalty search) comes from
here; reports turn the fractions into percents when they print them.
"""

from typing import Dict, Sequence, Union

import numpy as np

ArrayLike = Union[np.ndarray, Sequence]


def ratio(numerator, denominator) -> np.ndarray:
    """Elementwise ``numerator / denominator`` as float64, 0 where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def f1(tp, fp, fn) -> np.ndarray:
    """Elementwise F1 ``2 TP / (2 TP + FP + FN)`` of count arrays (0 where no
    gold and no predicted item)."""
    tp = np.asarray(tp, dtype=np.int64)
    return ratio(2 * tp, 2 * tp + np.asarray(fp, dtype=np.int64) + np.asarray(fn, dtype=np.int64))


def prf(tp: int, fp: int, fn: int) -> Dict[str, float]:
    """``{"p", "r", "f"}``: precision, recall and F1 of summed counts, as fractions."""
    return {"p": float(ratio(tp, tp + fp)), "r": float(ratio(tp, tp + fn)), "f": float(f1(tp, fp, fn))}


def summed_counts(counts: ArrayLike) -> np.ndarray:
    """(3,) int64 sums of (TP, FP, FN) counts given as one triple (3,) or one
    triple per item (M, 3) (M may be 0)."""
    arr = np.asarray(counts, dtype=np.int64)
    if arr.ndim == 1 and arr.shape == (3,):
        return arr
    if arr.ndim == 2 and arr.shape[1] == 3:
        return arr.sum(axis=0)
    if arr.size == 0:
        return np.zeros(3, dtype=np.int64)
    raise ValueError(f"counts must have shape (3,) or (M, 3) of (TP, FP, FN), got shape {arr.shape}")


def prf_from_counts(counts: ArrayLike) -> Dict[str, float]:
    """``prf`` of per-item (TP, FP, FN) counts (M, 3), summed over the items (micro average)."""
    tp, fp, fn = (int(v) for v in summed_counts(counts))
    return prf(tp, fp, fn)


def uas_las(predicted_heads, predicted_deps, gold_heads, gold_deps) -> Dict[str, float]:
    """UAS and LAS (fractions, punctuation included) from flat arrays of heads
    (a root is its own head) and dependency labels (compared as given)."""
    heads_right = np.asarray(predicted_heads) == np.asarray(gold_heads)
    labels_right = np.asarray(predicted_deps) == np.asarray(gold_deps)
    n = heads_right.shape[0]
    return {"uas": float(ratio(heads_right.sum(), n)), "las": float(ratio((heads_right & labels_right).sum(), n))}
