"""The mention hypergraph of Lu & Roth (2015) (``mention_hypergraph``) under
the structure protocol (``protocol``).

scores (N, T, K): the hyperedge scores of each token and type (K =
``n_kinds(heads)``); layout: offsets (U + 1,) of the sentences; options
``mention_penalty`` (sec. 3.5) and ``heads`` (sec. 3.6). A
mention is what the sub-hypergraph reads (``edges_to_mentions``), (M, 5)
with heads. Encoding: the hyperedges (N, T, K) 0/1. ``Marginals.of`` gives
each mention the probability that a mention of its type starts at its first
token (1 - the T -> X marginal); ``Marginals.mentions`` and
``posterior_decode`` the exact mention marginals of ``posterior``, without
heads only.
"""
import numpy as np

from ..protocol import Analysis, Layout, Marginals, Structure
from ..shared import check_penalty
from . import mention_hypergraph, posterior
from .kinds import HEAD_T_B, HEAD_T_BW, HEAD_T_W, KIND_T_I, KIND_T_X


class MentionHypergraph(Structure):
    name = "hypergraph"

    def log_partition(self, scores, layout: Layout, *, mention_penalty: float = 0.0, heads: bool = False) -> np.ndarray:
        return mention_hypergraph.log_partition(scores, layout.offsets, mention_penalty, heads)

    def marginals(self, scores, layout: Layout, *, mention_penalty: float = 0.0, heads: bool = False) -> Marginals:
        log_z, edge_marginals = mention_hypergraph.marginals(scores, layout.offsets, mention_penalty, heads)

        def above(floor: float):
            return posterior.mention_marginals(scores, layout.offsets, mention_penalty, heads, floor)

        def of(mentions: np.ndarray) -> np.ndarray:
            return 1.0 - edge_marginals[mentions[:, 0], mentions[:, 2], KIND_T_X]

        return Marginals(log_z, edge_marginals, above, of)

    def viterbi(self, scores, layout: Layout, *, mention_penalty: float = 0.0, heads: bool = False) -> Analysis:
        best, edges = mention_hypergraph.viterbi(scores, layout.offsets, mention_penalty, heads)
        return Analysis(best, mention_hypergraph.edges_to_mentions(edges, layout.offsets), edges)

    def posterior_decode(self, marginals: Marginals, layout: Layout, *, penalty: float = 0.5,
                         heads: bool = False, **options) -> Analysis:
        """The readable mention set (``representable``) with the largest sum of
        (mention marginal - ``penalty``) (``posterior.best_reading``); the
        encoding is None (several sub-hypergraphs may read it)."""
        if heads:
            raise ValueError("posterior decoding of the mention hypergraph is not available with heads (the reading "
                             "of a sub-hypergraph also assigns heads); use heads=False")
        rows, values = marginals.mentions(check_penalty(penalty))
        gain, chosen = posterior.best_reading(rows, values, layout.offsets, penalty)
        rows = rows[chosen]
        return Analysis(gain, rows[np.lexsort(rows.T[::-1])], None)

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
