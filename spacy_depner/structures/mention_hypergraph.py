"""Mention hypergraphs (Lu & Roth 2015, "Joint Mention Extraction and
Classification with Mention Hypergraphs", EMNLP 2015), in numba.

A log-linear model over the sub-hypergraphs of the mention hypergraph of a
document (sec. 3.2-3.3): overlapping and nested mentions of unbounded length,
with an inside pass (log Z), an outside pass (edge marginals, the exact
gradient of sum(log Z)) and a max-product pass (MAP), all O(n T) per document
(sec. 3.4), the mention penalty (sec. 3.5, 3.7) and optional heads (sec. 3.6).
Pure numpy/numba, no spaCy; one compiled call per batch.

The hypergraph (sec. 3.2, Figure 1). For a document of n tokens and T types,
at each position k: A^k, E^k, T_t^k, I_t^k (t < T), and the terminal X. Its
hyperedges <parent <- children>:

    A^k   <- E^k, A^(k+1)        (A^(n-1) <- E^(n-1)): the only hyperedge of A^k
    E^k   <- T_0^k, ..., T_(T-1)^k                   : the only hyperedge of E^k
    T_t^k <- X                   KIND_T_X  no mention of type t starts at k
    T_t^k <- I_t^k               KIND_T_I  mentions of type t start at k (+ penalty)
    I_t^k <- I_t^(k+1)           KIND_I_I  (green)  all continue to k + 1
    I_t^k <- I_t^(k+1), X        KIND_I_IX (brown)  some end at k, some continue
    I_t^k <- X                   KIND_I_X  (yellow) all end at k

(the hyperedges with a child I_t^n do not exist). A sub-hypergraph is what
the paper's paths make: A^0 is in it, and every node in it other than X has
exactly one of its hyperedges in it, whose children are then in it (a node
with two parents, e.g. I_t^k reached from T_t^k and from I_t^(k-1), is in
it once, with one hyperedge). The hyperedges of A and E are in every
sub-hypergraph (there is nothing to choose: "no mention at k" is E^k with
every T_t^k <- X, the paper's mentions "of length zero"), so they carry no
score: one would add the same constant to every sub-hypergraph.

Scores. ``scores`` (N, T, K) float: scores[k, t, kind] is the score of the
hyperedge ``kind`` whose parent is the type-t node at token k (batch
coordinates; K = N_KINDS = 5, or N_HEAD_KINDS = 17 with heads). The weight of
a sub-hypergraph is the sum of the scores of its hyperedges, plus
``penalty`` for each T -> I hyperedge (sec. 3.5: the mention penalty, "the
number of such hyperedges that exactly connect one T node and one I node";
sec. 3.7 tunes it on the development set to trade precision for recall).
p(y) = exp(weight(y)) / Z (sec. 3.3, eq. 1). Scores must be finite; float32
scores are read as they are, every sum and chart is float64.

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

Heads (sec. 3.6, ``heads=True``). I_t^k is replaced by I_t-B^k (before the
head), I_t-W^k (within the head) and I_t-A^k (after the head). A mention
[first, last] with head [head_first, head_last] (first <= head_first <=
head_last <= last; the head may be the whole mention) is the path
T^first -> B ... B -> W^head_first ... W^head_last -> A ... A -> X. The
one-step successors are T: B^k or W^k; B^k: B^(k+1) or W^(k+1); W^k:
W^(k+1), A^(k+1) or X; A^k: A^(k+1) or X. "The hyperedges also need to be
established accordingly in order to properly model all possible mention and
head combinations": here, as the three I hyperedges of Figure 1, a node has
one hyperedge per non-empty set of its successors (T: X or a non-empty
subset of {B, W}), 17 kinds (HEAD_KIND_NAMES); hyperedges to tokens past
the document do not exist (so B^(n-1), left without any, is never in a
sub-hypergraph: a head cannot start after the document). The penalty is added once per I child of a T
hyperedge (twice for T -> B, W: it opens two mentions). The decoding rule is
the same brackets, per node: the open mentions in a node are assigned to its
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

Algorithm (sec. 3.4). The types do not share hyperedges below E, so log Z
is the sum over types of a chain of two half steps per token, over the set
of I nodes (B, W, A with heads) in the sub-hypergraph: *carried* (reached
from token k - 1) -> T hyperedge -> *included* at k -> one hyperedge per
included node -> carried at k + 1; empty at both ends of the document. The
half steps are enumerated once (``_half_steps``): 4 + 4 without heads, 32 +
128 with heads, so a document costs O(n T), the same for the outside and
the max-product pass.
"""
import itertools
from typing import Tuple

