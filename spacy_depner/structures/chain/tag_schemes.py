"""Tagging schemes of ``linear_chain``: the BIO and BILOU tag sets, the
transitions each scheme allows, and the conversions between tag sequences
and entity spans. Pure numpy.

Tags. For labels L_0..L_{K-1}, ``tag_names`` gives T tags: index 0 is "O",
then per label in order "B-L", "I-L" (BIO, T = 1 + 2K) or "B-L", "I-L",
"L-L", "U-L" (BILOU, T = 1 + 4K). Index T of the transition matrices
is the boundary B: row T is the document start, column T the document end.

Constraints of ``allowed_transitions`` (exact: every other pair is False):
    BIO:   start -> O, B-*;  any tag -> O, B-*;  B-X, I-X -> I-X;
           O, B-*, I-* -> end.
    BILOU: start, O, L-*, U-* -> O, B-*, U-*, end;  B-X, I-X -> I-X, L-X.
    In both, start -> end (the B -> B entry) is False: it is never used.
"""

from typing import List, Tuple

import numpy as np

from ..shared import check_doc_offsets

SCHEMES = {"BIO": ("B", "I"), "BILOU": ("B", "I", "L", "U")}


# ---------------------------------------------------------------------------
# Tag sets
# ---------------------------------------------------------------------------


def _prefixes(scheme: str) -> Tuple[str, ...]:
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tagging scheme {scheme!r}: expected one of {sorted(SCHEMES)}")
    return SCHEMES[scheme]


def n_tags(n_labels: int, scheme: str) -> int:
    """T: 1 + 2 K (BIO) or 1 + 4 K (BILOU)."""
    if n_labels < 0:
        raise ValueError(f"n_labels must be >= 0, not {n_labels}")
    return 1 + len(_prefixes(scheme)) * int(n_labels)


def tag_names(labels: List[str], scheme: str) -> List[str]:
    """["O", "B-L0", "I-L0", ("L-L0", "U-L0",) "B-L1", ...]."""
    prefixes = _prefixes(scheme)
    return ["O"] + [f"{prefix}-{label}" for label in labels for prefix in prefixes]


def allowed_transitions(n_labels: int, scheme: str) -> np.ndarray:
    """(T + 1, T + 1) bool: allowed[a, b] when tag a may be followed by tag b;
    index T is the boundary (row: document start, column: document end). See
    the module docstring for the exact constraints."""
    T = n_tags(n_labels, scheme)
    B = T
    allowed = np.zeros((T + 1, T + 1), dtype=bool)
    if scheme == "BIO":
        begins = 1 + 2 * np.arange(n_labels)
        insides = begins + 1
        outside_like = np.concatenate([[0], begins])  # may follow anything, may start
        allowed[:, outside_like] = True
        allowed[B, :] = False
        allowed[B, outside_like] = True
        allowed[begins, insides] = True
        allowed[insides, insides] = True
        allowed[:T, B] = True  # any tag may end a document
    else:
        begins = 1 + 4 * np.arange(n_labels)
        insides, lasts, units = begins + 1, begins + 2, begins + 3
        closed = np.concatenate([[0], lasts, units, [B]])  # no entity open after these
        opening = np.concatenate([[0], begins, units, [B]])  # may follow a closed tag
        allowed[np.ix_(closed, opening)] = True
        allowed[begins, insides] = True
        allowed[begins, lasts] = True
        allowed[insides, insides] = True
        allowed[insides, lasts] = True
    allowed[B, B] = False
    return allowed


# ---------------------------------------------------------------------------
# Tag sequences <-> entity spans
# ---------------------------------------------------------------------------


def _as_tags(tags, n_tags_: int):
    tags = np.asarray(tags)
    if tags.ndim != 1:
        raise ValueError(f"tags must be 1-d, not of shape {tags.shape}")
    if tags.size and tags.dtype.kind not in "iu":
        raise ValueError(f"tags must be integers, not {tags.dtype}")
    tags = np.ascontiguousarray(tags, dtype=np.int64)
    if tags.size and (tags.min() < 0 or tags.max() >= n_tags_):
        raise ValueError(f"tags must lie in 0..{n_tags_ - 1}")
    return tags


def _pairs(tags, doc_offsets, B):
    """(previous, next) tag of every transition of the batch, boundaries as B."""
    nonempty = doc_offsets[:-1] < doc_offsets[1:]
    previous = np.empty_like(tags)
    previous[1:] = tags[:-1]
    previous[doc_offsets[:-1][nonempty]] = B  # document starts
    ends = doc_offsets[1:][nonempty] - 1
    return np.concatenate([previous, tags[ends]]), np.concatenate([tags, np.full(ends.shape[0], B, dtype=np.int64)])


