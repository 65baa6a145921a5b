"""What is particular to the linear chain (``structures.chain``; its
agreement with enumeration is ``test_protocol``'s table): the tag schemes
and their allowed-transition matrices (against a rule list over the tag
names, ``brute_linear_chain``), the twin itself, arbitrary allowed
matrices, a hand-computed document, invariants on long documents, span
conversions, ties, transition counts, empty documents and bad input.
"""

import itertools
import math

import numpy as np
import pytest
from brute_linear_chain import (
    LABELS,
    allowed_by_matrix,
    brute_chain,
    entities_of_names,
    every_sequence,
    expected_allowed_by_rules,
    is_valid_names,
    pure_python_score,
    valid_sequences,
)
from budgets import cases

from spacy_depner.structures.chain._linear_chain import (
    allowed_transitions,
    log_partition,
    marginals,
    n_tags,
    spans_to_tags,
    tag_names,
    tags_to_spans,
    transition_counts,
    viterbi,
)

RTOL = 1e-9
SCHEMES = ["BIO", "BILOU"]


def assert_rel(got, expected, what, rtol=RTOL):
    """|got - expected| <= rtol * |expected| elementwise, so exactly 0 where
    expected is 0 (marginals of impossible events)."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.isfinite(got)), (what, got)
    error = np.abs(got - expected)
    assert np.all(error <= rtol * np.abs(expected)), (
        f"{what}: max relative error {np.max(error / np.maximum(np.abs(expected), 1e-300))}\ngot {got}\nexpected {expected}"
    )


def assert_rel_or_abs(got, expected, what, rtol=RTOL):
    """Relative error with an absolute floor of rtol (scores and log Z may be near 0)."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    assert np.all(np.abs(got - expected) <= rtol * np.maximum(np.abs(expected), 1.0)), (
        f"{what}:\ngot {got}\nexpected {expected}"
    )


# ---------------------------------------------------------------------------
# Random batches
# ---------------------------------------------------------------------------


class Batch:
    def __init__(self, scheme, n_labels, doc_offsets, scores, transitions, allowed=None):
        self.scheme = scheme
        self.n_labels = n_labels
        self.doc_offsets = np.asarray(doc_offsets, dtype=np.int64)
        self.scores = scores
        self.transitions = transitions
        self.allowed = allowed_transitions(n_labels, scheme) if allowed is None else allowed

    @property
    def args(self):
        return self.scores, self.doc_offsets, self.transitions, self.allowed

    @property
    def names(self):
        return tag_names(LABELS[: self.n_labels], self.scheme)

    def sequences_of_length(self, n):
        return valid_sequences(self.scheme, self.n_labels, n)

    def docs(self):
        return [(int(a), int(b)) for a, b in zip(self.doc_offsets[:-1], self.doc_offsets[1:])]


def random_batch(rng, scheme=None, n_labels=None, max_doc_length=5, scale=None):
    """1-3 documents of 0..max_doc_length tokens; scores and transitions ~
    normal with random scales in [0.05, 5]."""
    scheme = scheme or SCHEMES[int(rng.integers(2))]
    n_labels = n_labels if n_labels is not None else int(rng.integers(1, 3))
    T = n_tags(n_labels, scheme)
    lengths = rng.integers(0, max_doc_length + 1, int(rng.integers(1, 4)))
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    scale = scale if scale is not None else rng.uniform(0.05, 5.0)
    scores = rng.normal(0.0, scale, (int(doc_offsets[-1]), T))
    transitions = rng.normal(0.0, rng.uniform(0.05, 5.0), (T + 1, T + 1))
    return Batch(scheme, n_labels, doc_offsets, scores, transitions)


def assert_valid(batch, tags):
    names = batch.names
    for first, end in batch.docs():
        assert is_valid_names([names[y] for y in tags[first:end]], batch.scheme), [names[y] for y in tags[first:end]]


