"""The compiled batch drivers of ``nested.mentions`` (one call per batch),
one set per space, so that a space compiles its own passes only.

``DRIVERS[space]`` holds the (log_partition, marginals, viterbi) of one space,
each ``f(scores, doc_offsets, span_offsets, mask, max_length)`` with scores
(S, T) float64 C-contiguous, doc_offsets and span_offsets int64, mask (S,)
bool, max_length an int (-1: none); the layout is ``nested.mentions``'s.
Each driver is a closure over the space's code, a compile-time constant:
numba prunes the branches of the other spaces before typing, and the
overloads ``_inside`` and ``_expand`` pick the space's own passes by that
constant, so the first call of one space compiles none of the others'
kernels (numba keys the disk cache of a closure by its cell values: one
cached driver per space). Each space's marginals try its scaled pass
(``scaled``: ``semi_markov._marginals_semi_markov_scaled``,
``cyk._marginals_cyk_scaled``, ``quadratic._marginals_scaled``) on each
document first (one compiled call per batch), and its log-space pass, a
second compiled call made and compiled only when a batch has one, on the
documents out of that pass's range. (numba keys the disk cache of a
kernel by its own file only; the package's default cache folder is
therefore one per state of all kernel modules: ``numba_runtime.cache_dir``.)
"""

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import overload

from .charts import (
    _best_label,
    _chart_shape,
    _charts,
    _mention_axioms,
    _mention_axioms_weights,
    _record,
    _row,
    _widths,
)
from .cyk import STASH_LIMIT, _expand_cyk, _inside_cyk, _marginals_cyk, _marginals_cyk_scaled, _stash_size
from .quadratic import _expand_quadratic, _inside_quadratic, _marginals_quadratic, _marginals_scaled
from .scaled import _scaled_charts
from .semi_markov import _inside_semi_markov, _marginals_semi_markov, _marginals_semi_markov_scaled

SPACES = ("semi_markov", "cyk", "quadratic")
SEMI_MARKOV, CYK, QUADRATIC = 0, 1, 2


def _space_code(code) -> int:
    """The space code of a literal integer type (the drivers pass a constant)."""
    if not isinstance(code, types.IntegerLiteral) or code.literal_value not in (SEMI_MARKOV, CYK, QUADRATIC):
        raise TypingError(f"the nested space code must be a constant 0, 1 or 2, not {code}")
    return code.literal_value


# ---------------------------------------------------------------------------
# Dispatch on the space, at compile time
# ---------------------------------------------------------------------------


def _inside(code, n, W, mention, part, full, ready, left, unit, prefix, use_max):
    """The inside pass of space ``code`` (a constant); returns the goal [->, n]."""
    raise NotImplementedError("compiled code only: the overload below picks the pass")


@overload(_inside, prefer_literal=True)
def _inside_of_space(code, n, W, mention, part, full, ready, left, unit, prefix, use_max):
    space = _space_code(code)
    if space == SEMI_MARKOV:
        return lambda code, n, W, mention, part, full, ready, left, unit, prefix, use_max: _inside_semi_markov(
            n, W, mention, prefix, use_max
        )
    if space == CYK:
        return lambda code, n, W, mention, part, full, ready, left, unit, prefix, use_max: _inside_cyk(
            n, W, mention, part, full, ready, prefix, use_max
        )
    return lambda code, n, W, mention, part, full, ready, left, unit, prefix, use_max: _inside_quadratic(
        n, W, mention, part, full, ready, left, unit, prefix, use_max
    )


def _expand(code, scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top):
    """Back-trace of part[i, k] in space ``code`` (a constant; the semi-Markov
    space has no such item); returns the new top of ``stack``."""
    raise NotImplementedError("compiled code only: the overload below picks the back-trace")


@overload(_expand, prefer_literal=True)
def _expand_of_space(code, scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top):
    space = _space_code(code)
    if space == SEMI_MARKOV:
        return lambda code, scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top: top
    if space == CYK:
        return lambda code, scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top: _expand_cyk(
            scores, row0, i, k, mention, part, full, ready, labels, stack, top
        )
    return lambda code, scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top: (
        _expand_quadratic(scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top)
    )


