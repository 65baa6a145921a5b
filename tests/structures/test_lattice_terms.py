"""The count of terms of the lattice's recursion that the DGM benchmark
prints as limits (``experiments.bench.lattice_iteration.recursion_terms``
and ``span_label_terms``)
against a pure-Python Viterbi recursion that counts every term it adds
(and reaches the lattice's best scores, so it is that recursion)."""

import numpy as np
from test_protocol import lattice_batch

from experiments.bench.lattice_iteration import recursion_terms, span_label_terms
from spacy_depner.structures.lattice import LATTICE


def counted_viterbi(scores, layout):
    """(best score per unit, terms added, span-label terms among them): the
    max-product recursion with the transition step shared by the spans that
    start at a position."""
    span_scores, transitions = scores
    K = span_scores.shape[1]
    B = K
    best_scores, terms, label_terms = [], 0, 0
    for u in range(len(layout.offsets) - 1):
        first, n = int(layout.offsets[u]), int(layout.offsets[u + 1] - layout.offsets[u])
        if n == 0:
            best_scores.append(0.0)
            continue
        best = [[-np.inf] * K for _ in range(n + 1)]
        entry = [[transitions[B, y] for y in range(K)]] + [None] * n
        terms += K
        rows = range(int(layout.span_offsets[u]), int(layout.span_offsets[u + 1]))
        for p in range(1, n + 1):
            if p > 1:
                entry[p - 1] = [max(best[p - 1][z] + transitions[z, y] for z in range(K)) for y in range(K)]
                terms += K * K
            for s in rows:
                i, j = (int(t) - first for t in layout.spans[s])
                if j != p - 1:
                    continue
                for y in range(0 if i == j else 1, K):
                    best[p][y] = max(best[p][y], entry[i][y] + span_scores[s, y])
                    terms += 1
                    label_terms += 1
        best_scores.append(max(best[n][y] + transitions[y, B] for y in range(K)))
        terms += K
    return np.array(best_scores), terms, label_terms


def test_recursion_terms_count_the_terms_of_the_recursion():
    rng = np.random.default_rng(12)
    for kind in ("semi_markov", "dgm", "dgm_s") * 30:
        scores, layout, _ = lattice_batch(rng, kind)
        best, terms, label_terms = counted_viterbi(scores, layout)
        np.testing.assert_allclose(best, LATTICE.viterbi(scores, layout).score, rtol=1e-12, atol=1e-12)
        assert recursion_terms(layout, scores[0].shape[1] - 1) == terms
        assert span_label_terms(layout, scores[0].shape[1] - 1) == label_terms <= terms
