"""The hyperedge kinds of the mention hypergraph of ``mention_hypergraph``
(Lu & Roth 2015, sec. 3.2 and, with heads, sec. 3.6): the KIND_* and HEAD_*
indices of the last axis of ``scores`` and of the edge arrays, their names,
and each kind as (owner, bits) for the tables of the recursions and of the
mention encoding.

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
sub-hypergraph: a head cannot start after the document).
"""

# Hyperedge kinds without heads: scores[k, t, kind] (parents T_t^k and I_t^k).
KIND_T_X, KIND_T_I, KIND_I_I, KIND_I_IX, KIND_I_X = range(5)
N_KINDS = 5
KIND_NAMES = ("T->X", "T->I", "I->I", "I->I,X", "I->X")

# Hyperedge kinds with heads (sec. 3.6): parent -> children (primes: at k + 1).
(
    HEAD_T_X,
    HEAD_T_B,
    HEAD_T_W,
    HEAD_T_BW,
    HEAD_B_B,
    HEAD_B_W,
    HEAD_B_BW,
    HEAD_W_W,
    HEAD_W_A,
    HEAD_W_X,
    HEAD_W_WA,
    HEAD_W_WX,
    HEAD_W_AX,
    HEAD_W_WAX,
    HEAD_A_A,
    HEAD_A_X,
    HEAD_A_AX,
) = range(17)
N_HEAD_KINDS = 17
HEAD_KIND_NAMES = (
    "T->X",
    "T->B",
    "T->W",
    "T->B,W",
    "B->B'",
    "B->W'",
    "B->B',W'",
    "W->W'",
    "W->A'",
    "W->X",
    "W->W',A'",
    "W->W',X",
    "W->A',X",
    "W->W',A',X",
    "A->A'",
    "A->X",
    "A->A',X",
)

# Each kind as (owner, bits): owner -1 is the T node, bits the set of I nodes
# it opens at k; owner s >= 0 is the I node (slot) s, bits its successors at
# k + 1, bit n_slots standing for X. Slots: (I,) or (B, W, A).
_KINDS = {
    False: ((-1, 0b0), (-1, 0b1), (0, 0b01), (0, 0b11), (0, 0b10)),
    True: (
        (-1, 0b000),
        (-1, 0b001),
        (-1, 0b010),
        (-1, 0b011),
        (0, 0b0001),
        (0, 0b0010),
        (0, 0b0011),
        (1, 0b0010),
        (1, 0b0100),
        (1, 0b1000),
        (1, 0b0110),
        (1, 0b1010),
        (1, 0b1100),
        (1, 0b1110),
        (2, 0b0100),
        (2, 0b1000),
        (2, 0b1100),
    ),
}
_N_SLOTS = {False: 1, True: 3}
_HEAD_SLOT = {False: 0, True: 1}  # the slot that holds the head (the whole mention without heads)


def n_kinds(heads: bool = False) -> int:
    """K: 5 hyperedge kinds (KIND_*), 17 with heads (HEAD_*)."""
    return N_HEAD_KINDS if heads else N_KINDS
