"""Rejected entities in the linear chain, exactly: the tag sequences that
spell none of the rejected entities, as the sequences of a larger chain.

A rejected entity (s, e, L) is not one tag but a pattern: in BILOU, B-L at s,
I-L up to e - 2 and L-L at e - 1 (U-L at s when e = s + 1); in BIO, B-L at s,
I-L up to e - 1 and anything but I-L at e. A sequence spells it exactly when
the entity that opens with B-L at s closes at e - 1. The chain cannot know
where the open entity began, so each distinct rejected start (s, L) gets its
own *copy* of L's tags: an entity of label L that begins at s must use its
copy (the original B-L at s is masked), the copy's tags are valid only from s
on, and a copy may close only where no rejected entity of that start ends:

* BILOU: the copy's L-L is masked at e - 1 for each rejected (s, e, L), and
  U-L at s for a rejected (s, s + 1, L).
* BIO: closing is the next tag not continuing the entity, a transition, not a
  tag; so the copy has *continuing* variants of B-L and I-L whose only
  successors are the copy's I-L tags (never the chain's end), and at e - 1,
  for each rejected (s, e, L), only those variants are valid (elsewhere only
  the others).

Every other sequence maps to exactly one sequence of the larger chain with the
same score (a tag's copies carry its scores and transitions), so its log Z
is the log-sum over the sequences that avoid every rejected entity, and its
marginals summed over each tag's copies are their expected counts. Masked
tags score the semiring zero (-inf), which the chain's recursions take as an
unreachable state. The cost is the chain's with T + 3r (BILOU) or T + 4r (BIO)
tags for r distinct rejected starts.
"""

from typing import NamedTuple, Tuple

import numpy as np

from . import kernels
from .tag_schemes import SCHEMES


class Expanded(NamedTuple):
    """The larger chain: scores (N, T'), transitions and allowed (T' + 1, T' + 1),
    and ``original`` (T',) the tag of the chain each tag copies."""

    scores: np.ndarray
    transitions: np.ndarray
    allowed: np.ndarray
    original: np.ndarray


def expand(
    scores: np.ndarray,
    offsets: np.ndarray,
    transitions: np.ndarray,
    allowed: np.ndarray,
    rejected: np.ndarray,
    scheme: str,
) -> Expanded:
    """The larger chain of ``scores`` (N, T) over the units ``offsets`` without
    the ``rejected`` entities (R, 3) [first, last (inclusive), label from 0],
    each inside one unit (module docstring); ``allowed`` the scheme's transitions."""
    width = len(SCHEMES[scheme])
    T = scores.shape[1]
    rejected = np.asarray(rejected, dtype=np.int64).reshape(-1, 3)
    starts = np.unique(rejected[:, [0, 2]], axis=0)  # (r, 2) [first, label]
    per_copy = 3 if scheme == "BILOU" else 4  # B, I, L / B, I, B continuing, I continuing
    original = np.concatenate([np.arange(T), np.zeros(per_copy * starts.shape[0], dtype=np.int64)])
    copy = np.zeros(original.shape[0], dtype=np.int64)  # 0: the chain's own tags, k + 1: copy k
    continuing = np.zeros(original.shape[0], dtype=bool)
    for k, (_, label) in enumerate(starts.tolist()):
        base = 1 + width * label
        tags = [base, base + 1, base + 2] if scheme == "BILOU" else [base, base + 1, base, base + 1]
        rows = T + per_copy * k + np.arange(per_copy)
        original[rows], copy[rows] = tags, k + 1
        if scheme == "BIO":
            continuing[rows[2:]] = True
    T2 = original.shape[0]
    index = np.concatenate([original, [T]])  # the boundary keeps its place, last
    big_transitions = transitions[np.ix_(index, index)]
    big_allowed = allowed[np.ix_(index, index)].copy()
    inside_tag = _inside_tags(T, width, scheme)
    into_inside = np.concatenate([inside_tag[original], [False]])
    copies = np.concatenate([copy, [-1]])
    # an entity stays in its copy: continuing tags follow only tags of the same copy
    big_allowed &= ~(into_inside[None, :] & (copies[:, None] != copies[None, :]))
    stay = np.concatenate([continuing, [False]])
    big_allowed[stay, :] &= into_inside & (copies[None, :] == copies[stay][:, None])
    big_scores = np.concatenate([scores, scores[:, original[T:]]], axis=1) if T2 > T else scores.copy()
    valid = _valid_tags(offsets, scores.shape[0], starts, rejected, original, copy, continuing, T, width, scheme)
    big_scores[~valid] = -np.inf
    return Expanded(big_scores, big_transitions, big_allowed, original)


