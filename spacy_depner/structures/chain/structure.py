"""The linear-chain CRF over BIO / BILOU tags (``linear_chain``,
``tag_schemes``, ``entity_marginals``) under the structure protocol
(``protocol``).

scores = (tag scores (N, T), transitions (T + 1, T + 1)); layout: offsets
(U + 1,) of the chains; option ``scheme`` ("BIO" or "BILOU"), whose allowed
transitions the chain uses (T = 1 + 2K or 1 + 4K). A mention is an entity
the tags spell (``tags_to_spans``). Encoding: the tags (N,).
"""

from dataclasses import replace
from typing import List

import numpy as np

from ..partial import Borders, Conditioned, drop_borders, missing_mask, rejected_gold, rejected_mentions, runs_of
from ..protocol import Analysis, Layout, Marginals, Structure, inner_product, select_disjoint
from ..shared import check_doc_offsets
from . import _linear_chain as linear_chain
from . import entity_marginals, rejected_entities
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
    takes_rejected = True

    def _args(self, scores, layout: Layout, scheme: str):
        tag_scores, transitions = scores
        return (
            tag_scores,
            layout.offsets,
            transitions,
            linear_chain.allowed_transitions(_n_labels(scores, scheme), scheme),
        )

    def _without_rejected(self, scores, layout: Layout, scheme: str):
        """The larger chain without ``layout.rejected`` (``rejected_entities``), or None when nothing is rejected."""
        if layout.rejected is None or layout.rejected.shape[0] == 0:
            return None
        args = self._args(scores, layout, scheme)
        linear_chain.check(*args)
        return rejected_entities.expand(args[0], layout.offsets, args[2], args[3], layout.rejected, scheme)

    def log_partition(self, scores, layout: Layout, *, scheme: str = "BILOU") -> np.ndarray:
        expanded = self._without_rejected(scores, layout, scheme)
        if expanded is not None:
            return rejected_entities.log_partition(expanded, layout.offsets)
        return linear_chain.log_partition(*self._args(scores, layout, scheme))

    def marginals(self, scores, layout: Layout, *, scheme: str = "BILOU") -> Marginals:
        """The inputs are checked now; the forward-backward pass runs when
        ``log_z`` or ``scores`` is first read (``of`` has its own, per entity)."""
        args = self._args(scores, layout, scheme)
        linear_chain.check(*args)
        tag_scores, transitions = scores
        computed = []
        expanded = self._without_rejected(scores, layout, scheme)

        def forward_backward():
            if not computed:
                if expanded is None:
                    computed.append(linear_chain.marginals(*args))
                else:
                    computed.append(rejected_entities.marginals(expanded, layout.offsets, np.shape(tag_scores)[1]))
            return computed[0]

        def above(floor: float):
            no_entity_marginals(expanded)
            spans, labels, values = entity_marginals.span_marginals(
                tag_scores, layout.offsets, transitions, scheme, floor
            )
            return np.concatenate([spans, labels[:, None]], axis=1).reshape(-1, 3), values

        def of(mentions: np.ndarray) -> np.ndarray:
            no_entity_marginals(expanded)
            return entity_marginals.entity_marginals(
                tag_scores, layout.offsets, transitions, scheme, mentions[:, :2], mentions[:, 2]
            )

        return Marginals(lambda: forward_backward()[0], lambda: forward_backward()[1:], above, of)

    def viterbi(self, scores, layout: Layout, *, scheme: str = "BILOU") -> Analysis:
        expanded = self._without_rejected(scores, layout, scheme)
        if expanded is not None:
            best, tags = rejected_entities.viterbi(expanded, layout.offsets)
        else:
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

    def conditioned(
        self, scores, layout: Layout, gold, missing: np.ndarray, *, scheme: str = "BILOU", rejected=None
    ) -> Conditioned:
        """``partial.Conditioned`` (whence ``constrained``): ``gold`` the tags
        (N,), read on the annotated tokens. Each run of missing tokens is a
        chain whose start transitions are those from the gold tag before it
        (B at the unit's start) and whose end transitions those to the gold
        tag after it: the tags that agree next to a border are those a chain
        may start or end with (an I tag after a gold entity would extend it),
        and every one of them may follow (or precede) the gold tag, which is
        checked. The annotated tokens are scored with their transitions
        inside each stretch of annotated tokens and the units' own start and end.
        ``rejected`` (R, 3) [first, last, label] or None: entities no agreeing
        sequence spells; one inside a run goes to the runs' ``Layout.rejected``
        (``rejected_entities``: its Viterbi and tag marginals, not its entity
        marginals), one that touches an annotated token is already excluded
        unless it is gold (a ValueError)."""
        return _condition(scores, layout, np.asarray(gold, dtype=np.int64), missing, scheme, rejected)


CHAIN = LinearChain()


def no_entity_marginals(expanded) -> None:
    """A ValueError when the entity marginals are asked of a chain with rejected entities."""
    if expanded is not None:
        raise ValueError(
            "chain: the entity marginals of a chain with rejected entities are not computed (its log Z, "
            "tag marginals and Viterbi are): decode without rejected entities"
        )


def _runs_rejected(rejected, mentions: np.ndarray, missing: np.ndarray, runs, n_labels: int) -> np.ndarray:
    """The rejected entities (R, 3) that lie inside a run, in the runs' compact
    coordinates; a rejected entity among the gold ``mentions`` is a ValueError."""
    rejected = rejected_mentions(rejected, missing.shape[0], n_labels, "chain")
    gold = {tuple(m) for m in mentions.tolist()}
    clash = [m for m in rejected.tolist() if tuple(m) in gold]
    if clash:
        raise rejected_gold(clash[0], "chain")
    inside = runs.inside(rejected[:, :2])
    return np.concatenate([runs.compact(rejected[inside, :2]), rejected[inside, 2:]], axis=1).reshape(-1, 3)


def _condition(scores, full: Layout, tags: np.ndarray, missing, scheme: str, rejected=None):
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

    run_layout = layout(runs.offsets)
    if rejected is not None:
        run_layout = replace(run_layout, rejected=_runs_rejected(rejected, mentions, missing, runs, n_labels))
    return Conditioned(
        mentions.astype(np.int64),
        inner_product(scores, (indicator, fixed_transitions)),
        (borders.scores(tag_scores[runs.tokens], transitions), transitions),
        run_layout,
        runs.tokens,
        (indicator, fixed_transitions),
        expand,
    )