def sequence_score(batch, tags):
    counts = transition_counts(tags, batch.doc_offsets, batch.scores.shape[1])
    return float(batch.scores[np.arange(len(tags)), tags].sum() + (counts * batch.transitions).sum())


def check_against_brute_force(batch, sequences_of_length=None, exact_map_path=True, check_valid=True):
    expected = brute_chain(
        batch.scores, batch.doc_offsets, batch.transitions, sequences_of_length or batch.sequences_of_length
    )

    assert_rel_or_abs(log_partition(*batch.args), expected["log_z"], "log_partition")

    log_z, tag_marginals, transition_marginals = marginals(*batch.args)
    assert_rel_or_abs(log_z, expected["log_z"], "marginals log Z")
    assert_rel(tag_marginals, expected["tag_marginals"], "tag marginals")
    assert_rel(transition_marginals, expected["transition_marginals"], "transition marginals")

    best, tags = viterbi(*batch.args)
    assert tags.shape == (batch.scores.shape[0],) and tags.dtype == np.int64
    assert_rel_or_abs(best, expected["best_score"], "viterbi score")
    if check_valid:
        assert_valid(batch, tags)
    for first, end in batch.docs():  # an allowed sequence, whatever the matrix
        if end > first:
            assert allowed_by_matrix(tags[None, first:end], batch.allowed)[0]
    if exact_map_path:
        np.testing.assert_array_equal(tags, expected["best_tags"])
        np.testing.assert_array_equal(
            transition_counts(tags, batch.doc_offsets, batch.scores.shape[1]), expected["best_counts"]
        )
    assert_rel_or_abs(sequence_score(batch, tags), best.sum(), "score of the viterbi tags")
    return expected


# ---------------------------------------------------------------------------
# Tag sets and the allowed matrix
# ---------------------------------------------------------------------------


def test_tag_names():
    assert tag_names(["PER", "LOC"], "BIO") == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    assert tag_names(["PER", "LOC"], "BILOU") == [
        "O",
        "B-PER",
        "I-PER",
        "L-PER",
        "U-PER",
        "B-LOC",
        "I-LOC",
        "L-LOC",
        "U-LOC",
    ]
    assert tag_names([], "BIO") == ["O"]
    assert [n_tags(k, s) for s in SCHEMES for k in (0, 1, 3)] == [1, 3, 7, 1, 5, 13]
    for bad in ("BILUO", "bio", "IOB", ""):
        with pytest.raises(ValueError):
            tag_names(["PER"], bad)
        with pytest.raises(ValueError):
            allowed_transitions(1, bad)
        with pytest.raises(ValueError):
            tags_to_spans([0], [0, 1], bad, 1)
        with pytest.raises(ValueError):
            spans_to_tags(np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64), 1, bad)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_allowed_matrix_is_exact(scheme):
    """For 0-3 labels: the matrix equals the rule list of the docstring; on
    every sequence of 1..5 tokens (1-2 labels) it selects exactly the
    sequences that ``is_valid_names`` accepts; every allowed pair is used by
    some valid sequence (no dead entry); start -> end is False."""
    for k in range(4):
        allowed = allowed_transitions(k, scheme)
        assert allowed.dtype == np.bool_ and allowed.shape == (n_tags(k, scheme) + 1,) * 2
        np.testing.assert_array_equal(allowed, expected_allowed_by_rules(k, scheme))
        assert not allowed[-1, -1]
    for k in (1, 2):
        T = n_tags(k, scheme)
        used = np.zeros((T + 1, T + 1), dtype=bool)
        for n in range(1, 6):
            sequences = valid_sequences(scheme, k, n)  # asserts matrix == rules
            assert 0 < sequences.shape[0] < T**n
            full = np.concatenate([np.full((len(sequences), 1), T), sequences, np.full((len(sequences), 1), T)], axis=1)
            used[full[:, :-1], full[:, 1:]] = True
        np.testing.assert_array_equal(used, allowed_transitions(k, scheme))


# ---------------------------------------------------------------------------
# Against brute force
# ---------------------------------------------------------------------------


