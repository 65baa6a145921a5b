"""What is particular to the segment lattice (``structures.lattice``; its
agreement with enumeration is ``test_protocol``'s table): the twin itself
(vectorised against pure Python), invariants on longer documents, empty
documents, a hand-computed document, and bad input (wrong shapes, a token
without its own span).
"""

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from brute_candidate_spans import random_recursive_tree
from brute_segment_lattice import brute_lattice, pure_python_labelled_segmentations, pure_python_score

from spacy_depner.structures.lattice._segment_lattice import log_partition, marginals, transition_counts, viterbi
from spacy_depner.structures.trees.candidate_spans import all_spans, single_arc_spans, valid_spans

RTOL = 1e-9
SOURCES = ["dgm", "dgm_s", "semi_markov", "subset"]


@dataclass
class Batch:
    spans: np.ndarray  # (S, 2)
    span_offsets: np.ndarray  # (D + 1,)
    doc_offsets: np.ndarray  # (D + 1,)
    scores: np.ndarray  # (S, K)
    transitions: np.ndarray  # (K + 1, K + 1)

    @property
    def args(self):
        return self.spans, self.span_offsets, self.doc_offsets, self.scores, self.transitions

    @property
    def n_labels(self):
        return self.scores.shape[1]


def assert_rel(got, expected, what, rtol=RTOL):
    """|got - expected| <= rtol * |expected| elementwise, so exactly 0 where
    expected is 0 (for marginals, which lie in [0, 1])."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.isfinite(got)), (what, got)
    error = np.abs(got - expected)
    bound = rtol * np.abs(expected)
    assert np.all(error <= bound), (
        f"{what}: max relative error {np.max(error / np.maximum(np.abs(expected), 1e-300))}\ngot {got}\nexpected {expected}"
    )


def assert_rel_or_abs(got, expected, what, rtol=RTOL):
    """Relative error, with an absolute floor of rtol (for scores and log Z that may be near 0)."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.abs(got - expected) <= rtol * np.maximum(np.abs(expected), 1.0)), (
        f"{what}:\ngot {got}\nexpected {expected}"
    )


def spans_for(source, heads, sentence_offsets, max_length, rng):
    if source == "dgm":
        return valid_spans(heads, sentence_offsets, max_length)
    if source == "dgm_s":
        return single_arc_spans(heads, sentence_offsets, max_length)
    if source == "semi_markov":
        return all_spans(sentence_offsets, max_length)
    every = all_spans(sentence_offsets, max_length)  # a random subset, singles always kept
    keep = (every[:, 0] == every[:, 1]) | (rng.random(every.shape[0]) < 0.5)
    return every[keep]


def random_lattice_batch(rng, source=None, n_labels=None, max_doc_length=7, scale=None):
    """A random batch: 1-3 documents of 0..max_doc_length tokens, each cut into
    1-3 sentences; per document either one random recursive tree with permuted
    positions (arcs across sentence ends then ignored) or one such tree per
    sentence; roots as -1 or self; spans from ``source``; K labels; scores and
    transitions ~ normal with a random scale up to 5."""
    source = source or SOURCES[int(rng.integers(len(SOURCES)))]
    n_docs = int(rng.integers(1, 4))
    doc_lengths = rng.integers(0, max_doc_length + 1, n_docs)
    doc_offsets = np.concatenate([[0], np.cumsum(doc_lengths)]).astype(np.int64)
    cuts = set(doc_offsets.tolist())
    heads = []
    for d in range(n_docs):
        first, n = int(doc_offsets[d]), int(doc_lengths[d])
        inner = sorted(set(rng.integers(first + 1, first + n, int(rng.integers(0, 3))).tolist())) if n > 1 else []
        cuts.update(inner)
        bounds = [first] + inner + [first + n]
        if rng.random() < 0.5:
            pieces = [(first, n)]
        else:
            pieces = [(a, b - a) for a, b in zip(bounds, bounds[1:])]
        for start, length in pieces:
            local = random_recursive_tree(length, rng)
            heads.append(np.where(local >= 0, local + start, -1))
    heads = np.concatenate(heads).astype(np.int64) if heads else np.zeros(0, dtype=np.int64)
    for t in np.flatnonzero(heads == -1):
        if rng.random() < 0.5:
            heads[t] = t
    sentence_offsets = np.array(sorted(cuts), dtype=np.int64)
    max_length = [None, 1, 2, 3, 4][int(rng.integers(5))]
    spans = spans_for(source, heads, sentence_offsets, max_length, rng)
    span_offsets = np.searchsorted(spans[:, 1], doc_offsets, side="left").astype(np.int64)
    K = n_labels or int(rng.choice([1, 2, 2, 3, 3, 4, 4]))
    scale = scale if scale is not None else rng.uniform(0.05, 5.0)
    scores = rng.normal(0.0, scale, (spans.shape[0], K))
    transitions = rng.normal(0.0, rng.uniform(0.05, 5.0), (K + 1, K + 1))
    return Batch(spans, span_offsets, doc_offsets, scores, transitions)