import numpy as np
from numba import njit

from .batch_layout import check_doc_offsets, max_doc_length

NEG_INF = -np.inf

# Hyperedge kinds without heads: scores[k, t, kind] (parents T_t^k and I_t^k).
KIND_T_X, KIND_T_I, KIND_I_I, KIND_I_IX, KIND_I_X = range(5)
N_KINDS = 5
KIND_NAMES = ("T->X", "T->I", "I->I", "I->I,X", "I->X")

# Hyperedge kinds with heads (sec. 3.6): parent -> children (primes: at k + 1).
(HEAD_T_X, HEAD_T_B, HEAD_T_W, HEAD_T_BW,
 HEAD_B_B, HEAD_B_W, HEAD_B_BW,
 HEAD_W_W, HEAD_W_A, HEAD_W_X, HEAD_W_WA, HEAD_W_WX, HEAD_W_AX, HEAD_W_WAX,
 HEAD_A_A, HEAD_A_X, HEAD_A_AX) = range(17)
N_HEAD_KINDS = 17
HEAD_KIND_NAMES = (
    "T->X", "T->B", "T->W", "T->B,W",
    "B->B'", "B->W'", "B->B',W'",
    "W->W'", "W->A'", "W->X", "W->W',A'", "W->W',X", "W->A',X", "W->W',A',X",
    "A->A'", "A->X", "A->A',X",
)

# Each kind as (owner, bits): owner -1 is the T node, bits the set of I nodes
# it opens at k; owner s >= 0 is the I node (slot) s, bits its successors at
# k + 1, bit n_slots standing for X. Slots: (I,) or (B, W, A).
_KINDS = {
    False: ((-1, 0b0), (-1, 0b1), (0, 0b01), (0, 0b11), (0, 0b10)),
    True: ((-1, 0b000), (-1, 0b001), (-1, 0b010), (-1, 0b011),
           (0, 0b0001), (0, 0b0010), (0, 0b0011),
           (1, 0b0010), (1, 0b0100), (1, 0b1000), (1, 0b0110), (1, 0b1010), (1, 0b1100), (1, 0b1110),
           (2, 0b0100), (2, 0b1000), (2, 0b1100)),
}
_N_SLOTS = {False: 1, True: 3}
_HEAD_SLOT = {False: 0, True: 1}  # the slot that holds the head (the whole mention without heads)


def n_kinds(heads: bool = False) -> int:
    """K: 5 hyperedge kinds (KIND_*), 17 with heads (HEAD_*)."""
    return N_HEAD_KINDS if heads else N_KINDS


def kind_names(heads: bool = False) -> Tuple[str, ...]:
    """The name of every kind index, e.g. "I->I,X" for KIND_I_IX."""
    return HEAD_KIND_NAMES if heads else KIND_NAMES


