"""Entity marginals and posterior decoding of the linear chain
(``entity_marginals``) against brute force: every valid BIO / BILOU tag sequence
of each document is enumerated (``brute_linear_chain``, which finds them by
the allowed matrix and by a rule list over tag names), weighted by its
probability, and read into entities by a plain scan of the tag names; an
entity's marginal is the total probability of the sequences that spell it.
Posterior decoding must reach the largest sum of (marginal - penalty) over
the entities of any tag sequence, with an entity set that one tag sequence
spells."""

import math

import numpy as np
import pytest
from brute_linear_chain import LABELS, entities_of_names, valid_sequences

from spacy_depner.structures.chain import CHAIN
from spacy_depner.structures.chain import layout as chain_layout
from spacy_depner.structures.chain._linear_chain import (
    allowed_transitions,
    marginals,
    n_tags,
    spans_to_tags,
    tag_names,
    tags_to_spans,
)
from spacy_depner.structures.chain.entity_marginals import entity_marginals, span_marginals

SCHEMES = ["BIO", "BILOU"]


def posterior_decode(scores, doc_offsets, transitions, scheme, penalty):
    """The chain's posterior decoding through the protocol: (gain (D,), spans
    (M, 2), labels (M,), marginals (M,))."""
    layout = chain_layout(doc_offsets)
    marginals = CHAIN.marginals((scores, transitions), layout, scheme=scheme)
    analysis = CHAIN.posterior_decode(marginals, layout, penalty=penalty, scheme=scheme)
    return analysis.score, analysis.mentions[:, :2], analysis.mentions[:, 2], marginals.of(analysis.mentions)


def random_chain(rng, scheme, n_labels, max_doc_length=5, scale=None):
    lengths = rng.integers(0, max_doc_length + 1, int(rng.integers(1, 4)))
    doc_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    T = n_tags(n_labels, scheme)
    scale = scale if scale is not None else rng.uniform(0.1, 4.0)
    return rng.normal(0.0, scale, (int(doc_offsets[-1]), T)), doc_offsets, rng.normal(0.0, scale, (T + 1, T + 1))


def brute_entity_marginals(scores, doc_offsets, transitions, scheme, n_labels):
    """{(first, last, label index): marginal} over every valid sequence, and
    per document the list of (entity set, probability) of its sequences."""
    names = tag_names(LABELS[:n_labels], scheme)
    B = len(names)
    found, per_doc = {}, []
    for d in range(len(doc_offsets) - 1):
        first, n = int(doc_offsets[d]), int(doc_offsets[d + 1] - doc_offsets[d])
        analyses = []
        if n:
            sequences = valid_sequences(scheme, n_labels, n)
            full = np.concatenate([np.full((len(sequences), 1), B), sequences, np.full((len(sequences), 1), B)], axis=1)
            weights = scores[first + np.arange(n), sequences].sum(axis=1) + transitions[full[:, :-1], full[:, 1:]].sum(
                axis=1
            )
            top = weights.max()
            probabilities = np.exp(weights - top - math.log(np.exp(weights - top).sum()))
            for sequence, p in zip(sequences, probabilities):
                entities = frozenset(
                    (first + a, first + b, LABELS.index(label))
                    for a, b, label in entities_of_names([names[y] for y in sequence])
                )
                analyses.append((entities, p))
                for entity in entities:
                    found[entity] = found.get(entity, 0.0) + p
        else:
            analyses.append((frozenset(), 1.0))
        per_doc.append(analyses)
    return found, per_doc


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("seed", range(15))
def test_every_entity_marginal_equals_enumeration(scheme, seed):
    rng = np.random.default_rng(seed)
    n_labels = int(rng.integers(1, 3))
    scores, doc_offsets, transitions = random_chain(rng, scheme, n_labels)
    expected, _ = brute_entity_marginals(scores, doc_offsets, transitions, scheme, n_labels)
    spans, labels, values = span_marginals(scores, doc_offsets, transitions, scheme)
    got = {(int(a), int(b), int(k)): v for (a, b), k, v in zip(spans, labels, values)}
    every = {
        (a, b, k)
        for d in range(len(doc_offsets) - 1)
        for a in range(doc_offsets[d], doc_offsets[d + 1])
        for b in range(a, doc_offsets[d + 1])
        for k in range(n_labels)
    }
    assert set(got) == every and len(got) == len(spans)  # every entity once, floor -1
    for entity in every:
        assert abs(got[entity] - expected.get(entity, 0.0)) <= 1e-9 * max(expected.get(entity, 0.0), 1e-3), entity
    # the floor keeps exactly the entities above it
    floor = float(rng.random())
    spans_f, labels_f, values_f = span_marginals(scores, doc_offsets, transitions, scheme, floor=floor)
    assert {(int(a), int(b), int(k)) for (a, b), k in zip(spans_f, labels_f)} == {e for e in every if got[e] > floor}
    # marginals of given entities, in any order
    picked = list(every)
    rng.shuffle(picked)
    picked = np.array(picked, dtype=np.int64).reshape(-1, 3)
    np.testing.assert_allclose(
        entity_marginals(scores, doc_offsets, transitions, scheme, picked[:, :2], picked[:, 2]),
        [got[tuple(row)] for row in picked.tolist()],
        rtol=1e-12,
        atol=0,
    )