def check_tag_sequence(tags, doc_offsets, scheme: str, n_labels: int) -> Tuple[np.ndarray, np.ndarray]:
    """(tags, doc_offsets) checked: tags (N,) in [0, T) whose every
    transition, a chain's start and end included, ``allowed_transitions``
    allows; else a ValueError naming the first transition that is not."""
    T = n_tags(n_labels, scheme)
    tags = _as_tags(tags, T)
    doc_offsets = check_doc_offsets(doc_offsets, tags.shape[0])
    a, b = _pairs(tags, doc_offsets, T)
    bad = ~allowed_transitions(n_labels, scheme)[a, b]
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        where = f"token {k}" if k < tags.shape[0] else "a document end"
        raise ValueError(
            f"tags are not a valid {scheme} sequence (no analysis of the chain): transition {int(a[k])} -> "
            f"{int(b[k])} at {where} (index {T} is the boundary)"
        )
    return tags, doc_offsets


def tags_to_spans(tags, doc_offsets, scheme: str, n_labels: int) -> Tuple[np.ndarray, np.ndarray]:
    """Entities of a valid tag sequence: (spans (M, 2) int64, first and last
    token inclusive in batch coordinates, sorted; labels (M,) int64 in
    0..n_labels-1). A sequence that uses a transition that
    ``allowed_transitions(n_labels, scheme)`` forbids is a ValueError."""
    width = len(_prefixes(scheme))
    tags, doc_offsets = check_tag_sequence(tags, doc_offsets, scheme, n_labels)
    prefix = np.where(tags > 0, (tags - 1) % width, -1)  # 0 B, 1 I, 2 L, 3 U
    if scheme == "BIO":
        starts = np.flatnonzero(prefix == 0)
        inside_next = np.zeros(tags.shape[0], dtype=bool)
        inside_next[:-1] = prefix[1:] == 1  # an I never starts a document: checked above
        ends = np.flatnonzero((prefix >= 0) & ~inside_next)
    else:
        starts = np.flatnonzero((prefix == 0) | (prefix == 3))
        ends = np.flatnonzero((prefix == 2) | (prefix == 3))
    spans = np.stack([starts, ends], axis=1).astype(np.int64).reshape(-1, 2)
    return spans, ((tags[starts] - 1) // width).astype(np.int64)


def spans_to_tags(spans, labels, n_tokens: int, scheme: str) -> np.ndarray:
    """Tags (N,) of non-overlapping entity ``spans`` (M, 2) (first and last
    token, inclusive) with ``labels`` (M,) >= 0, in any order; O elsewhere.
    (Spans should not cross documents; this function does not know them.)"""
    width = len(_prefixes(scheme))
    spans = np.asarray(spans)
    labels = np.asarray(labels)
    if spans.size == 0:
        spans = spans.reshape(0, 2)
    if spans.ndim != 2 or spans.shape[1] != 2 or labels.shape != (spans.shape[0],):
        raise ValueError(f"spans must have shape (M, 2) and labels (M,), not {spans.shape} and {labels.shape}")
    if spans.size and (spans.dtype.kind not in "iu" or labels.dtype.kind not in "iu"):
        raise ValueError("spans and labels must be integers")
    spans = spans.astype(np.int64)
    labels = labels.astype(np.int64)
    N = int(n_tokens)
    if N < 0:
        raise ValueError(f"n_tokens must be >= 0, not {n_tokens}")
    tags = np.zeros(N, dtype=np.int64)
    if spans.shape[0] == 0:
        return tags
    first, last = spans[:, 0], spans[:, 1]
    if np.any(first < 0) or np.any(last >= N) or np.any(first > last):
        raise ValueError(f"every span must have 0 <= first <= last < n_tokens = {N}")
    if np.any(labels < 0):
        raise ValueError("labels must be >= 0")
    order = np.argsort(first, kind="stable")
    if np.any(first[order][1:] <= last[order][:-1]):
        raise ValueError("spans must not overlap")
    lengths = last - first + 1
    base = 1 + width * labels
    inside = np.repeat(first - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    tags[inside] = np.repeat(base + 1, lengths)  # I everywhere, then the ends
    tags[first] = base  # B
    if scheme == "BILOU":
        tags[last] = base + 2  # L
        tags[first[lengths == 1]] = base[lengths == 1] + 3  # U
    return tags


def span_tags(n_labels: int, scheme: str) -> np.ndarray:
    """(K, 4) int64: per label, the tags that spell its entities: [unit (a
    one-token entity), begin (the first token of a longer one), inside (its
    middle tokens), last (its last token)]. BIO: [B, B, I, I]; BILOU: [U, B, I, L].
    An entity of label k on first..last is exactly: unit at first (length 1)
    or begin, inside..., last; then a tag other than inside (BIO: the I of
    the same label would continue it; BILOU allows none after U or L)."""
    width = len(_prefixes(scheme))
    begins = 1 + width * np.arange(int(n_labels), dtype=np.int64)
    if scheme == "BIO":
        return np.stack([begins, begins, begins + 1, begins + 1], axis=1).reshape(-1, 4)
    return np.stack([begins + 3, begins, begins + 1, begins + 2], axis=1).reshape(-1, 4)