def _half_steps(heads):
    """The two half steps of a token (see the module docstring), as one table
    of rows: src state, dst state, kinds used (padded with -1), penalty count.
    Rows [0, split) go from the carried to the included I nodes through the
    T hyperedge; rows [split, R) from the included nodes to the carried ones
    of the next token, one hyperedge per included node. States are bit sets
    of slots. Order matters only for Viterbi ties (first row wins)."""
    kinds = _KINDS[heads]
    n_slots = _N_SLOTS[heads]
    slot_mask = (1 << n_slots) - 1
    rows = []
    for carried in range(1 << n_slots):
        for kind, (owner, bits) in enumerate(kinds):
            if owner < 0:
                rows.append((carried, carried | bits, [kind], bin(bits).count("1")))
    split = len(rows)
    for included in range(1 << n_slots):
        choices = [[k for k, (owner, _) in enumerate(kinds) if owner == s] for s in range(n_slots) if included >> s & 1]
        for chosen in itertools.product(*choices):
            carried = 0
            for k in chosen:
                carried |= kinds[k][1] & slot_mask
            rows.append((included, carried, list(chosen), 0))
    table_kinds = np.full((len(rows), n_slots), -1, dtype=np.int64)  # <= one hyperedge per slot
    for r, (_, _, used, _) in enumerate(rows):
        table_kinds[r, : len(used)] = used
    src = np.array([row[0] for row in rows], dtype=np.int64)
    dst = np.array([row[1] for row in rows], dtype=np.int64)
    pen = np.array([row[3] for row in rows], dtype=np.int64)
    return src, dst, table_kinds, pen, split


_TABLES = {heads: _half_steps(heads) for heads in (False, True)}


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
# Chains: inside, outside, max-product (sec. 3.4)
# ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _weight(scores, k, t, kinds, pen, r, penalty):
    """Score of the half-step row r at token k, type t: its hyperedges' scores
    (float64 sums, float32 input included) and the penalty per opened I node."""
    w = pen[r] * penalty
    for j in range(kinds.shape[1]):
        kind = kinds[r, j]
        if kind < 0:
            break
        w += np.float64(scores[k, t, kind])
    return w


@njit(cache=True, inline="always")
def _log_sum_into(values, keys, lo, hi, top, acc, out):
    """out[s] = log sum of exp(values[r]) over the rows r in [lo, hi) with
    keys[r] = s (-inf for none), given top[s] = their maximum: one exp per
    row (the logsumexp shift)."""
    acc[:] = 0.0
    for r in range(lo, hi):
        if values[r] != NEG_INF:
            acc[keys[r]] += np.exp(values[r] - top[keys[r]])
    for s in range(out.shape[0]):
        out[s] = top[s] + np.log(acc[s]) if top[s] != NEG_INF else NEG_INF


@njit(cache=True)
def _inside(scores, first, n, penalty, src, dst, kinds, pen, split, use_max, chart, back, values, top, acc):
    """chart[h, t, state] for half steps h = 0..2n of the document starting at
    token ``first``: log-sum (or max, with the row in ``back``) over the
    partial sub-hypergraphs of type t left of h that end in ``state`` (even h:
    I nodes carried into token h / 2, odd h: I nodes included at token
    (h - 1) / 2). Sec. 3.4: O(n T) per document (the table is constant).
    Returns log Z (or the MAP weight): the sum over types of chart[2n, t, 0]
    (no I node carried past the last token)."""
    T = scores.shape[1]
    chart[0, :, :] = NEG_INF
    chart[0, :, 0] = 0.0
    for h in range(2 * n):
        k = first + h // 2
        lo, hi = (0, split) if h % 2 == 0 else (split, src.shape[0])
        for t in range(T):
            top[:] = NEG_INF
            for r in range(lo, hi):
                v = chart[h, t, src[r]]
                if v != NEG_INF:
                    v += _weight(scores, k, t, kinds, pen, r, penalty)
                values[r] = v
                if v > top[dst[r]]:
                    top[dst[r]] = v
                    back[h + 1, t, dst[r]] = r  # first maximum
            if use_max:
                chart[h + 1, t, :] = top
            else:
                _log_sum_into(values, dst, lo, hi, top, acc, chart[h + 1, t])
    total = 0.0
    for t in range(T):
        total += chart[2 * n, t, 0]
    return total


