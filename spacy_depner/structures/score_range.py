"""The range of scores in which log Z and the marginals are accurate.

Every structure computes in log space: an inside value is the log-sum of
the scores along partial paths, so its magnitude grows to about
|score| x length, and a marginal exp(inside + score + outside - log Z) is
the exponential of a difference of such values. float64 rounds each of them
to about 1e-16 of its magnitude, so a marginal's relative error grows as
|score| x length^1.5 (log Z's absolute error likewise), in every structure:
measured against exact enumeration (3-9 tokens) and 80-100-digit references
(up to 100 tokens), and on offsets that leave the marginals unchanged (up
to 3000 tokens), it stays within 6 x 1.1e-16 x |score| x length^1.5; at
|score| 1e30 marginals come out as inf or 0 instead of 1.

The bound: the largest |score| (token, span or hyperedge scores,
transitions, the penalty) times the length of the longest document of the
batch must not exceed ``SCORE_LENGTH_BOUND`` = 1e7. At the bound the
measured relative error of the marginals is at most 1e-7 for documents of
up to 1000 tokens and 2e-7 at 3000 (it grows as the square root of the
length: about 1e-6 near 1e5 tokens); 1e8 would be the edge of 1e-6 at 300
to 1000 tokens. A trained model's scores stay in the tens; scores of 1e5
on sentences of a hundred tokens mean a diverged model, whose marginals
(confidences and gradients) would be meaningless.

``check_scores`` is called by every structure's ``log_partition`` and
``marginals`` and refuses scores out of range with a ValueError (NaN and
inf included). ``viterbi`` is not bounded: the MAP is a maximum of float64
path sums, with no exp/log cancellation, so it stays right at any magnitude
(as long as the sums stay below 1e308).
"""
import numpy as np

SCORE_LENGTH_BOUND = 1e7


def score_bound(length: int) -> float:
    """The largest |score| accepted for documents of ``length`` tokens."""
    return SCORE_LENGTH_BOUND / max(int(length), 1)


def check_scores(name: str, doc_offsets: np.ndarray, *arrays) -> None:
    """ValueError unless every entry of ``arrays`` (score arrays of any shape,
    or scalars such as a penalty) is finite and the largest |entry| times the
    longest document of ``doc_offsets`` (D + 1,) is at most
    ``SCORE_LENGTH_BOUND``. ``name`` (e.g. "linear_chain.marginals") is named
    in the message. One pass over each array."""
    largest = 0.0
    for array in arrays:
        array = np.asarray(array)
        if array.size:
            top = float(np.max(np.abs(array)))  # NaN if any is NaN
            if not np.isfinite(top):
                raise ValueError(f"{name}: scores must be finite, not NaN or inf (the model produced NaN or inf: "
                                 "it has diverged; lower the learning rate and check the input features)")
            largest = max(largest, top)
    doc_offsets = np.asarray(doc_offsets)
    length = int(np.max(np.diff(doc_offsets))) if doc_offsets.shape[0] > 1 else 0
    if largest * length > SCORE_LENGTH_BOUND:
        raise ValueError(
            f"{name}: scores out of range: the model has diverged. The largest |score| is {largest:.3g}; for the "
            f"longest document of the batch ({length} tokens) the bound is {score_bound(length):.3g} (|score| x length "
            f"<= {SCORE_LENGTH_BOUND:.0e}), above which log Z and the marginals lose their accuracy. Lower the learning "
            "rate, check the training for divergence (growing losses, exploding weights: clip the gradients), "
            "and split very long documents into sentences."
        )