def tiles_every_document(batch, labels):
    """The spans labelled >= 0 tile each document, left to right, and O (0) is only on single tokens."""
    for d in range(len(batch.doc_offsets) - 1):
        rows = [s for s in range(batch.span_offsets[d], batch.span_offsets[d + 1]) if labels[s] >= 0]
        position = int(batch.doc_offsets[d])
        for s in sorted(rows, key=lambda r: batch.spans[r, 0]):
            if batch.spans[s, 0] != position:
                return False
            if labels[s] == 0 and batch.spans[s, 0] != batch.spans[s, 1]:
                return False
            if labels[s] >= batch.n_labels:
                return False
            position = int(batch.spans[s, 1]) + 1
        if position != batch.doc_offsets[d + 1]:
            return False
    return True


def segmentation_score(batch, labels):
    """Score of the segmentation ``labels`` from its chosen spans and its transition counts."""
    counts = transition_counts(batch.spans, batch.span_offsets, labels, batch.n_labels)
    chosen = np.flatnonzero(labels >= 0)
    return float(batch.scores[chosen, labels[chosen]].sum() + (counts * batch.transitions).sum()), counts


def test_brute_force_vectorised_equals_pure_python():
    """Sanity of the reference: the vectorised enumeration of brute_lattice
    gives the log Z, MAP score and number of labelled segmentations of a plain
    recursive generator over (span, label) sequences, document by document."""
    rng = np.random.default_rng(5)
    for _ in range(150):
        batch = random_lattice_batch(rng, max_doc_length=5)
        expected = brute_lattice(*batch.args)
        for d in range(len(batch.doc_offsets) - 1):
            lo, hi = batch.span_offsets[d], batch.span_offsets[d + 1]
            first, end = batch.doc_offsets[d], batch.doc_offsets[d + 1]
            local = [list(s) for s in batch.spans[lo:hi]]
            all_scores = [
                pure_python_score([(lo + r, y) for r, y in seg], batch.scores, batch.transitions)
                for seg in pure_python_labelled_segmentations(local, first, end, batch.n_labels)
            ]
            assert len(all_scores) == expected["n_labelled"][d]
            top = max(all_scores)
            log_z = top + np.log(sum(np.exp(s - top) for s in all_scores))
            assert abs(log_z - expected["log_z"][d]) <= 1e-12 * max(1, abs(log_z))
            assert abs(top - expected["best_score"][d]) <= 1e-12 * max(1, abs(top))