@njit(cache=True)
def _outside(scores, first, n, penalty, src, dst, kinds, pen, split, chart, outside, marginals, values, top, acc):
    """Outside pass (sec. 3.4, the hypergraph inside-outside): outside[h, t,
    state] is the log-sum over the completions right of half step h; each
    row's posterior exp(inside + weight + outside - log Z_t) is added to the
    marginal of each of its hyperedges."""
    T = scores.shape[1]
    outside[2 * n, :, :] = NEG_INF
    outside[2 * n, :, 0] = 0.0
    for h in range(2 * n - 1, -1, -1):
        k = first + h // 2
        lo, hi = (0, split) if h % 2 == 0 else (split, src.shape[0])
        for t in range(T):
            z = chart[2 * n, t, 0]
            top[:] = NEG_INF
            for r in range(lo, hi):
                v = outside[h + 1, t, dst[r]]
                if v != NEG_INF:
                    v += _weight(scores, k, t, kinds, pen, r, penalty)
                values[r] = v
                top[src[r]] = max(top[src[r]], v)
                a = chart[h, t, src[r]]
                if a == NEG_INF or v == NEG_INF:
                    continue
                p = np.exp(a + v - z)
                for j in range(kinds.shape[1]):
                    if kinds[r, j] < 0:
                        break
                    marginals[k, t, kinds[r, j]] += p
            _log_sum_into(values, src, lo, hi, top, acc, outside[h, t])


@njit(cache=True)
def _charts(doc_offsets, T, S, R):
    """Charts for the longest document and per-row buffers (R rows, S states)."""
    m = 2 * max_doc_length(doc_offsets) + 1
    return (np.empty((m, T, S)), np.zeros((m, T, S), dtype=np.int64),
            np.empty(R), np.empty(S), np.empty(S))


@njit(cache=True)
def _log_partition(scores, doc_offsets, penalty, src, dst, kinds, pen, split, S):
    """log Z (D,): the inside pass of every document (sec. 3.3-3.4)."""
    D = doc_offsets.shape[0] - 1
    chart, back, values, top, acc = _charts(doc_offsets, scores.shape[1], S, src.shape[0])
    log_z = np.zeros(D)
    for d in range(D):
        n = doc_offsets[d + 1] - doc_offsets[d]
        log_z[d] = _inside(scores, doc_offsets[d], n, penalty, src, dst, kinds, pen, split, False, chart, back, values, top, acc)
    return log_z


@njit(cache=True)
def _marginals(scores, doc_offsets, penalty, src, dst, kinds, pen, split, S):
    """log Z (D,) and edge marginals (N, T, K): inside, then outside pass (sec. 3.4)."""
    D = doc_offsets.shape[0] - 1
    chart, back, values, top, acc = _charts(doc_offsets, scores.shape[1], S, src.shape[0])
    outside = np.empty(chart.shape)
    log_z = np.zeros(D)
    marginals = np.zeros(scores.shape)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        log_z[d] = _inside(scores, first, n, penalty, src, dst, kinds, pen, split, False, chart, back, values, top, acc)
        _outside(scores, first, n, penalty, src, dst, kinds, pen, split, chart, outside, marginals, values, top, acc)
    return log_z, marginals