def _inside_tags(T: int, width: int, scheme: str) -> np.ndarray:
    """(T,) bool: the tags that continue an open entity (I; and L in BILOU)."""
    inside = np.zeros(T, dtype=bool)
    inside[2::width] = True
    if scheme == "BILOU":
        inside[3::width] = True
    return inside


def _valid_tags(offsets, n_tokens, starts, rejected, original, copy, continuing, T, width, scheme) -> np.ndarray:
    """(N, T') bool: where each tag of the larger chain may stand (module docstring)."""
    valid = np.ones((n_tokens, original.shape[0]), dtype=bool)
    valid[:, T:] = False
    unit_end = offsets[np.searchsorted(offsets, np.arange(n_tokens), side="right")]
    for k, (first, label) in enumerate(starts.tolist()):
        base = 1 + width * label
        mine = np.flatnonzero(copy == k + 1)
        begin, inside = mine[original[mine] == base], mine[original[mine] != base]
        valid[first, base] = False  # an entity of L opening at first uses the copy
        valid[first, begin] = True
        valid[first + 1 : unit_end[first], inside] = True
        lasts = rejected[(rejected[:, 0] == first) & (rejected[:, 2] == label), 1]  # last tokens, inclusive
        if scheme == "BILOU":
            valid[lasts[lasts > first], mine[original[mine] == base + 2]] = False
            if (lasts == first).any():
                valid[first, base + 3] = False  # U-L: the one-token entity
        else:
            closing_forbidden = np.zeros(n_tokens, dtype=bool)
            closing_forbidden[lasts] = True
            valid[:, mine[continuing[mine]]] &= closing_forbidden[:, None]
            valid[:, mine[~continuing[mine]]] &= ~closing_forbidden[:, None]
    return valid


def fold(tag_marginals: np.ndarray, transition_marginals: np.ndarray, original: np.ndarray, T: int) -> Tuple:
    """The larger chain's marginals (N, T'), (T' + 1, T' + 1) summed into the
    chain's tags: (N, T), (T + 1, T + 1)."""
    tags = np.zeros((tag_marginals.shape[0], T))
    np.add.at(tags.T, original, tag_marginals.T)
    index = np.concatenate([original, [T]])
    transitions = np.zeros((T + 1, T + 1))
    np.add.at(transitions, (index[:, None], index[None, :]), transition_marginals)
    return tags, transitions


def log_partition(expanded: Expanded, offsets: np.ndarray) -> np.ndarray:
    """log Z (U,) of the larger chain (scores and transitions checked before expansion)."""
    return kernels._log_partition(expanded.scores, offsets, expanded.transitions, expanded.allowed)


def marginals(expanded: Expanded, offsets: np.ndarray, T: int):
    """(log Z (U,), tag marginals (N, T), transition marginals (T + 1, T + 1)) folded into the chain's tags."""
    log_z, tags, transitions = kernels._marginals(expanded.scores, offsets, expanded.transitions, expanded.allowed)
    return (log_z, *fold(tags, transitions, expanded.original, T))


def viterbi(expanded: Expanded, offsets: np.ndarray):
    """(best (U,), tags (N,) of the chain) of the larger chain."""
    best, tags = kernels._viterbi(expanded.scores, offsets, expanded.transitions, expanded.allowed)
    return best, expanded.original[tags]