def test_brute_force_vectorised_equals_pure_python():
    """Sanity of the reference: the vectorised scores of brute_chain give the
    log Z and MAP score of a plain loop over valid sequences scored by the formula."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        batch = random_batch(rng, max_doc_length=4)
        expected = brute_chain(batch.scores, batch.doc_offsets, batch.transitions, batch.sequences_of_length)
        names = batch.names
        for d, (first, end) in enumerate(batch.docs()):
            all_scores = [
                pure_python_score(tags, batch.scores[first:end].tolist(), batch.transitions.tolist())
                for tags in itertools.product(range(len(names)), repeat=end - first)
                if is_valid_names([names[y] for y in tags], batch.scheme)
            ]
            top = max(all_scores)
            log_z = top + math.log(sum(math.exp(s - top) for s in all_scores))
            assert len(all_scores) == expected["n_sequences"][d]
            assert abs(log_z - expected["log_z"][d]) <= 1e-12 * max(1, abs(log_z))
            assert abs(top - expected["best_score"][d]) <= 1e-12 * max(1, abs(top))


def test_arbitrary_allowed_matrices_equal_brute_force():
    """The operations take any allowed matrix: on random masks over T = 1..4
    tags (each pair allowed with probability 0.3-0.9), batches whose every
    document has an allowed sequence equal enumeration pruned by the matrix;
    the others are ValueErrors."""
    rng = np.random.default_rng(7)
    checked = refused = 0
    for _ in range(cases("linear_chain.sequences")):
        T = int(rng.integers(1, 5))
        allowed = rng.random((T + 1, T + 1)) < rng.uniform(0.3, 0.9)
        lengths = rng.integers(0, 6, int(rng.integers(1, 4)))
        doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        scale = rng.uniform(0.05, 5.0)
        batch = Batch(
            "BIO",
            0,
            doc_offsets,
            rng.normal(0, scale, (int(doc_offsets[-1]), T)),
            rng.normal(0, scale, (T + 1, T + 1)),
            allowed,
        )

        def sequences_of_length(n):
            everything = every_sequence(T, n)
            return everything if n == 0 else everything[allowed_by_matrix(everything, allowed)]

        if all(sequences_of_length(b - a).shape[0] > 0 for a, b in batch.docs()):
            check_against_brute_force(batch, sequences_of_length, check_valid=False)
            checked += 1
        else:
            for operation in (log_partition, marginals, viterbi):
                with pytest.raises(ValueError, match="no tag sequence"):
                    operation(*batch.args)
            refused += 1
    assert checked > cases("linear_chain.sequences") // 3 and refused > cases("linear_chain.sequences") // 12


def test_hand_computed_two_token_document():
    """BIO, one label (O, B, I), two tokens: the 5 valid sequences OO, OB,
    BO, BB, BI by hand (OI and I at the start are not in the space)."""
    s = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    T = np.arange(16, dtype=float).reshape(4, 4) / 10.0
    O, Bg, I, E = 0, 1, 2, 3
    paths = {
        (O, O): s[0, O] + s[1, O] + T[E, O] + T[O, O] + T[O, E],
        (O, Bg): s[0, O] + s[1, Bg] + T[E, O] + T[O, Bg] + T[Bg, E],
        (Bg, O): s[0, Bg] + s[1, O] + T[E, Bg] + T[Bg, O] + T[O, E],
        (Bg, Bg): s[0, Bg] + s[1, Bg] + T[E, Bg] + T[Bg, Bg] + T[Bg, E],
        (Bg, I): s[0, Bg] + s[1, I] + T[E, Bg] + T[Bg, I] + T[I, E],
    }
    args = (s, [0, 2], T, allowed_transitions(1, "BIO"))
    log_z = np.logaddexp.reduce(list(paths.values()))
    np.testing.assert_allclose(log_partition(*args), [log_z], rtol=1e-15)
    _, m, t = marginals(*args)
    assert m[0, I] == 0.0 and t[O, I] == 0.0 and t[E, I] == 0.0 and t[E, E] == 0.0
    np.testing.assert_allclose(m[1, I], np.exp(paths[(Bg, I)] - log_z), rtol=1e-13)
    np.testing.assert_allclose(t[Bg, Bg], np.exp(paths[(Bg, Bg)] - log_z), rtol=1e-13)
    best, tags = viterbi(*args)
    top = max(paths, key=paths.get)
    assert best[0] == pytest.approx(paths[top], rel=1e-15)
    assert tuple(tags) == top == (Bg, I)


# ---------------------------------------------------------------------------
# Longer documents, spans, batching, empty documents
# ---------------------------------------------------------------------------


def test_invariants_on_longer_documents():
    """Documents of up to 60 tokens, 1-4 labels: tag marginals sum to 1 per
    token and vanish where a tag cannot stand (I first in BIO, B / I last in
    BILOU); transition marginals vanish on disallowed pairs, their start row
    and end column sum to the number of non-empty documents, and all of them
    to N + that number; the viterbi tags are valid, score (scores +
    transition counts) exactly the reported best, which is at most log Z."""
    rng = np.random.default_rng(123)
    for _ in range(150):
        batch = random_batch(rng, n_labels=int(rng.integers(1, 5)), max_doc_length=60)
        log_z, tag_marginals, transition_marginals = marginals(*batch.args)
        np.testing.assert_allclose(log_z, log_partition(*batch.args), rtol=1e-12)
        np.testing.assert_allclose(tag_marginals.sum(axis=1), 1.0, rtol=1e-9)
        assert np.all(tag_marginals >= 0) and np.all(transition_marginals >= 0)
        assert np.all(transition_marginals[~batch.allowed] == 0.0)
        names = batch.names
        starts = [a for a, b in batch.docs() if b > a]
        lasts = [b - 1 for a, b in batch.docs() if b > a]
        for y, name in enumerate(names):
            if name.startswith("I-") or (batch.scheme == "BILOU" and name.startswith("L-")):
                assert np.all(tag_marginals[starts, y] == 0.0)
            if batch.scheme == "BILOU" and name[:2] in ("B-", "I-"):
                assert np.all(tag_marginals[lasts, y] == 0.0)
        T = len(names)
        n_nonempty = len(starts)
        np.testing.assert_allclose(transition_marginals[T].sum(), n_nonempty, rtol=1e-9)
        np.testing.assert_allclose(transition_marginals[:, T].sum(), n_nonempty, rtol=1e-9)
        np.testing.assert_allclose(transition_marginals.sum(), batch.scores.shape[0] + n_nonempty, rtol=1e-9)
        best, tags = viterbi(*batch.args)
        assert_valid(batch, tags)
        assert_rel_or_abs(sequence_score(batch, tags), best.sum(), "viterbi score from counts")
        assert np.all(best <= log_z + 1e-9)


def random_spans(rng, doc_offsets, n_labels):
    """Random non-overlapping spans inside documents, sorted, with random labels."""
    spans = []
    for first, end in zip(doc_offsets[:-1], doc_offsets[1:]):
        t = int(first)
        while t < end:
            if rng.random() < 0.4:
                last = min(int(end) - 1, t + int(rng.integers(0, 4)))
                spans.append((t, last))
                t = last + 1
            t += int(rng.integers(0, 3))
    spans = np.array(spans, dtype=np.int64).reshape(-1, 2)
    return spans, rng.integers(0, n_labels, spans.shape[0]).astype(np.int64)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_spans_round_trip(scheme):
    """tags_to_spans(spans_to_tags(x)) == x for random non-overlapping spans
    (given in any order to spans_to_tags), and the tags are valid."""
    rng = np.random.default_rng(11 + SCHEMES.index(scheme))
    for _ in range(cases("linear_chain.long")):
        n_labels = int(rng.integers(1, 4))
        lengths = rng.integers(0, 15, int(rng.integers(1, 5)))
        doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        spans, labels = random_spans(rng, doc_offsets, n_labels)
        order = rng.permutation(len(spans))
        tags = spans_to_tags(spans[order], labels[order], int(doc_offsets[-1]), scheme)
        assert tags.dtype == np.int64 and tags.shape == (doc_offsets[-1],)
        batch = Batch(scheme, n_labels, doc_offsets, np.zeros((len(tags), 1)), None)
        assert_valid(batch, tags)
        got_spans, got_labels = tags_to_spans(tags, doc_offsets, scheme, n_labels)
        assert got_spans.dtype == np.int64 and got_labels.dtype == np.int64
        np.testing.assert_array_equal(got_spans, spans)
        np.testing.assert_array_equal(got_labels, labels)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_spans_of_every_valid_sequence(scheme):
    """Every valid sequence of 1-5 tokens with 2 labels (split into two
    documents at every valid cut for n = 4): tags_to_spans gives the
    entities of a plain scan over the tag names, and spans_to_tags gives the
    sequence back."""
    names = tag_names(LABELS[:2], scheme)
    for n in range(1, 6):
        for row in valid_sequences(scheme, 2, n):
            entities = entities_of_names([names[y] for y in row])
            spans, labels = tags_to_spans(row, [0, n], scheme, 2)
            assert [(int(a), int(b), LABELS[int(k)]) for (a, b), k in zip(spans, labels)] == entities
            np.testing.assert_array_equal(spans_to_tags(spans, labels, n, scheme), row)
    for left in valid_sequences(scheme, 2, 2):
        for right in valid_sequences(scheme, 2, 2):
            tags = np.concatenate([left, right])
            spans, labels = tags_to_spans(tags, [0, 2, 4], scheme, 2)
            entities = entities_of_names([names[y] for y in left]) + [
                (a + 2, b + 2, k) for a, b, k in entities_of_names([names[y] for y in right])
            ]
            assert [(int(a), int(b), LABELS[int(k)]) for (a, b), k in zip(spans, labels)] == entities


def test_tags_to_spans_rejects_invalid_sequences():
    """Every sequence the rules reject (1-3 tokens, 1 label) is a ValueError,
    as is a valid-looking continuation across a document boundary."""
    for scheme in SCHEMES:
        names = tag_names(LABELS[:1], scheme)
        for n in range(1, 4):
            for row in every_sequence(len(names), n):
                if not is_valid_names([names[y] for y in row], scheme):
                    with pytest.raises(ValueError, match="not a valid"):
                        tags_to_spans(row, [0, n], scheme, 1)
    with pytest.raises(ValueError):  # B-X | I-X across documents
        tags_to_spans([1, 2], [0, 1, 2], "BIO", 1)
    with pytest.raises(ValueError):  # B-X | L-X across documents
        tags_to_spans([1, 3], [0, 1, 2], "BILOU", 1)
    tags_to_spans([1, 2], [0, 2], "BIO", 1)
    tags_to_spans([1, 3], [0, 2], "BILOU", 1)


def test_long_inputs_are_fast_and_consistent():
    """200 documents, 100k tokens, BILOU with 4 labels (T = 17): the
    recursions and conversions run, viterbi tags are valid and round-trip."""
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 1000, 200)
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    batch = Batch("BILOU", 4, doc_offsets, rng.normal(0, 2, (int(doc_offsets[-1]), 17)), rng.normal(0, 2, (18, 18)))
    log_z, tag_marginals, _ = marginals(*batch.args)
    np.testing.assert_allclose(tag_marginals.sum(axis=1), 1.0, rtol=1e-9)
    best, tags = viterbi(*batch.args)
    assert np.all(best <= log_z)
    spans, labels = tags_to_spans(tags, doc_offsets, "BILOU", 4)
    np.testing.assert_array_equal(spans_to_tags(spans, labels, len(tags), "BILOU"), tags)
    assert_rel_or_abs(sequence_score(batch, tags), best.sum(), "viterbi score", rtol=1e-9)


def test_empty_documents():
    """Empty documents have log Z 0, MAP score 0, no tag and no transition
    (not even start -> end); a batch of empty documents only works; they do
    not disturb their neighbours."""
    allowed = allowed_transitions(1, "BIO")
    transitions = np.arange(16, dtype=float).reshape(4, 4)
    empty = (np.zeros((0, 3)), [0, 0, 0], transitions, allowed)
    np.testing.assert_array_equal(log_partition(*empty), [0.0, 0.0])
    z, m, t = marginals(*empty)
    np.testing.assert_array_equal(z, [0.0, 0.0])
    assert m.shape == (0, 3) and t.shape == (4, 4) and np.all(t == 0)
    best, tags = viterbi(*empty)
    np.testing.assert_array_equal(best, [0.0, 0.0])
    assert tags.shape == (0,) and tags.dtype == np.int64
    np.testing.assert_array_equal(transition_counts(tags, [0, 0, 0], 3), np.zeros((4, 4)))
    spans, labels = tags_to_spans(tags, [0, 0, 0], "BIO", 1)
    assert spans.shape == (0, 2) and labels.shape == (0,)
    assert spans_to_tags(spans, labels, 0, "BIO").shape == (0,)
    assert log_partition(np.zeros((0, 3)), [0], transitions, allowed).shape == (0,)  # no document at all
    # empty, one token, empty: the token's document is alone in its sum
    scores = np.array([[0.5, -1.0, 2.0]])
    args = (scores, [0, 0, 1, 1], transitions, allowed)
    per_tag = [scores[0, y] + transitions[3, y] + transitions[y, 3] for y in (0, 1)]  # I cannot start
    np.testing.assert_allclose(log_partition(*args), [0.0, np.logaddexp(*per_tag), 0.0], rtol=1e-14)
    best, tags = viterbi(*args)
    np.testing.assert_array_equal(tags, [int(np.argmax(per_tag))])
    np.testing.assert_allclose(best, [0.0, max(per_tag), 0.0], rtol=1e-14)


def test_ties_go_to_lower_tags():
    """With every score and transition 0 all valid sequences tie; viterbi
    breaks ties towards lower tag indices and so tags everything O."""
    for scheme in SCHEMES:
        for k in (1, 3):
            T = n_tags(k, scheme)
            best, tags = viterbi(
                np.zeros((9, T)), [0, 4, 4, 9], np.zeros((T + 1, T + 1)), allowed_transitions(k, scheme)
            )
            np.testing.assert_array_equal(best, [0.0, 0.0, 0.0])
            np.testing.assert_array_equal(tags, np.zeros(9, dtype=np.int64))


def test_transition_counts_by_hand():
    """BILOU, one label (O B I L U), docs [B I L O], [], [U]."""
    counts = transition_counts([1, 2, 3, 0, 4], [0, 4, 4, 5], 5)
    expected = np.zeros((6, 6))
    for a, b in [(5, 1), (1, 2), (2, 3), (3, 0), (0, 5), (5, 4), (4, 5)]:
        expected[a, b] += 1
    np.testing.assert_array_equal(counts, expected)
    assert counts.dtype == np.float64


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def small_batch():
    rng = np.random.default_rng(0)
    while True:
        batch = random_batch(rng, "BILOU", 2)
        if batch.doc_offsets[-1] >= 3 and len(batch.doc_offsets) >= 3:
            return batch


ALL_OPERATIONS = [log_partition, marginals, viterbi]


def _bad_layouts(batch):
    N, T = batch.scores.shape
    off = batch.doc_offsets
    yield "scores with an extra row", dict(scores=np.zeros((N + 1, T)))
    yield "scores with a missing row", dict(scores=np.zeros((N - 1, T)))
    yield "1-d scores", dict(scores=np.zeros(N))
    yield "3-d scores", dict(scores=np.zeros((N, T, 1)))
    yield "scores with no tag", dict(scores=np.zeros((N, 0)))
    yield "transitions T x T", dict(transitions=np.zeros((T, T)))
    yield "transitions (T+1) x T", dict(transitions=np.zeros((T + 1, T)))
    yield "transitions (T+2) x (T+2)", dict(transitions=np.zeros((T + 2, T + 2)))
    yield "allowed T x T", dict(allowed=np.ones((T, T), dtype=bool))
    yield "allowed as floats", dict(allowed=batch.allowed.astype(float))
    yield "offsets not ending at N", dict(doc_offsets=np.append(off[:-1], N - 1))
    yield "offsets past N", dict(doc_offsets=np.append(off, N + 1))
    yield "offsets not starting at 0", dict(doc_offsets=off + 1)
    yield "decreasing offsets", dict(doc_offsets=np.array([0, N, 1, N]))
    yield "empty offsets", dict(doc_offsets=np.zeros(0, dtype=np.int64))
    yield "2-d offsets", dict(doc_offsets=off[None, :])
    yield "float offsets", dict(doc_offsets=off.astype(float))
    yield "nothing allowed", dict(allowed=np.zeros((T + 1, T + 1), dtype=bool))
    yield "no allowed end", dict(allowed=np.where(np.arange(T + 1) == T, False, batch.allowed))
    yield "only even lengths", dict(doc_offsets=np.array([0, N]), allowed=_even_lengths_only(T))


def _even_lengths_only(T):
    """Allowed: start -> 0 -> 1 -> 0 -> ... with 1 -> end only: even lengths only."""
    allowed = np.zeros((T + 1, T + 1), dtype=bool)
    allowed[T, 0] = allowed[0, 1] = allowed[1, 0] = allowed[1, T] = True
    return allowed


@pytest.mark.parametrize("operation", ALL_OPERATIONS)
@pytest.mark.parametrize("case", range(20))
def test_bad_layouts_raise_value_error(operation, case):
    """Inconsistent shapes, bad offsets, a non-boolean or infeasible allowed
    matrix are ValueErrors."""
    batch = small_batch()
    assert batch.doc_offsets[-1] % 2 == 1  # so that "only even lengths" is infeasible
    name, change = list(_bad_layouts(batch))[case]
    args = dict(
        scores=batch.scores, doc_offsets=batch.doc_offsets, transitions=batch.transitions, allowed=batch.allowed
    )
    args.update(change)
    with pytest.raises(ValueError):
        operation(**args)


def test_bad_tags_and_spans_raise_value_error():
    for bad_tags, offsets in [
        ([0, 5], [0, 2]),
        ([0, -1], [0, 2]),
        ([0, 1], [0, 1]),
        ([[0, 1]], [0, 2]),
        ([0.0, 1.0], [0, 2]),
    ]:
        with pytest.raises(ValueError):
            transition_counts(bad_tags, offsets, 5)
        with pytest.raises(ValueError):
            tags_to_spans(bad_tags, offsets, "BILOU", 1)
    with pytest.raises(ValueError):
        transition_counts([0], [0, 1], 0)
    ok_labels = np.array([0, 0])
    for spans in (
        [[0, 2], [2, 3]],
        [[0, 2], [1, 1]],
        [[3, 4], [0, 3]],
        [[0, 5], [6, 6]],
        [[-1, 0], [2, 2]],
        [[2, 1], [3, 3]],
    ):
        with pytest.raises(ValueError):
            spans_to_tags(np.array(spans), ok_labels, 6, "BIO")
    with pytest.raises(ValueError):
        spans_to_tags(np.array([[0, 0], [2, 2]]), np.array([0, -1]), 6, "BIO")
    with pytest.raises(ValueError):
        spans_to_tags(np.array([[0, 0, 1]]), np.array([0]), 6, "BIO")
    with pytest.raises(ValueError):
        spans_to_tags(np.array([[0, 0]]), np.array([0, 1]), 6, "BIO")