@njit(cache=True)
def _viterbi(scores, doc_offsets, penalty, src, dst, kinds, pen, split, S):
    """MAP weight (D,) and edges (N, T, K) int8: max-product inside pass,
    then the back-trace of each type's chain from the empty final state."""
    D = doc_offsets.shape[0] - 1
    T = scores.shape[1]
    chart, back, values, top, acc = _charts(doc_offsets, T, S, src.shape[0])
    best = np.zeros(D)
    edges = np.zeros(scores.shape, dtype=np.int8)
    for d in range(D):
        first = doc_offsets[d]
        n = doc_offsets[d + 1] - first
        best[d] = _inside(scores, first, n, penalty, src, dst, kinds, pen, split, True, chart, back, values, top, acc)
        for t in range(T):
            state = 0
            for h in range(2 * n, 0, -1):
                r = back[h, t, state]
                for j in range(kinds.shape[1]):
                    if kinds[r, j] < 0:
                        break
                    edges[first + (h - 1) // 2, t, kinds[r, j]] = 1
                state = src[r]
    return best, edges


# ---------------------------------------------------------------------------
# Mentions <-> sub-hypergraphs (sec. 3.2, Theorem 3.1 and Figure 3)
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
        bigger[:m] = out[:m]
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
    m = 0
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
# Input checks and public operations
# ---------------------------------------------------------------------------


def _check_heads(heads):
    if not isinstance(heads, (bool, np.bool_)):
        raise ValueError(f"heads must be True or False, not {heads!r}")
    return bool(heads)


def _check(scores, doc_offsets, penalty, heads):
    heads = _check_heads(heads)
    scores = np.asarray(scores)
    K = n_kinds(heads)
    if scores.ndim != 3 or scores.shape[1] < 1 or scores.shape[2] != K:
        raise ValueError(f"scores must have shape (n_tokens, n_types >= 1, {K}) (heads={heads}), not {scores.shape}")
    if scores.dtype.kind not in "iuf":
        raise ValueError(f"scores must be real numbers, not {scores.dtype}")
    scores = np.ascontiguousarray(scores, dtype=np.float32 if scores.dtype == np.float32 else np.float64)
    doc_offsets = check_doc_offsets(doc_offsets, scores.shape[0])
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite (the model produced NaN or inf)")
    if isinstance(penalty, (bool, np.bool_)) or not isinstance(penalty, (int, float, np.integer, np.floating)) or not np.isfinite(penalty):
        raise ValueError(f"penalty must be a finite real number, not {penalty!r}")
    src, dst, kinds, pen, split = _TABLES[heads]
    return scores, doc_offsets, float(penalty), src, dst, kinds, pen, split, 1 << _N_SLOTS[heads]


def log_partition(scores, doc_offsets, penalty: float = 0.0, heads: bool = False) -> np.ndarray:
    """log Z (D,) of each document: the log-sum over its sub-hypergraphs y of
    exp(weight(y)) (sec. 3.3, the denominator of eq. 1), by the inside pass
    (sec. 3.4). scores (N, T, K), doc_offsets (D + 1,); empty documents have
    log Z = 0 (one empty sub-hypergraph)."""
    return _log_partition(*_check(scores, doc_offsets, penalty, heads))


def marginals(scores, doc_offsets, penalty: float = 0.0, heads: bool = False) -> Tuple[np.ndarray, np.ndarray]:
    """(log Z (D,), marginals (N, T, K) float64): the probability that each
    hyperedge is in the sub-hypergraph, exactly the gradient of sum(log Z)
    with respect to ``scores`` (the expectation of eq. 3), by the outside
    pass (sec. 3.4)."""
    return _marginals(*_check(scores, doc_offsets, penalty, heads))


def viterbi(scores, doc_offsets, penalty: float = 0.0, heads: bool = False) -> Tuple[np.ndarray, np.ndarray]:
    """(best (D,), edges (N, T, K) int8 0/1): the weight of the MAP
    sub-hypergraph of each document and its hyperedges, by the max-product
    pass. Ties go to the first half step of the table (e.g. T -> X before
    T -> I). Decode the mentions with ``edges_to_mentions``."""
    return _viterbi(*_check(scores, doc_offsets, penalty, heads))


def _check_edges(edges, doc_offsets):
    edges = np.asarray(edges)
    if edges.ndim != 3 or edges.shape[1] < 1 or edges.shape[2] not in (N_KINDS, N_HEAD_KINDS):
        raise ValueError(f"edges must have shape (n_tokens, n_types >= 1, {N_KINDS} or {N_HEAD_KINDS}), not {edges.shape}")
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
    return _mentions_to_edges(full, int(doc_offsets[-1]), T, n_kinds(heads), _N_SLOTS[heads], _HEAD_SLOT[heads], t_kind, slot_kind)


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
