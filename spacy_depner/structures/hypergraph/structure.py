"""The mention hypergraph of Lu & Roth (2015) (``mention_hypergraph``) under
the structure protocol (``protocol``).

scores (N, T, K): the hyperedge scores of each token and type (K =
``n_kinds(heads)``); layout: offsets (U + 1,) of the sentences; options
``mention_penalty`` (sec. 3.5) and ``heads`` (sec. 3.6). A
mention is what the sub-hypergraph reads (``edges_to_mentions``), (M, 5)
with heads. Encoding: the hyperedges (N, T, K) 0/1. ``Marginals.mentions``,
``Marginals.of`` and ``posterior_decode`` give the exact mention marginals
of ``posterior``, without heads only; ``HypergraphMarginals.starts`` gives
each mention the probability that a mention of its type starts at its first
token (1 - the T -> X marginal), with or without heads.
"""

import numpy as np

from ..protocol import Analysis, Layout, Marginals, Structure
from ..score_range import ENTROPY_ROUNDING, ENTROPY_SCORE_LENGTH_BOUND
from ..shared import check_doc_offsets, check_penalty
from . import _mention_hypergraph as mention_hypergraph
from . import posterior
from .kinds import HEAD_T_B, HEAD_T_BW, HEAD_T_W, KIND_T_I, KIND_T_X


def layout(offsets: np.ndarray) -> Layout:
    """The Layout of a batch of sentences: tokens offsets[u]:offsets[u + 1] for sentence u."""
    return Layout(check_doc_offsets(offsets))


def _no_heads(heads: bool, what: str) -> None:
    if heads:
        raise ValueError(
            f"{what} of the mention hypergraph is not available with heads (the reading of a "
            "sub-hypergraph also assigns heads); use heads=False"
        )


class HypergraphMarginals(Marginals):
    """``Marginals`` with ``starts(mentions)``: the probability (M,) that a
    mention of each one's type starts at its first token (1 - the T -> X
    hyperedge marginal; one inside-outside pass, heads or not)."""

    def __init__(self, log_z, scores, mentions, of, starts) -> None:
        super().__init__(log_z, scores, mentions, of)
        self._starts = starts

    def starts(self, mentions: np.ndarray) -> np.ndarray:
        return self._starts(np.asarray(mentions, dtype=np.int64).reshape(-1, np.shape(mentions)[-1]))


class MentionHypergraph(Structure):
    name = "hypergraph"
    entropy_bound = ENTROPY_SCORE_LENGTH_BOUND

    def entropy_rounding(self, score_length: float) -> float:
        """The marginals' error times the scores: quadratic (``score_range``)."""
        return ENTROPY_ROUNDING * score_length**2

    def log_partition(self, scores, layout: Layout, *, mention_penalty: float = 0.0, heads: bool = False) -> np.ndarray:
        return mention_hypergraph.log_partition(scores, layout.offsets, mention_penalty, heads)

    def marginals(
        self, scores, layout: Layout, *, mention_penalty: float = 0.0, heads: bool = False
    ) -> HypergraphMarginals:
        log_z, edge_marginals = mention_hypergraph.marginals(scores, layout.offsets, mention_penalty, heads)

        def above(floor: float):
            _no_heads(heads, "the mention marginals")
            return posterior.mention_marginals(scores, layout.offsets, mention_penalty, heads, floor)

        def of(mentions: np.ndarray) -> np.ndarray:
            _no_heads(heads, "the mention marginals")
            return posterior.marginals_of(scores, layout.offsets, mentions[:, :3], mention_penalty, heads)

        def starts(mentions: np.ndarray) -> np.ndarray:
            return 1.0 - edge_marginals[mentions[:, 0], mentions[:, 2], KIND_T_X]

        return HypergraphMarginals(log_z, edge_marginals, above, of, starts)

    def viterbi(self, scores, layout: Layout, *, mention_penalty: float = 0.0, heads: bool = False) -> Analysis:
        best, edges = mention_hypergraph.viterbi(scores, layout.offsets, mention_penalty, heads)
        return Analysis(best, mention_hypergraph.edges_to_mentions(edges, layout.offsets), edges)

    def posterior_decode(
        self, marginals: Marginals, layout: Layout, *, penalty: float = 0.5, heads: bool = False, **options
    ) -> Analysis:
        """The readable mention set (``representable``) with the largest sum of
        (mention marginal - ``penalty``) (``posterior.best_reading``); the
        encoding is None (several sub-hypergraphs may read it)."""
        _no_heads(heads, "posterior decoding")
        rows, values = marginals.mentions(check_penalty(penalty))
        gain, chosen = posterior.best_reading(rows, values, layout.offsets, penalty)
        rows = rows[chosen]
        return Analysis(gain, rows[np.lexsort(rows.T[::-1])], None)

    def n_kinds(self, heads: bool = False) -> int:
        """K, the hyperedge kinds of a token and type: 5, or 17 with heads."""
        return mention_hypergraph.n_kinds(heads)

    def encode(self, mentions: np.ndarray, layout: Layout, *, n_labels: int) -> np.ndarray:
        """The sub-hypergraph (N, T, K) 0/1 of ``mentions`` (M, 3), or (M, 5)
        with heads, in ``n_labels`` types."""
        return mention_hypergraph.mentions_to_edges(mentions, layout.offsets, n_labels)

    def mentions_of(self, encoding, layout: Layout) -> np.ndarray:
        """The mentions (M, 3) (M, 5 with heads) that the sub-hypergraph ``encoding`` reads."""
        return mention_hypergraph.edges_to_mentions(encoding, layout.offsets)

    def counts(self, encoding, scores, layout: Layout, **options) -> np.ndarray:
        return np.asarray(encoding, dtype=np.float64)

    def bias(self, encoding, layout: Layout, *, mention_penalty: float = 0.0, heads: bool = False) -> float:
        """``mention_penalty`` for each mention a T hyperedge opens (twice for
        T -> B, W with heads)."""
        edges = np.asarray(encoding, dtype=np.float64)
        if heads:
            opened = edges[:, :, [HEAD_T_B, HEAD_T_W]].sum() + 2 * edges[:, :, HEAD_T_BW].sum()
        else:
            opened = edges[:, :, KIND_T_I].sum()
        return float(mention_penalty * opened)


HYPERGRAPH = MentionHypergraph()
