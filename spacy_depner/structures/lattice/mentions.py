"""The mentions of a labelling of the lattice's spans, in one compiled pass:
the entity segments (label k >= 1 of span [first, last]) as rows
[first, last, k - 1] of an (M, 3) int64 array, in span order."""

import numpy as np
from numba import njit


@njit(cache=True)
def _entity_segments(spans, labels):
    count = 0
    for s in range(labels.shape[0]):
        count += labels[s] > 0
    out = np.empty((count, 3), dtype=np.int64)
    m = 0
    for s in range(labels.shape[0]):
        if labels[s] > 0:
            out[m, 0] = spans[s, 0]
            out[m, 1] = spans[s, 1]
            out[m, 2] = labels[s] - 1
            m += 1
    return out


def entity_segments(spans: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The mentions (M, 3) [first, last, label from 0] of the spans (S, 2)
    whose label (S,) is an entity label k >= 1 (-1: no segment, 0: O)."""
    return _entity_segments(
        np.ascontiguousarray(spans, dtype=np.int64).reshape(-1, 2), np.ascontiguousarray(labels, dtype=np.int64)
    )