def test_invariants_on_longer_documents():
    """On documents too long to enumerate (up to 40 tokens): span marginals,
    summed over labels and over the spans covering a token, are 1 for every
    token; the transition marginals sum to the expected number of segments
    plus one per non-empty document; multi-word spans have O marginal 0;
    the viterbi labels tile each document and score (spans + transition
    counts) exactly the reported best score, which is at most log Z."""
    rng = np.random.default_rng(123)
    for _ in range(200):
        batch = random_lattice_batch(rng, max_doc_length=40)
        log_z, span_marginals, transition_marginals = marginals(*batch.args)
        np.testing.assert_allclose(log_z, log_partition(*batch.args), rtol=1e-12)
        N = int(batch.doc_offsets[-1])
        coverage = np.zeros(N)
        for (u, v), m in zip(batch.spans, span_marginals.sum(axis=1)):
            coverage[u : v + 1] += m
        np.testing.assert_allclose(coverage, 1.0, rtol=1e-9)
        assert np.all(span_marginals[batch.spans[:, 0] != batch.spans[:, 1], 0] == 0)
        assert np.all(span_marginals >= 0)
        n_nonempty = int(np.count_nonzero(np.diff(batch.doc_offsets)))
        np.testing.assert_allclose(transition_marginals.sum(), span_marginals.sum() + n_nonempty, rtol=1e-9)
        K = batch.n_labels
        np.testing.assert_allclose(transition_marginals[K].sum(), n_nonempty, rtol=1e-9)  # one start per document
        np.testing.assert_allclose(transition_marginals[:, K].sum(), n_nonempty, rtol=1e-9)  # one end per document
        best, labels = viterbi(*batch.args)
        assert tiles_every_document(batch, labels)
        score, _ = segmentation_score(batch, labels)
        assert_rel_or_abs(score, best.sum(), "viterbi score from counts")
        assert np.all(best <= log_z + 1e-9)


def test_empty_documents():
    """Empty documents have log Z 0, MAP score 0, no segment and no
    transition; they do not disturb their neighbours."""
    K = 3
    transitions = np.arange((K + 1) ** 2, dtype=float).reshape(K + 1, K + 1)
    empty = (np.zeros((0, 2), dtype=np.int64), [0, 0, 0], [0, 0, 0], np.zeros((0, K)), transitions)
    np.testing.assert_array_equal(log_partition(*empty), [0.0, 0.0])
    z, m, t = marginals(*empty)
    np.testing.assert_array_equal(z, [0.0, 0.0])
    assert m.shape == (0, K) and np.all(t == 0)
    best, labels = viterbi(*empty)
    np.testing.assert_array_equal(best, [0.0, 0.0])
    assert labels.shape == (0,)
    np.testing.assert_array_equal(transition_counts(empty[0], empty[1], labels, K), np.zeros((K + 1, K + 1)))
    # empty, one token, empty: the token's document is alone in its sum
    spans = np.array([[0, 0]])
    scores = np.array([[0.5, -1.0, 2.0]])
    args = (spans, [0, 0, 1, 1], [0, 0, 1, 1], scores, transitions)
    expected = [np.logaddexp.reduce([scores[0, y] + transitions[K, y] + transitions[y, K] for y in range(K)])]
    np.testing.assert_allclose(log_partition(*args), [0.0, expected[0], 0.0], rtol=1e-14)
    best, labels = viterbi(*args)
    y = int(np.argmax([scores[0, y] + transitions[K, y] + transitions[y, K] for y in range(K)]))
    np.testing.assert_array_equal(labels, [y])
    np.testing.assert_allclose(best, [0.0, scores[0, y] + transitions[K, y] + transitions[y, K], 0.0], rtol=1e-14)


