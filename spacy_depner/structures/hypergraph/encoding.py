"""Mentions <-> sub-hypergraphs of ``mention_hypergraph`` (Lu & Roth 2015,
sec. 3.2, Theorem 3.1 and Figure 3; sec. 3.6 with heads):
``mentions_to_edges`` (the gold structure for training), ``edges_to_mentions``
(decoding a MAP sub-hypergraph), ``representable`` (the mention sets that
survive the round trip) and their input checks.

Mentions (sec. 3.1) are rows [first, last, type] (inclusive, batch
coordinates), or [first, last, type, head_first, head_last] with heads. A
mention set maps to the union of its mentions' paths (Theorem 3.1):
T_t^first <- I_t^first, then I_t^k <- I_t^(k+1) for first <= k < last and
an end (X) at last; I_t^k takes the hyperedge of the union of its
successors ({I^(k+1)}, {I^(k+1), X} or {X}).

Ambiguity and decoding (sec. 3.2, Figure 3). The converse of Theorem 3.1
fails: e.g. {[A B C D], [B C]} (type-I: one contains the other) and
{[A B C], [B C D]} (type-II: overlap, neither contains the other) of one
type give the same sub-hypergraph. ``edges_to_mentions`` resolves every
ambiguity by one rule, the type-I reading, which the paper observes is the
one found in the data. Per type, read the tokens left to right, keeping the
open mentions in the order they were opened (outer first), like brackets:

    T -> I at k opens a mention at k (innermost);
    I -> I: every open mention continues; I -> X: every open mention ends at k;
    I -> I, X: the innermost open mention ends at k, the others continue; if
    only one is open, it both ends at k and continues (two mentions).

Equivalently (checked by brute force in the tests): call a *run* the tokens
of a maximal chain I^p, ..., I^q joined by continuing hyperedges; the result
is the only reading in which no two mentions of the type cross (overlap with
neither containing the other) and in which every start of a run except its
first token p, and every end except its last token q, belongs to exactly
one mention. So a mention set is represented exactly (``representable``)
iff that holds for it: e.g. every set of pairwise disjoint or nested
mentions with distinct starts and distinct ends, and every set in which two
overlapping mentions of one type share their first or their last token (the
paper's unambiguous case: the ambiguity "happens only when two overlapping
mentions have the same type, and one mention is strictly contained by the
other and their boundaries are all different"); a type-II pair is not
(it decodes to the type-I pair with the same boundaries).

With heads (sec. 3.6; the nodes are described in ``kinds``), the
decoding rule is the same brackets, per node: the open mentions in a node are assigned to its
hyperedge's successors sorted by how soon they close (X, then A, then W,
then B): the i-th innermost mention takes the i-th successor, the mentions
beyond the last successor all take the last one, and when there are fewer
mentions than successors the outermost one takes all the remaining ones
(it is split into one mention per successor). T -> B, W opens the B mention
first (outer), then the W one. Without heads this is exactly the rule
above. Read back exactly (tested): e.g. pairwise disjoint mentions with any
heads, and disjoint-or-nested mentions with distinct starts and ends where
each nested mention lies within one part (before, within or after the
head) of the mentions containing it. Not, e.g., [0, 1] with head [1, 1] and
[0, 2] with head [0, 1]: its sub-hypergraph reads with the heads swapped.
"""

import numpy as np
from numba import njit

from ..shared import check_doc_offsets, max_doc_length
from .kinds import _HEAD_SLOT, _KINDS, _N_SLOTS, N_HEAD_KINDS, N_KINDS, n_kinds


def _kind_lookup(heads):
    """owner (K,), bits (K,), t_kind[bits] (2^n_slots,), slot_kind[s, bits] (n_slots, 2^(n_slots+1)), -1 if none."""
    kinds = _KINDS[heads]
    n_slots = _N_SLOTS[heads]
    owner = np.array([o for o, _ in kinds], dtype=np.int64)
    bits = np.array([b for _, b in kinds], dtype=np.int64)
    t_kind = np.full(1 << n_slots, -1, dtype=np.int64)
    slot_kind = np.full((n_slots, 1 << (n_slots + 1)), -1, dtype=np.int64)
    for k, (o, b) in enumerate(kinds):
        if o < 0:
            t_kind[b] = k
        else:
            slot_kind[o, b] = k
    return owner, bits, t_kind, slot_kind


