"""What the brute-force twins share, written from the definitions: the
sentence of each token, and a log-sum-exp in plain Python."""

import math


def sentence_of_each_token(sentence_offsets):
    """List: the sentence index of every token."""
    return [
        s
        for s in range(len(sentence_offsets) - 1)
        for _ in range(int(sentence_offsets[s + 1]) - int(sentence_offsets[s]))
    ]


def logsumexp(values):
    """log(sum(exp(values))), -inf for no value or only -inf."""
    values = [float(v) for v in values]
    top = max(values, default=-math.inf)
    if top == -math.inf:
        return -math.inf
    return top + math.log(sum(math.exp(v - top) for v in values))