@njit(cache=True)
def _backtrack(code, scores, row0, n, W, mention, part, full, ready, left, unit, prefix, labels, stack):
    """Follow the max-semiring charts from the goal [->, n]: rules (a)/(b)
    (semi-Markov) or (h)/(i), then each mention's internal structure."""
    top = 0
    j = n
    while j > 0:
        if prefix[j] == prefix[j - 1]:  # (b) / (i) won (ties prefer no mention)
            j -= 1
            continue
        start = max(0, j - W)  # the first start that reaches the max by (a) / (h)
        while (
            start < j - 1
            and prefix[start] + (mention[start, j - start] if code == SEMI_MARKOV else full[start, j - start])
            != prefix[j]
        ):
            start += 1
        if code == SEMI_MARKOV:
            labels[_row(row0, start, j)] = _best_label(scores, _row(row0, start, j))
        else:
            top = _record(scores, row0, start, j, labels, stack, top)
        j = start
    while top > 0:
        top -= 1
        i = stack[top, 0]
        k = stack[top, 1]
        top = _expand(code, scores, row0, i, k, mention, part, full, ready, left, unit, labels, stack, top)


# ---------------------------------------------------------------------------
# Batch drivers: one compiled call per batch, one set per space
# ---------------------------------------------------------------------------