@pytest.mark.parametrize("scheme", SCHEMES)
def test_marginals_agree_with_tag_marginals_on_a_long_document(scheme):
    """One-token BILOU entities are U tags, and for each label the expected
    number of entities is the expected number of begin (B or U) tags."""
    rng = np.random.default_rng(3)
    n_labels = 3
    scores, _, transitions = random_chain(rng, scheme, n_labels, scale=2.0)
    scores = rng.normal(0.0, 2.0, (60, scores.shape[1]))
    doc_offsets = np.array([0, 25, 60])
    spans, labels, values = span_marginals(scores, doc_offsets, transitions, scheme)
    _, tag_marginals, _ = marginals(scores, doc_offsets, transitions, allowed_transitions(n_labels, scheme))
    width = 2 if scheme == "BIO" else 4
    for k in range(n_labels):
        begins = tag_marginals[:, 1 + width * k].sum() + (
            tag_marginals[:, 4 + 4 * k].sum() if scheme == "BILOU" else 0.0
        )
        assert abs(values[labels == k].sum() - begins) < 1e-9
        if scheme == "BILOU":
            single = (labels == k) & (spans[:, 0] == spans[:, 1])
            np.testing.assert_allclose(values[single], tag_marginals[spans[single, 0], 4 + 4 * k], rtol=1e-9)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("seed", range(15))
def test_posterior_decode_equals_the_best_tag_sequence(scheme, seed):
    rng = np.random.default_rng(100 + seed)
    n_labels = int(rng.integers(1, 3))
    scores, doc_offsets, transitions = random_chain(rng, scheme, n_labels)
    penalty = float(rng.choice([0.0, 1.0, rng.random()]))
    expected, per_doc = brute_entity_marginals(scores, doc_offsets, transitions, scheme, n_labels)
    best = [max(sum(expected[e] - penalty for e in entities) for entities, _ in analyses) for analyses in per_doc]
    gain, spans, labels, values = posterior_decode(scores, doc_offsets, transitions, scheme, penalty)
    np.testing.assert_allclose(gain, best, rtol=0, atol=1e-9)
    # a valid tag sequence spells exactly the decoded entities, whose gains sum to the objective
    tags = spans_to_tags(spans, labels, int(doc_offsets[-1]), scheme)
    back, back_labels = tags_to_spans(tags, doc_offsets, scheme, n_labels)
    assert sorted(map(tuple, np.c_[back, back_labels].tolist())) == sorted(map(tuple, np.c_[spans, labels].tolist()))
    np.testing.assert_allclose(
        values, [expected.get((int(a), int(b), int(k)), 0.0) for (a, b), k in zip(spans, labels)], atol=1e-9
    )
    doc_of = np.searchsorted(doc_offsets, spans[:, 0], side="right") - 1
    np.testing.assert_allclose(
        np.bincount(doc_of, weights=values - penalty, minlength=len(doc_offsets) - 1), gain, atol=1e-12
    )


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("seed", range(10))
def test_penalty_one_half_keeps_exactly_the_entities_more_likely_than_not(scheme, seed):
    """Overlapping entities exclude each other, so at most one of them has a
    marginal above 1/2: penalty 1/2 predicts exactly those above 1/2."""
    rng = np.random.default_rng(200 + seed)
    scores, doc_offsets, transitions = random_chain(rng, scheme, 3, max_doc_length=30, scale=2.5)
    spans, labels, values = span_marginals(scores, doc_offsets, transitions, scheme, floor=0.5)
    _, decoded, decoded_labels, decoded_values = posterior_decode(scores, doc_offsets, transitions, scheme, 0.5)
    assert sorted(map(tuple, np.c_[decoded, decoded_labels].tolist())) == sorted(
        map(tuple, np.c_[spans, labels].tolist())
    )
    np.testing.assert_allclose(np.sort(decoded_values), np.sort(values), rtol=0, atol=1e-12)


def test_the_floor_stops_the_enumeration_early():
    """A confident model: few entities above a floor of 0.1 on a long document."""
    rng = np.random.default_rng(5)
    T = n_tags(2, "BILOU")
    scores = rng.normal(0.0, 6.0, (2000, T))
    doc_offsets = np.array([0, 2000])
    transitions = np.zeros((T + 1, T + 1))
    spans, _, values = span_marginals(scores, doc_offsets, transitions, "BILOU", floor=0.1)
    assert 0 < spans.shape[0] < 20 * 2000 and values.min() > 0.1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda s, d, t: span_marginals(s, d, t, "IOB"), "unknown tagging scheme"),
        (lambda s, d, t: span_marginals(s[:, :4], d, t, "BILOU"), "1 \\+ 4 K tag columns"),
        (lambda s, d, t: span_marginals(s, d, t, "BILOU", floor=float("nan")), "floor"),
        (lambda s, d, t: span_marginals(np.full_like(s, np.nan), d, t, "BILOU"), "finite"),
        (lambda s, d, t: posterior_decode(s, d, t, "BILOU", -1.0), "penalty"),
        (lambda s, d, t: entity_marginals(s, d, t, "BILOU", [[0, 3]], [0]), "inside one document"),
        (lambda s, d, t: entity_marginals(s, d, t, "BILOU", [[0, 1]], [2]), "labels in 0..1"),
    ],
)
def test_bad_input_is_a_value_error(call, message):
    T = n_tags(2, "BILOU")
    with pytest.raises(ValueError, match=message):
        call(np.zeros((4, T)), np.array([0, 2, 4]), np.zeros((T + 1, T + 1)))
