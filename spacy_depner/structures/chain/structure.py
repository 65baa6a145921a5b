"""The linear-chain CRF over BIO / BILOU tags (``linear_chain``,
``tag_schemes``, ``entity_marginals``) under the structure protocol
(``protocol``).

scores = (tag scores (N, T), transitions (T + 1, T + 1)); layout: offsets
(U + 1,) of the chains; option ``scheme`` ("BIO" or "BILOU"), whose allowed
transitions the chain uses (T = 1 + 2K or 1 + 4K). A mention is an entity
the tags spell (``tags_to_spans``). Encoding: the tags (N,).
"""

from typing import List

import numpy as np

from ..partial import Borders, Conditioned, drop_borders, missing_mask, runs_of
from ..protocol import Analysis, Layout, Marginals, Structure, inner_product, select_disjoint
from ..shared import check_doc_offsets
from . import _linear_chain as linear_chain
from . import entity_marginals
from .tag_schemes import SCHEMES, check_tag_sequence


def layout(offsets: np.ndarray) -> Layout:
    """The Layout of a batch of chains: tokens offsets[u]:offsets[u + 1] for chain u."""
    return Layout(check_doc_offsets(offsets))


def _n_labels(scores, scheme: str) -> int:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tagging scheme {scheme!r}: expected one of {sorted(SCHEMES)}")
    return (np.shape(scores[0])[1] - 1) // len(SCHEMES[scheme])


def _analysis(score, tags, layout: Layout, n_labels: int, scheme: str) -> Analysis:
    spans, labels = linear_chain.tags_to_spans(tags, layout.offsets, scheme, n_labels)
    return Analysis(score, np.concatenate([spans, labels[:, None]], axis=1).reshape(-1, 3), tags)


class LinearChain(Structure):
    name = "chain"

    def _args(self, scores, layout: Layout, scheme: str):
        tag_scores, transitions = scores
        return (
            tag_scores,
            layout.offsets,
            transitions,
            linear_chain.allowed_transitions(_n_labels(scores, scheme), scheme),
        )

    def log_partition(self, scores, layout: Layout, *, scheme: str = "BILOU") -> np.ndarray:
        return linear_chain.log_partition(*self._args(scores, layout, scheme))

    def marginals(self, scores, layout: Layout, *, scheme: str = "BILOU") -> Marginals:
        """The inputs are checked now; the forward-backward pass runs when
        ``log_z`` or ``scores`` is first read (``of`` has its own, per entity)."""
        args = self._args(scores, layout, scheme)
        linear_chain.check(*args)
        tag_scores, transitions = scores
        computed = []

        def forward_backward():
            if not computed:
                computed.append(linear_chain.marginals(*args))
            return computed[0]

        def above(floor: float):
            spans, labels, values = entity_marginals.span_marginals(
                tag_scores, layout.offsets, transitions, scheme, floor
            )
            return np.concatenate([spans, labels[:, None]], axis=1).reshape(-1, 3), values

        def of(mentions: np.ndarray) -> np.ndarray:
            return entity_marginals.entity_marginals(
                tag_scores, layout.offsets, transitions, scheme, mentions[:, :2], mentions[:, 2]
            )

        return Marginals(lambda: forward_backward()[0], lambda: forward_backward()[1:], above, of)

    def viterbi(self, scores, layout: Layout, *, scheme: str = "BILOU") -> Analysis:
        best, tags = linear_chain.viterbi(*self._args(scores, layout, scheme))
        return _analysis(best, tags, layout, _n_labels(scores, scheme), scheme)

    def posterior_decode(
        self, marginals: Marginals, layout: Layout, *, penalty: float = 0.5, scheme: str = "BILOU"
    ) -> Analysis:
        """Every set of disjoint entities is a valid tag sequence, so the
        posterior analysis is the weighted interval scheduling of the entities
        of marginal above the penalty (``select_disjoint``)."""
        from ..shared import check_penalty

        mentions, values = marginals.mentions(check_penalty(penalty))
        chosen = select_disjoint(mentions, values, layout.offsets, penalty)
        tags = linear_chain.spans_to_tags(chosen.mentions[:, :2], chosen.mentions[:, 2], layout.n_tokens, scheme)
        return Analysis(chosen.score, chosen.mentions, tags)

    def tag_names(self, labels: List[str], scheme: str = "BILOU") -> List[str]:
        """The tag of each column of the tag scores: "O", then the scheme's
        prefixes for each label ("B-PER", "I-PER", ...)."""
        return linear_chain.tag_names(labels, scheme)

    def allowed_transitions(self, n_labels: int, scheme: str = "BILOU") -> np.ndarray:
        """(T + 1, T + 1) bool: which tag may follow which (row and column T:
        the start and end of a chain)."""
        return linear_chain.allowed_transitions(n_labels, scheme)

    def encode(self, mentions: np.ndarray, layout: Layout, *, scheme: str = "BILOU") -> np.ndarray:
        """The encoding (tags (N,)) of the disjoint ``mentions`` (M, 3)."""
        mentions = np.asarray(mentions, dtype=np.int64).reshape(-1, 3)
        return linear_chain.spans_to_tags(mentions[:, :2], mentions[:, 2], layout.n_tokens, scheme)

    def mentions_of(self, encoding, layout: Layout, *, n_labels: int, scheme: str = "BILOU") -> np.ndarray:
        """The mentions (M, 3) that the tags ``encoding`` (N,) spell; ValueError
        for a sequence the scheme does not allow."""
        spans, labels = linear_chain.tags_to_spans(encoding, layout.offsets, scheme, n_labels)
        return np.concatenate([spans, labels[:, None]], axis=1).reshape(-1, 3)

    def counts(self, encoding, scores, layout: Layout, *, scheme: str = "BILOU"):
        """(tag indicator (N, T), transition counts (T + 1, T + 1)); tags the
        scheme does not allow (``check_tag_sequence``) are a ValueError."""
        tags, _ = check_tag_sequence(encoding, layout.offsets, scheme, _n_labels(scores, scheme))
        T = scores[0].shape[1]
        indicator = np.zeros((tags.shape[0], T))
        indicator[np.arange(tags.shape[0]), tags] = 1.0
        return indicator, linear_chain.transition_counts(tags, layout.offsets, T)

    def conditioned(self, scores, layout: Layout, gold, missing: np.ndarray, *, scheme: str = "BILOU") -> Conditioned:
        """``partial.Conditioned`` (whence ``constrained``): ``gold`` the tags
        (N,), read on the annotated tokens. Each run of missing tokens is a
        chain whose start transitions are those from the gold tag before it
        (B at the unit's start) and whose end transitions those to the gold
        tag after it: the tags that agree next to a border are those a chain
        may start or end with (an I tag after a gold entity would extend it),
        and every one of them may follow (or precede) the gold tag, which is
        checked. The annotated tokens are scored with their transitions
        inside each stretch of annotated tokens and the units' own start and end."""
        return _condition(scores, layout, np.asarray(gold, dtype=np.int64), missing, scheme)


