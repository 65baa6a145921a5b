"""The lattice's kernels and the tree spans compile one signature each from
an empty cache (a kernel loaded from the cache leaves its callees
uncompiled): scores of either float type, heads and offsets of either
integer type, gold labels of either integer type, bounded and unbounded
spans, and kernels calling kernels with constants (a literal 0 or True is
a signature of its own unless typed)."""

import pytest
from numba_signatures import COUNT_KERNELS, signature_counts

SIGNATURES = (
    """
import json
import numpy as np
from numba.core.registry import CPUDispatcher
from spacy_depner.structures.lattice import LATTICE, layout, kernels, layout_check, likelihood, mentions, scaled
from spacy_depner.structures.trees import candidate_spans

heads, offsets = np.array([1, -1, 1, 2, -1]), np.array([0, 4, 5])
for integers in (np.int64, np.int32):
    for max_length in (None, 2):
        for kind in ("dgm", "dgm_s", "semi_markov"):
            candidate_spans.candidate_spans(kind, heads.astype(integers), offsets.astype(integers), max_length)
spans = candidate_spans.valid_spans(heads, offsets)
lattice = layout(spans, offsets)
rng = np.random.default_rng(0)
for floats in (np.float32, np.float64):
    scores = (rng.normal(size=(spans.shape[0], 3)).astype(floats), rng.normal(size=(4, 4)).astype(floats))
    LATTICE.viterbi(scores, lattice), LATTICE.marginals(scores, lattice).scores, LATTICE.log_partition(scores, lattice)
    gold = np.where(spans[:, 0] == spans[:, 1], 0, -1)
    LATTICE.nll(scores, lattice, gold), LATTICE.nll(scores, lattice, gold.astype(np.int32))
MODULES = (candidate_spans, kernels, layout_check, likelihood, mentions, scaled)
"""
    + COUNT_KERNELS
    + """
print(json.dumps(counts))
"""
)


@pytest.mark.slow
def test_lattice_and_tree_span_kernels_compile_one_signature_each(tmp_path):
    counts = signature_counts(SIGNATURES, tmp_path)
    several = {name: n for name, n in counts.items() if n > 1}
    assert not several, f"kernels compiled for several signatures: {several}"
    used = [
        "candidate_spans._tree_spans",
        "kernels._viterbi",
        "scaled._scaled",
        "scaled.checked_scaled",
        "likelihood._fused_nll",
        "mentions._entity_segments",
    ]
    assert all(counts[name] == 1 for name in used), counts
