"""What the posterior (minimum Bayes risk) decoders of the structures share.

Posterior decoding picks, in a structure's own space of analyses, the one
that maximises

    gain(y) = sum over the spans (mentions) of y of (marginal - penalty),

the expected number of correct spans of y minus ``penalty`` per predicted
span (a span outside every analysis gains 0: "no mention" is free). With
penalty 0.5 a span is worth predicting when it is more likely right than
wrong. Each structure has its decoder beside its marginals:
``segment_lattice.posterior_decode``, ``chain_spans.posterior_decode``,
``nested_mentions.posterior_decode`` and ``hypergraph_posterior.posterior_decode``.
"""
import numpy as np


def check_penalty(penalty) -> float:
    """``penalty`` as a float, or a ValueError unless it is finite and >= 0."""
    if isinstance(penalty, (bool, np.bool_)) or not isinstance(penalty, (int, float, np.integer, np.floating)) \
            or not np.isfinite(penalty) or penalty < 0:
        raise ValueError(f"the posterior penalty must be a finite number >= 0, not {penalty!r}")
    return float(penalty)


def check_marginals(marginals, rows: int, what: str = "marginals") -> np.ndarray:
    """``marginals`` as contiguous float64 with ``rows`` rows, or a ValueError
    unless every entry is a probability (finite, in [0, 1] up to rounding)."""
    marginals = np.asarray(marginals)
    if marginals.ndim < 1 or marginals.shape[0] != rows or marginals.dtype.kind not in "iuf":
        raise ValueError(f"{what} must be real numbers with one row per span ({rows}), not {marginals.dtype} "
                         f"of shape {marginals.shape}")
    marginals = np.ascontiguousarray(marginals, dtype=np.float64)
    if marginals.size and not (np.isfinite(marginals).all() and marginals.min() >= -1e-9 and marginals.max() <= 1 + 1e-9):
        raise ValueError(f"{what} must be probabilities in [0, 1] (the marginals of the same structure), "
                         f"not values from {marginals.min()} to {marginals.max()}")
    return marginals