CHAIN = LinearChain()


def _condition(scores, full: Layout, tags: np.ndarray, missing, scheme: str):
    """``LinearChain.conditioned``."""
    tag_scores, transitions = scores
    T = B = np.shape(tag_scores)[1]
    n_labels = _n_labels(scores, scheme)
    allowed = linear_chain.allowed_transitions(n_labels, scheme)
    linear_chain.check(tag_scores, full.offsets, transitions, allowed)
    missing = missing_mask(missing, full.offsets, "chain")
    if tags.shape != (full.n_tokens,) or np.any((tags < 0) | (tags >= T)):
        raise ValueError(f"chain: the gold tags must be ({full.n_tokens},) integers in [0, {T}), one per token")
    runs = runs_of(missing, full.offsets)
    before = np.where(runs.before >= 0, tags[np.maximum(runs.before, 0)], B)
    after = np.where(runs.after >= 0, tags[np.maximum(runs.after, 0)], B)
    wrong = (allowed[B, :T] & ~allowed[before, :T]).any(axis=1) | (allowed[:T, B][:, None] & ~allowed[:T, after]).any(
        axis=0
    )
    # the gold tags continue the entity before a run into it (BIO: an I tag on its first token)
    wrong |= (runs.before >= 0) & ~allowed[B, tags[runs.first]] & allowed[before, tags[runs.first]]
    if wrong.any():
        r = int(np.flatnonzero(wrong)[0])
        raise ValueError(
            f"chain: a gold entity continues into the missing tokens {int(runs.first[r])}.."
            f"{int(runs.last[r])}; a gold entity's tokens are annotated"
        )
    first, last, every = runs.offsets[:-1], runs.offsets[1:] - 1, np.arange(runs.before.shape[0])
    borders = Borders(first, every, last, every, before, after)
    stretches = runs_of(~missing, full.offsets)
    fixed = tags[stretches.tokens]
    fixed_transitions = linear_chain.transition_counts(fixed, stretches.offsets, T)
    drop_borders(fixed_transitions, stretches, tags[stretches.first], tags[stretches.last])
    indicator = np.zeros(np.shape(tag_scores))
    indicator[stretches.tokens, fixed] = 1.0
    spans, labels = linear_chain.tags_to_spans(fixed, stretches.offsets, scheme, n_labels)
    mentions = np.concatenate([stretches.tokens[spans].reshape(-1, 2), labels[:, None]], axis=1).reshape(-1, 3)

    def expand(run_counts):
        tags = np.zeros(np.shape(tag_scores))
        tags[runs.tokens] = run_counts[0]
        return tags, borders.move(run_counts[0], run_counts[1])

    return Conditioned(
        mentions.astype(np.int64),
        inner_product(scores, (indicator, fixed_transitions)),
        (borders.scores(tag_scores[runs.tokens], transitions), transitions),
        layout(runs.offsets),
        runs.tokens,
        (indicator, fixed_transitions),
        expand,
    )