_LOOKUPS = {heads: _kind_lookup(heads) for heads in (False, True)}


# ---------------------------------------------------------------------------
# Compiled conversions
# ---------------------------------------------------------------------------


@njit(cache=True)
def _mentions_to_edges(mentions, N, T, K, n_slots, head_slot, t_kind, slot_kind):
    """Union of the mentions' paths (Theorem 3.1; sec. 3.6 with heads), for
    mentions (M, 5) [first, last, type, head_first, head_last] (the head is
    the whole mention without heads): opened[k, t] the I nodes T_t^k opens,
    succ[k, t, s] the successors (bit n_slots = X) of node s, then the kind
    of each node's hyperedge. Returns edges (N, T, K) int8."""
    opened = np.zeros((N, T), dtype=np.int64)
    succ = np.zeros((N, T, n_slots), dtype=np.int64)
    x_bit = 1 << n_slots
    for m in range(mentions.shape[0]):
        first, last, t, hf, hl = mentions[m, 0], mentions[m, 1], mentions[m, 2], mentions[m, 3], mentions[m, 4]
        phase = head_slot - 1 if first < hf else head_slot
        opened[first, t] |= 1 << phase
        for k in range(first, last + 1):
            if k == last:
                succ[k, t, phase] |= x_bit
                break
            nxt = head_slot - 1 if k + 1 < hf else (head_slot if k + 1 <= hl else head_slot + 1)
            succ[k, t, phase] |= 1 << nxt
            phase = nxt
    edges = np.zeros((N, T, K), dtype=np.int8)
    for k in range(N):
        for t in range(T):
            edges[k, t, t_kind[opened[k, t]]] = 1
            for s in range(n_slots):
                if succ[k, t, s] != 0:
                    edges[k, t, slot_kind[s, succ[k, t, s]]] = 1
    return edges


@njit(cache=True)
def _first_invalid(edges, doc_offsets, owner, bits, n_slots):
    """(token, type) of the first place where ``edges`` is not a
    sub-hypergraph (a T node without exactly one hyperedge, an I node in it
    without exactly one or out of it with one, a hyperedge past the end of
    its document), or (-1, -1)."""
    T, K = edges.shape[1], edges.shape[2]
    slot_mask = (1 << n_slots) - 1
    count = np.zeros(n_slots + 1, dtype=np.int64)
    for d in range(doc_offsets.shape[0] - 1):
        for t in range(T):
            carried = 0
            for k in range(doc_offsets[d], doc_offsets[d + 1]):
                count[:] = 0
                included = carried
                for kind in range(K):
                    if edges[k, t, kind] != 0 and owner[kind] < 0:
                        count[n_slots] += 1
                        included |= bits[kind]
                carried = 0
                for kind in range(K):
                    if edges[k, t, kind] != 0 and owner[kind] >= 0:
                        count[owner[kind]] += 1
                        carried |= bits[kind] & slot_mask
                if count[n_slots] != 1:
                    return k, t
                for s in range(n_slots):
                    if count[s] != (included >> s & 1):
                        return k, t
                if k == doc_offsets[d + 1] - 1 and carried != 0:
                    return k, t
    return -1, -1


@njit(cache=True)
def _append(out, m, first, last, t, hf, hl):
    if m == out.shape[0]:
        bigger = np.empty((2 * out.shape[0], 5), dtype=np.int64)
        for r in range(m):  # element by element: an array-to-slice copy compiles numba's shape-error formatting
            for c in range(5):
                bigger[r, c] = out[r, c]
        out = bigger
    out[m, 0] = first
    out[m, 1] = last
    out[m, 2] = t
    out[m, 3] = hf
    out[m, 4] = hl
    return out