def _drivers(code: int):
    """(log_partition, marginals, viterbi) of the space ``code``."""

    @njit(cache=True)
    def log_partition(scores, doc_offsets, span_offsets, mask, max_length):
        """log Z of every document (rules of ``code``'s inside pass)."""
        D = doc_offsets.shape[0] - 1
        widths = _widths(doc_offsets, span_offsets, mask, max_length)
        mention, part, full, ready, left, unit, prefix = _charts(doc_offsets, widths)
        log_z = np.zeros(D)
        for d in range(D):
            n = doc_offsets[d + 1] - doc_offsets[d]
            W = widths[d]
            if W == 0:
                continue  # no allowed span: the empty analysis only
            _mention_axioms(scores, mask, span_offsets[d], n, W, False, mention)
            log_z[d] = _inside(code, n, W, mention, part, full, ready, left, unit, prefix, False)
        return log_z

    @njit(cache=True)
    def scaled_marginals(scores, doc_offsets, span_offsets, mask, max_length):
        """log Z and mention marginals of every document the space's scaled pass
        takes (inside pass in scaled probabilities, then its reverse mode), and
        which it took: (log_z, marginals, taken)."""
        D = doc_offsets.shape[0] - 1
        widths = _widths(doc_offsets, span_offsets, mask, max_length)
        rows, columns = _chart_shape(doc_offsets, widths)
        scaled = _scaled_charts(rows, columns)
        log_z = np.zeros(D)
        marginals = np.zeros(scores.shape)
        taken = np.ones(D, dtype=np.bool_)
        for d in range(D):
            n = doc_offsets[d + 1] - doc_offsets[d]
            W = widths[d]
            if W == 0:
                continue
            row0 = span_offsets[d]
            if code == SEMI_MARKOV:
                log_z[d], taken[d] = _marginals_semi_markov_scaled(scores, mask, row0, n, W, scaled, marginals)
            elif code == CYK:
                log_z[d], taken[d] = _marginals_cyk_scaled(scores, mask, row0, n, W, scaled, marginals)
            else:
                log_z[d], taken[d] = _marginals_scaled(scores, mask, row0, n, W, scaled, marginals)
        return log_z, marginals, taken

    @njit(cache=True)
    def log_space_marginals(scores, doc_offsets, span_offsets, mask, max_length, todo, log_z, marginals):
        """log Z and mention marginals, in place, of the documents ``todo``
        (those out of the scaled pass's range): inside pass in log space,
        then its outside pass. Compiled only when a batch has such a document."""
        D = doc_offsets.shape[0] - 1
        widths = _widths(doc_offsets, span_offsets, mask, max_length)
        mention, part, full, ready, left, unit, prefix = _charts(doc_offsets, widths)
        out_full = np.empty(part.shape)
        out_ready = np.empty(part.shape)
        out_left = np.empty(part.shape)
        out_unit = np.empty(unit.shape)
        out_prefix = np.empty(prefix.shape)
        rows = part.shape[0] if code == QUADRATIC else 0
        shares = (
            np.empty((rows, part.shape[1])),
            np.empty((rows, part.shape[1])),
            np.empty((rows, part.shape[1])),
            np.empty((rows, part.shape[1])),
            np.empty((rows, part.shape[1])),
            np.empty((rows, part.shape[1])),
        )
        first_level = (np.empty(part.shape), np.empty(prefix.shape), np.empty(prefix.shape))
        need = 0
        if code == CYK:
            for d in range(D):
                if todo[d]:
                    need = max(need, _stash_size(doc_offsets[d + 1] - doc_offsets[d], widths[d]))
        stash = np.empty(need if need <= STASH_LIMIT else 0)
        where = np.empty(part.shape if need > 0 else (0, 0), dtype=np.int64)
        for d in range(D):
            n = doc_offsets[d + 1] - doc_offsets[d]
            W = widths[d]
            if W == 0 or not todo[d]:
                continue
            row0 = span_offsets[d]
            _mention_axioms_weights(scores, mask, row0, n, W, mention, marginals)
            if code == SEMI_MARKOV:
                log_z[d] = _marginals_semi_markov(
                    n, W, row0, mention, prefix, part, unit, out_unit, out_prefix, marginals
                )
                continue
            if code == CYK:
                log_z[d] = _marginals_cyk(
                    n,
                    W,
                    row0,
                    mention,
                    part,
                    full,
                    ready,
                    left,
                    prefix,
                    first_level,
                    out_full,
                    out_ready,
                    out_prefix,
                    marginals,
                    stash,
                    where,
                )
                continue
            log_z[d] = _marginals_quadratic(
                n,
                W,
                row0,
                mention,
                part,
                full,
                ready,
                left,
                unit,
                prefix,
                first_level,
                shares,
                out_full,
                out_ready,
                out_left,
                out_unit,
                out_prefix,
                marginals,
            )

    @njit(cache=True)
    def viterbi(scores, doc_offsets, span_offsets, mask, max_length):
        """MAP score and labels: max-semiring inside pass, then the back-trace."""
        D = doc_offsets.shape[0] - 1
        widths = _widths(doc_offsets, span_offsets, mask, max_length)
        mention, part, full, ready, left, unit, prefix = _charts(doc_offsets, widths)
        stack = np.empty((prefix.shape[0] + 1, 2), dtype=np.int64)
        best = np.zeros(D)
        labels = np.full(scores.shape[0], -1, dtype=np.int64)
        for d in range(D):
            n = doc_offsets[d + 1] - doc_offsets[d]
            W = widths[d]
            if W == 0:
                continue
            row0 = span_offsets[d]
            _mention_axioms(scores, mask, row0, n, W, True, mention)
            best[d] = _inside(code, n, W, mention, part, full, ready, left, unit, prefix, True)
            _backtrack(code, scores, row0, n, W, mention, part, full, ready, left, unit, prefix, labels, stack)
        return best, labels

    def marginals(scores, doc_offsets, span_offsets, mask, max_length):
        """log Z and mention marginals of every document: the scaled pass, and
        the log-space pass for the documents out of its range."""
        log_z, out, taken = scaled_marginals(scores, doc_offsets, span_offsets, mask, max_length)
        if not taken.all():
            log_space_marginals(scores, doc_offsets, span_offsets, mask, max_length, ~taken, log_z, out)
        return log_z, out

    marginals.scaled, marginals.log_space = scaled_marginals, log_space_marginals
    return log_partition, marginals, viterbi


DRIVERS = {space: _drivers(code) for code, space in enumerate(SPACES)}
