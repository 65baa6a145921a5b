"""Brute-force reference for ``spacy_depner.structures.chain._linear_chain``.

It enumerates every tag sequence of each document (itertools.product over
the T tags, n <= 5 tokens), keeps the valid ones and scores each by the
formula of the ``linear_chain`` docstring (``brute_chain``,
``pure_python_score``).
For the BIO and BILOU schemes the valid sequences are found twice,
independently: by the ``allowed`` matrix and by a hand-written rule list over
the tag *names* (``is_valid_names``), and the two sets must be equal
(``valid_sequences``); ``expected_allowed_by_rules`` writes the allowed
matrix out from the rule list of the docstring, ``entities_of_names`` reads
the entities of a sequence of names by a plain scan.
"""

import functools
import itertools

import numpy as np
from brute_shared import logsumexp

from spacy_depner.structures.chain._linear_chain import allowed_transitions, tag_names

LABELS = ["PER", "LOC", "ORG", "MISC"]


def is_valid_names(names, scheme):
    """Validity of a tag-name sequence by the rules of the scheme, read left to
    right with the label of the currently open entity (None when none is open):
    BIO: I-X only inside an open X (opened by B-X, kept open by I-X).
    BILOU: with nothing open only O, B-X (opens X), U-X; with X open only I-X
    (keeps it open) or L-X (closes it); nothing may be open at the end."""
    open_label = None
    for name in names:
        prefix, _, label = name.partition("-")
        if scheme == "BIO":
            if prefix == "I" and open_label != label:
                return False
            open_label = label if prefix in ("B", "I") else None
        else:
            if open_label is None and prefix not in ("O", "B", "U"):
                return False
            if open_label is not None and (prefix not in ("I", "L") or label != open_label):
                return False
            open_label = label if prefix in ("B", "I") else None
    return open_label is None or scheme == "BIO"


def entities_of_names(names):
    """[(first, last, label)] of a valid sequence of tag names, by a plain scan:
    an entity starts at B or U and runs over the following I and L of the same
    label (BIO: until a tag other than I)."""
    entities = []
    t = 0
    while t < len(names):
        prefix, _, label = names[t].partition("-")
        if prefix in ("B", "U"):
            last = t
            while prefix != "U" and last + 1 < len(names) and names[last + 1] in (f"I-{label}", f"L-{label}"):
                last += 1
                if names[last].startswith("L-"):
                    break
            entities.append((t, last, label))
            t = last + 1
        else:
            t += 1
    return entities


@functools.lru_cache(maxsize=None)
def every_sequence(T, n):
    """(T^n, n) int64: every sequence of n tags, by itertools.product."""
    return np.array(list(itertools.product(range(T), repeat=n)), dtype=np.int64).reshape(T**n, n)


def allowed_by_matrix(sequences, allowed):
    """Mask of the (M, n > 0) sequences whose transitions, start and end included, are all allowed."""
    B = allowed.shape[0] - 1
    M = sequences.shape[0]
    full = np.concatenate([np.full((M, 1), B), sequences, np.full((M, 1), B)], axis=1)
    return allowed[full[:, :-1], full[:, 1:]].all(axis=1)


@functools.lru_cache(maxsize=None)
def valid_sequences(scheme, n_labels, n):
    """(M, n) valid sequences of the scheme, with the check that the allowed
    matrix and the rule list select the same set."""
    names = tag_names(LABELS[:n_labels], scheme)
    everything = every_sequence(len(names), n)
    if n == 0:
        return everything  # the one empty sequence
    by_matrix = allowed_by_matrix(everything, allowed_transitions(n_labels, scheme))
    by_rules = np.array([is_valid_names([names[y] for y in row], scheme) for row in everything])
    assert np.array_equal(by_matrix, by_rules), (scheme, n_labels, n, everything[by_matrix != by_rules][:5])
    return everything[by_rules]


def brute_chain(scores, doc_offsets, transitions, sequences_of_length):
    """Everything by enumeration. ``sequences_of_length(n)`` gives the (M, n)
    sequences in the space of an n-token document (n = 0: one empty sequence,
    score 0). Returns a dict: log_z (D,), tag_marginals (N, T),
    transition_marginals (T+1, T+1), best_score (D,), best_tags (N,),
    best_counts (T+1, T+1) and n_sequences (D,)."""
    N, T = scores.shape
    B = T
    D = len(doc_offsets) - 1
    out = dict(
        log_z=np.zeros(D),
        best_score=np.zeros(D),
        n_sequences=np.zeros(D, dtype=np.int64),
        tag_marginals=np.zeros((N, T)),
        transition_marginals=np.zeros((T + 1, T + 1)),
        best_tags=np.full(N, -1, dtype=np.int64),
        best_counts=np.zeros((T + 1, T + 1)),
    )
    for d in range(D):
        first, end = int(doc_offsets[d]), int(doc_offsets[d + 1])
        n = end - first
        sequences = sequences_of_length(n)
        M = sequences.shape[0]
        out["n_sequences"][d] = M
        if n == 0:
            continue
        full = np.concatenate([np.full((M, 1), B), sequences, np.full((M, 1), B)], axis=1)
        total = scores[first + np.arange(n), sequences].sum(axis=1) + transitions[full[:, :-1], full[:, 1:]].sum(axis=1)
        log_z = logsumexp(total)
        out["log_z"][d] = log_z
        weight = np.exp(total - log_z)
        for t in range(n):
            out["tag_marginals"][first + t] = np.bincount(sequences[:, t], weights=weight, minlength=T)
        pair = full[:, :-1] * (T + 1) + full[:, 1:]
        out["transition_marginals"] += np.bincount(
            pair.ravel(), weights=np.repeat(weight, n + 1), minlength=(T + 1) ** 2
        ).reshape(T + 1, T + 1)
        top = int(np.argmax(total))
        out["best_score"][d] = total[top]
        out["best_tags"][first:end] = sequences[top]
        out["best_counts"] += np.bincount(pair[top], minlength=(T + 1) ** 2).reshape(T + 1, T + 1)
    return out


def pure_python_score(tags, scores, transitions):
    """score(y) = sum scores[t, y_t] + T[B, y_1] + sum T[y_t, y_t+1] + T[y_n, B] (0 when empty)."""
    if len(tags) == 0:
        return 0.0
    B = len(scores[0])
    path = [B] + list(tags) + [B]
    return sum(float(scores[t][y]) for t, y in enumerate(tags)) + sum(
        float(transitions[a][b]) for a, b in zip(path, path[1:])
    )


def expected_allowed_by_rules(n_labels, scheme):
    """The allowed matrix written out from the rule list of the module docstring, over tag names."""
    names = tag_names(LABELS[:n_labels], scheme) + ["<B>"]
    T = len(names) - 1
    allowed = np.zeros((T + 1, T + 1), dtype=bool)
    for a, x in enumerate(names):
        for b, y in enumerate(names):
            px, _, lx = x.partition("-")
            py, _, ly = y.partition("-")
            if x == "<B>" and y == "<B>":
                continue
            if scheme == "BIO":
                if y == "<B>":
                    ok = True
                elif py in ("O", "B"):
                    ok = True
                else:  # I
                    ok = px in ("B", "I") and lx == ly
            else:
                if px in ("B", "I"):
                    ok = py in ("I", "L") and lx == ly
                else:  # O, L, U or start
                    ok = y == "<B>" or py in ("O", "B", "U")
            allowed[a, b] = ok
    return allowed