def test_hand_computed_two_token_document():
    """Two tokens, spans [0,0], [1,1], [0,1], K = 2 (O and E): the three
    labelled segmentations of 'E' over [0,1], and the 4 over singles, by hand."""
    spans = np.array([[0, 0], [1, 1], [0, 1]])
    scores = np.array([[0.1, 0.2], [0.3, 0.4], [9.0, 0.5]])  # 9.0: O on a two-word span, never used
    T = np.array([[0.01, 0.02, 0.03], [0.04, 0.05, 0.06], [0.07, 0.08, 0.0]])
    B = 2
    paths = {
        ((0, 0), (1, 0)): 0.1 + 0.3 + T[B, 0] + T[0, 0] + T[0, B],
        ((0, 0), (1, 1)): 0.1 + 0.4 + T[B, 0] + T[0, 1] + T[1, B],
        ((0, 1), (1, 0)): 0.2 + 0.3 + T[B, 1] + T[1, 0] + T[0, B],
        ((0, 1), (1, 1)): 0.2 + 0.4 + T[B, 1] + T[1, 1] + T[1, B],
        ((2, 1),): 0.5 + T[B, 1] + T[1, B],
    }
    args = (spans, [0, 3], [0, 2], scores, T)
    log_z = np.logaddexp.reduce(list(paths.values()))
    np.testing.assert_allclose(log_partition(*args), [log_z], rtol=1e-15)
    _, m, _ = marginals(*args)
    assert m[2, 0] == 0.0
    np.testing.assert_allclose(m[2, 1], np.exp(paths[((2, 1),)] - log_z), rtol=1e-13)
    np.testing.assert_allclose(
        m[0, 1], np.exp(np.logaddexp(paths[((0, 1), (1, 0))], paths[((0, 1), (1, 1))]) - log_z), rtol=1e-13
    )
    best, labels = viterbi(*args)
    top = max(paths, key=paths.get)
    assert best[0] == pytest.approx(paths[top], rel=1e-15)
    expected_labels = [-1, -1, -1]
    for row, label in top:
        expected_labels[row] = label
    np.testing.assert_array_equal(labels, expected_labels)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def small_batch():
    rng = np.random.default_rng(0)
    while True:
        batch = random_lattice_batch(rng, "semi_markov", n_labels=3)
        if batch.doc_offsets[-1] >= 3 and len(batch.doc_offsets) >= 3:
            return batch


ALL_OPERATIONS = [log_partition, marginals, viterbi]


def _wrong_shapes(batch):
    S, K = batch.scores.shape
    yield "scores with an extra row", dict(scores=np.zeros((S + 1, K)))
    yield "scores with a missing row", dict(scores=np.zeros((S - 1, K)))
    yield "1-d scores", dict(scores=np.zeros(S))
    yield "3-d scores", dict(scores=np.zeros((S, K, 1)))
    yield "scores with no label", dict(scores=np.zeros((S, 0)))
    yield "transitions K x K", dict(transitions=np.zeros((K, K)))
    yield "transitions (K+1) x K", dict(transitions=np.zeros((K + 1, K)))
    yield "transitions (K+2) x (K+2)", dict(transitions=np.zeros((K + 2, K + 2)))
    yield "span_offsets shorter than doc_offsets", dict(span_offsets=batch.span_offsets[:-1])
    yield "span_offsets not ending at S", dict(span_offsets=np.append(batch.span_offsets[:-1], S - 1))
    yield "spans with three columns", dict(spans=np.zeros((S, 3), dtype=np.int64))


@pytest.mark.parametrize("operation", ALL_OPERATIONS)
@pytest.mark.parametrize("case", range(11))
def test_wrong_shapes_raise_value_error(operation, case):
    """Inconsistent shapes of scores, transitions, offsets or spans are ValueErrors."""
    batch = small_batch()
    name, change = list(_wrong_shapes(batch))[case]
    args = dict(
        spans=batch.spans,
        span_offsets=batch.span_offsets,
        doc_offsets=batch.doc_offsets,
        scores=batch.scores,
        transitions=batch.transitions,
    )
    args.update(change)
    with pytest.raises(ValueError):
        operation(**args)


@pytest.mark.parametrize("operation", ALL_OPERATIONS)
def test_missing_single_token_span_raises_value_error(operation):
    """Removing the one-token span of any token (offsets and scores adjusted)
    is a ValueError, as is a span whose first token is after its last."""
    batch = small_batch()
    for row in np.flatnonzero(batch.spans[:, 0] == batch.spans[:, 1]):
        spans = np.delete(batch.spans, row, axis=0)
        span_offsets = batch.span_offsets - (batch.span_offsets > row)
        with pytest.raises(ValueError):
            operation(spans, span_offsets, batch.doc_offsets, np.delete(batch.scores, row, axis=0), batch.transitions)
    reversed_span = batch.spans.copy()
    multi = int(np.flatnonzero(batch.spans[:, 0] != batch.spans[:, 1])[0])
    reversed_span[multi] = reversed_span[multi, ::-1]
    with pytest.raises(ValueError):
        operation(reversed_span, batch.span_offsets, batch.doc_offsets, batch.scores, batch.transitions)