@njit(cache=True)
def _edges_to_mentions(edges, doc_offsets, owner, bits, n_slots, head_slot):
    """The type-I (bracket) reading of the module docstring (sec. 3.2,
    Figure 3), per document and type; returns (M, 5) rows in order of closing.
    Open mentions are rows (first, head_first, head_last, slot), outer first;
    each token rebuilds the list: a mention with successors lo..hi (in the
    order X, then slots last to first) is written once per successor, the
    later (outer) ones first, and dropped (emitted) at X."""
    T, K = edges.shape[1], edges.shape[2]
    x_bit = 1 << n_slots
    out = np.empty((16, 5), dtype=np.int64)
    m = np.int64(0)  # not the literal 0: _append would be compiled for Literal[int](0) and for int64
    longest = max_doc_length(doc_offsets)
    cap = (2 * n_slots + 2) * (longest + 1)  # per token: opens <= 2 mentions, splits off <= n_slots + 1
    cur = np.empty((cap, 4), dtype=np.int64)
    nxt = np.empty((cap, 4), dtype=np.int64)
    order = np.empty(n_slots + 1, dtype=np.int64)  # successors, soonest to close first
    succ = np.zeros(n_slots, dtype=np.int64)
    count = np.zeros(n_slots, dtype=np.int64)
    seen = np.zeros(n_slots, dtype=np.int64)
    for d in range(doc_offsets.shape[0] - 1):
        for t in range(T):
            n_open = 0
            for k in range(doc_offsets[d], doc_offsets[d + 1]):
                succ[:] = 0
                for kind in range(K):
                    if edges[k, t, kind] == 0:
                        continue
                    if owner[kind] >= 0:
                        succ[owner[kind]] = bits[kind]
                    else:
                        for s in range(n_slots):  # open B before W: the W mention is inner
                            if bits[kind] >> s & 1:
                                hf = k if s == head_slot else -1
                                cur[n_open, 0], cur[n_open, 1], cur[n_open, 2], cur[n_open, 3] = k, hf, -1, s
                                n_open += 1
                count[:] = 0
                seen[:] = 0
                for i in range(n_open):
                    count[cur[i, 3]] += 1
                n_next = 0
                for i in range(n_open):
                    s = cur[i, 3]
                    r = 0
                    if succ[s] & x_bit:
                        order[r] = n_slots
                        r += 1
                    for s2 in range(n_slots - 1, -1, -1):
                        if succ[s] >> s2 & 1:
                            order[r] = s2
                            r += 1
                    inner = count[s] - 1 - seen[s]  # 0 for the innermost mention of the node
                    seen[s] += 1
                    lo = min(inner, r - 1)
                    hi = r - 1 if inner == count[s] - 1 else lo
                    for j in range(hi, lo - 1, -1):
                        to = order[j]
                        hf, hl = cur[i, 1], cur[i, 2]
                        if s == head_slot and to != head_slot:
                            hl = k  # the head ends at k
                        if to == n_slots:
                            out = _append(out, m, cur[i, 0], k, t, hf, hl)
                            m += 1
                            continue
                        if to == head_slot and s != head_slot:
                            hf = k + 1  # the head starts at k + 1
                        nxt[n_next, 0], nxt[n_next, 1], nxt[n_next, 2], nxt[n_next, 3] = cur[i, 0], hf, hl, to
                        n_next += 1
                cur, nxt = nxt, cur
                n_open = n_next
    return out[:m]


# ---------------------------------------------------------------------------
# Input checks and public conversions
# ---------------------------------------------------------------------------


def _check_edges(edges, doc_offsets):
    edges = np.asarray(edges)
    if edges.ndim != 3 or edges.shape[1] < 1 or edges.shape[2] not in (N_KINDS, N_HEAD_KINDS):
        raise ValueError(
            f"edges must have shape (n_tokens, n_types >= 1, {N_KINDS} or {N_HEAD_KINDS}), not {edges.shape}"
        )
    if edges.dtype.kind not in "biu" or not np.all((edges == 0) | (edges == 1)):
        raise ValueError("edges must be a 0/1 (or boolean) indicator array")
    doc_offsets = check_doc_offsets(doc_offsets, edges.shape[0])
    heads = edges.shape[2] == N_HEAD_KINDS
    owner, bits, _, _ = _LOOKUPS[heads]
    edges = np.ascontiguousarray(edges, dtype=np.int8)
    k, t = _first_invalid(edges, doc_offsets, owner, bits, _N_SLOTS[heads])
    if k >= 0:
        raise ValueError(f"edges are not a sub-hypergraph of the mention hypergraph at token {k}, type {t}")
    return edges, doc_offsets, heads


