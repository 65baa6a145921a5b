"""Brute-force reference for ``spacy_depner.structures.trees.forest``, written from
the definition only: a token is at fault when its head is neither a root
marker (-1 or itself) nor a token of its sentence, or when following heads
from it (within its sentence) comes back to it in at most n steps.

The pipeline tests import it as ``structures.brute_forest``, so it imports
its one helper by that path too."""

from structures.brute_shared import sentence_of_each_token

NO_FAULT, HEAD_OUTSIDE_SENTENCE, CYCLE = 0, 1, 2


def _in_sentence_head(heads, sentence, t):
    """The head of ``t`` if it is a token of t's sentence other than t, else None."""
    h = int(heads[t])
    if h == -1 or h == t or not 0 <= h < len(heads) or sentence[h] != sentence[t]:
        return None
    return h


def brute_faults(heads, sentence_offsets):
    """Dict token -> kind of every token at fault."""
    sentence = sentence_of_each_token(sentence_offsets)
    faults = {}
    for t in range(len(heads)):
        h = int(heads[t])
        if h not in (-1, t) and (not 0 <= h < len(heads) or sentence[h] != sentence[t]):
            faults[t] = HEAD_OUTSIDE_SENTENCE
            continue
        v = t
        for _ in range(len(heads)):
            v = _in_sentence_head(heads, sentence, v)
            if v is None:
                break
            if v == t:
                faults[t] = CYCLE
                break
    return faults


def brute_first_fault(heads, sentence_offsets):
    """(token, kind) of the lowest token at fault; (-1, NO_FAULT) if none."""
    faults = brute_faults(heads, sentence_offsets)
    if not faults:
        return -1, NO_FAULT
    token = min(faults)
    return token, faults[token]