# One-token spans present in the right number but not one per token of its own
# document: the check counts zero-width spans only.
UNCOVERED_TOKEN_CASES = {
    # doc 0 = tokens 0-1 lists only [0,0]; [1,1] is listed under doc 1 (tokens 2)
    "token's span listed under another document": (
        np.array([[0, 0], [1, 1], [2, 2]]),
        np.array([0, 1, 3]),
        np.array([0, 2, 3]),
    ),
    # one document of tokens 0-1 whose one-token spans are [0,0] twice, [1,1] missing
    "one-token span duplicated, another missing": (
        np.array([[0, 0], [0, 0], [0, 1]]),
        np.array([0, 3]),
        np.array([0, 2]),
    ),
}


def test_token_without_its_own_span_raises_value_error():
    """A token without a one-token span in its own document is a ValueError
    for log_partition, marginals and viterbi, even when the total number of
    one-token spans is right. Every case runs in one subprocess, viterbi
    last: on such input it has been seen to crash the interpreter."""
    cases = {name: [a.tolist() for a in arrays] for name, arrays in sorted(UNCOVERED_TOKEN_CASES.items())}
    program = f"""
import numpy as np
from spacy_depner.structures.lattice._segment_lattice import log_partition, marginals, viterbi
for case, (spans, span_offsets, doc_offsets) in {cases!r}.items():
    spans, span_offsets, doc_offsets = np.array(spans), np.array(span_offsets), np.array(doc_offsets)
    for operation in (log_partition, marginals, viterbi):
        try:
            result = operation(spans, span_offsets, doc_offsets, np.zeros((len(spans), 2)), np.zeros((3, 3)))
        except ValueError:
            print(case, operation.__name__, "ValueError", flush=True)
        else:
            print(case, operation.__name__, "returned", repr(result).replace(chr(10), " "), flush=True)
"""
    repo = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=repo, env=env
    )
    outcome = done.stdout.strip().splitlines()
    if done.returncode != 0:
        outcome.append(f"then the interpreter died (return code {done.returncode}) {done.stderr[-300:]}")
    assert outcome == [
        f"{case} {operation} ValueError" for case in cases for operation in ("log_partition", "marginals", "viterbi")
    ], "\n".join(outcome)


@pytest.mark.parametrize("operation", ["log_partition", "marginals", "viterbi"])
def test_a_duplicated_span_is_refused_through_the_protocol(operation):
    """A span listed twice would count each segmentation through it twice (a
    wrong log Z, silently): every operation refuses the layout, naming the row."""
    from spacy_depner.structures.lattice import LATTICE
    from spacy_depner.structures.lattice import layout as lattice_layout

    spans = np.array([[0, 0], [0, 1], [0, 1], [1, 1]])
    scores = (np.zeros((4, 2)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"listed twice.*span row 2: \[0, 1\]"):
        getattr(LATTICE, operation)(scores, lattice_layout(spans, [0, 2]))
    with pytest.raises(ValueError, match=r"listed twice.*span row 3: \[0, 1\]"):
        getattr(LATTICE, operation)(scores, lattice_layout(spans[[0, 1, 3, 1]], [0, 2]))


@pytest.mark.parametrize("kind", ["dgm", "dgm_s"])
def test_heads_with_a_cycle_are_refused_by_the_tree_spans(kind):
    """Heads [1, 2, 0] once listed [0, 2] twice; a cycle is a ValueError naming
    it, and an arc across a sentence end is still ignored, not a fault."""
    from spacy_depner.structures.trees.candidate_spans import candidate_spans

    with pytest.raises(ValueError, match=r"0 -> 1 -> 2 -> 0 form a cycle"):
        candidate_spans(kind, [1, 2, 0], [0, 3], None)
    across = candidate_spans(kind, [-1, 2, -1], [0, 2, 3], None)  # token 1's head is in the next sentence
    assert sorted(map(tuple, across.tolist())) == [(0, 0), (1, 1), (2, 2)]