def edges_to_mentions(edges, doc_offsets) -> np.ndarray:
    """The mentions of a sub-hypergraph: (M, 3) int64 [first, last, type], or
    (M, 5) [first, last, type, head_first, head_last] when edges has the
    N_HEAD_KINDS kinds, sorted by row; batch coordinates, inclusive. edges
    (N, T, K) 0/1; an array that is not a sub-hypergraph is a ValueError.
    Ambiguous sub-hypergraphs (sec. 3.2, Figure 3) get the type-I (bracket)
    reading of the module docstring; the result always maps back to
    ``edges`` with ``mentions_to_edges``."""
    edges, doc_offsets, heads = _check_edges(edges, doc_offsets)
    owner, bits, _, _ = _LOOKUPS[heads]
    rows = _edges_to_mentions(edges, doc_offsets, owner, bits, _N_SLOTS[heads], _HEAD_SLOT[heads])
    rows = rows if heads else rows[:, :3]
    return rows[np.lexsort(rows.T[::-1])] if rows.shape[0] else rows


def _check_mentions(mentions, doc_offsets, n_types):
    if isinstance(n_types, (bool, np.bool_)) or not isinstance(n_types, (int, np.integer)) or n_types < 1:
        raise ValueError(f"n_types must be an integer >= 1, not {n_types!r}")
    doc_offsets = check_doc_offsets(doc_offsets)
    mentions = np.asarray(mentions)
    if mentions.size == 0 and mentions.ndim < 2:
        mentions = mentions.reshape(0, 3)
    if mentions.ndim != 2 or mentions.shape[1] not in (3, 5):
        raise ValueError(f"mentions must have shape (M, 3) or (M, 5) (with heads), not {mentions.shape}")
    if mentions.shape[0] and mentions.dtype.kind not in "iu":
        raise ValueError(f"mentions must be integers, not {mentions.dtype}")
    heads = mentions.shape[1] == 5
    mentions = mentions.astype(np.int64)
    full = mentions if heads else np.concatenate([mentions, mentions[:, :2]], axis=1)
    first, last, t, hf, hl = full.T
    doc = np.searchsorted(doc_offsets, first, side="right") - 1
    end = doc_offsets[np.clip(doc + 1, 0, doc_offsets.shape[0] - 1)]
    if np.any((first < 0) | (first > last) | (doc >= doc_offsets.shape[0] - 1) | (last >= end)):
        raise ValueError("every mention must have first <= last inside a single document")
    if np.any((t < 0) | (t >= n_types)):
        raise ValueError(f"mention types must lie in 0..{n_types - 1}")
    if np.any((hf < first) | (hf > hl) | (hl > last)):
        raise ValueError("every head must have first <= head_first <= head_last <= last")
    return np.ascontiguousarray(full), doc_offsets, int(n_types), heads


def mentions_to_edges(mentions, doc_offsets, n_types: int) -> np.ndarray:
    """The sub-hypergraph (N, T, K) int8 0/1 of a set of mentions (the gold
    structure for training, Theorem 3.1): the union of their paths. mentions
    (M, 3) [first, last, type] (K = N_KINDS) or (M, 5) with the head
    (K = N_HEAD_KINDS), batch coordinates, inclusive; repeated rows count
    once. See ``representable`` for the sets it does not determine."""
    full, doc_offsets, T, heads = _check_mentions(mentions, doc_offsets, n_types)
    _, _, t_kind, slot_kind = _LOOKUPS[heads]
    return _mentions_to_edges(
        full, int(doc_offsets[-1]), T, n_kinds(heads), _N_SLOTS[heads], _HEAD_SLOT[heads], t_kind, slot_kind
    )


def representable(mentions, doc_offsets, n_types: int) -> np.ndarray:
    """(D,) bool: whether each document's mention set (repeated rows count
    once) is exactly what ``edges_to_mentions`` reads from its sub-hypergraph
    ``mentions_to_edges``, i.e. survives the round trip (see the module
    docstring: without heads, iff no two mentions of a type cross and every
    inner start / end of a run belongs to one mention)."""
    full, doc_offsets, T, heads = _check_mentions(mentions, doc_offsets, n_types)
    rows = full if heads else full[:, :3]
    back = edges_to_mentions(mentions_to_edges(rows, doc_offsets, T), doc_offsets)
    both = np.concatenate([np.unique(rows, axis=0), back])
    unique, counts = np.unique(both, axis=0, return_counts=True)
    lost = unique[counts == 1]  # in exactly one of the two sets
    ok = np.ones(doc_offsets.shape[0] - 1, dtype=bool)
    ok[np.searchsorted(doc_offsets, lost[:, 0], side="right") - 1] = False
    return ok
