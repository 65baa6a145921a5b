"""Partial annotation: the tokens whose annotation is missing, cut into runs.

A partial annotation is an analysis (``gold``) and a mask of missing tokens
(N,) bool: on a missing token nothing is known; on an annotated token the
gold mentions that cover it are all the mentions that cover it (``O`` in
spaCy's ``doc.ents``). An analysis *agrees* with it when its mentions that
touch an annotated token are exactly the gold mentions, and no gold mention
touches a missing token.

In every structure of this package such an analysis is the gold mentions
plus an analysis of each *run* (a maximal stretch of missing tokens within
one unit) on its own: a mention of a run cannot reach an annotated token,
none of the gold mentions lies inside a run, so the runs are independent
units whose borders are gold (or the unit's edge). The log-partition over the
agreeing analyses (``Structure.constrained``) is the score of the gold part
plus the log Z of each run, where a structure with transitions gives a run
the transitions across its borders (from the gold label before it, to the
gold label after it) in place of its start and end transitions. The runs and
the stretches of annotated tokens between them are both ``Runs``.
"""

from typing import Callable, NamedTuple, Optional

import numpy as np

from .trees.candidate_spans import span_index


class Runs(NamedTuple):
    """Maximal stretches of the selected tokens within each unit.

    tokens (M,) int64: the selected tokens, increasing (batch coordinates);
        the *compact* coordinate of tokens[i] is i.
    offsets (R + 1,) int64: run r is tokens[offsets[r]:offsets[r + 1]]
        (compact coordinates: the units of the runs as a batch).
    before (R,) int64: the token just before run r in its unit (-1: the run
        starts the unit); after (R,): the token just after it (-1: it ends
        the unit).
    run_of (N,) int64: the run of each token, -1 for the others.
    """

    tokens: np.ndarray
    offsets: np.ndarray
    before: np.ndarray
    after: np.ndarray
    run_of: np.ndarray

    @property
    def first(self) -> np.ndarray:
        return self.tokens[self.offsets[:-1]]

    @property
    def last(self) -> np.ndarray:
        return self.tokens[self.offsets[1:] - 1]

    def inside(self, spans: np.ndarray) -> np.ndarray:
        """(S,) bool: the spans (S, 2) [first, last] whose tokens all lie in one run."""
        spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        run = self.run_of[spans[:, 0]]
        return (run >= 0) & (run == self.run_of[spans[:, 1]])

    def compact(self, spans: np.ndarray) -> np.ndarray:
        """Spans (S, 2) inside the runs in compact coordinates."""
        return np.searchsorted(self.tokens, np.asarray(spans, dtype=np.int64)).astype(np.int64)


def missing_mask(missing, offsets: np.ndarray, name: str) -> np.ndarray:
    """The mask of missing tokens (N,) as bool: a bool array, or numbers that
    are all 0 or 1, one per token of the units ``offsets``; a ValueError
    naming ``name`` (the structure) otherwise."""
    missing = np.asarray(missing)
    n_tokens = int(offsets[-1])
    if missing.ndim != 1 or missing.shape[0] != n_tokens:
        raise ValueError(
            f"{name}: the mask of missing tokens must have one entry per token ({n_tokens}), not shape {missing.shape}"
        )
    if missing.dtype != bool:
        if missing.dtype.kind not in "iuf" or not np.all((missing == 0) | (missing == 1)):
            raise ValueError(
                f"{name}: the mask of missing tokens must be bool (or 0/1), not {missing.dtype} with other values"
            )
        missing = missing == 1
    return missing


def rejected_mentions(rejected, n_tokens: int, n_labels: int, structure: str) -> np.ndarray:
    """Rejected mentions (R, 3) [first, last, label from 0] as int64, checked:
    inside the batch's ``n_tokens``, first <= last, labels in [0, ``n_labels``);
    a ValueError naming ``structure`` and the first bad row otherwise."""
    rejected = np.asarray(rejected)
    if rejected.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if rejected.ndim != 2 or rejected.shape[1] != 3 or rejected.dtype.kind not in "iu":
        raise ValueError(
            f"{structure}: rejected mentions must be (R, 3) integers [first, last, label], not {rejected.shape}"
        )
    rejected = rejected.astype(np.int64)
    bad = np.flatnonzero(
        (rejected[:, 0] < 0)
        | (rejected[:, 1] < rejected[:, 0])
        | (rejected[:, 1] >= n_tokens)
        | (rejected[:, 2] < 0)
        | (rejected[:, 2] >= n_labels)
    )
    if bad.shape[0]:
        raise ValueError(
            f"{structure}: the rejected mention {rejected[bad[0]].tolist()} is not [first, last, label] with "
            f"0 <= first <= last < {n_tokens} and 0 <= label < {n_labels}"
        )
    return rejected


def rejected_gold(mention, structure: str) -> ValueError:
    """The error for a rejected mention [first, last, label] that is also a gold mention."""
    first, last, label = (int(v) for v in mention)
    return ValueError(
        f"{structure}: the rejected mention {first}..{last} (label {label}) is also a gold mention: "
        "an annotation cannot both accept and reject it (drop one of the two)"
    )


def forbidden_in_runs(
    rejected,
    spans: np.ndarray,
    gold_columns: np.ndarray,
    missing: np.ndarray,
    free: np.ndarray,
    n_columns: int,
    first_label_column: int,
    structure: str,
) -> np.ndarray:
    """(F, n_columns) bool over the runs' spans ``spans[free]``: the score
    columns of the rejected mentions (R, 3) [first, last, label from 0] that
    lie inside a run of missing tokens, label l in column l +
    ``first_label_column``. A rejected mention that touches an annotated
    token excludes nothing more (the agreeing analyses hold exactly the gold
    mentions there), unless it is gold (``gold_columns`` (S,), the gold
    column of each span): then a ValueError; one that is no span (of a batch
    with no spans, too) excludes nothing: no analysis can contain it."""
    n_tokens = missing.shape[0]
    rejected = rejected_mentions(rejected, n_tokens, n_columns - first_label_column, structure)
    rows = span_index(spans, rejected[:, :2], n_tokens)
    columns = rejected[:, 2] + first_label_column
    gold = rows >= 0
    gold[gold] = gold_columns[rows[gold]] == columns[gold]  # (a batch with no spans has no gold column to read)
    if gold.any():
        raise rejected_gold(rejected[np.flatnonzero(gold)[0]], structure)
    position = np.full(spans.shape[0], -1, dtype=np.int64)
    position[free] = np.arange(free.shape[0])
    inside = (rows >= 0) & ~touching_missing(rejected[:, :2], ~missing)
    forbidden = np.zeros((free.shape[0], n_columns), dtype=bool)
    forbidden[position[rows[inside]], columns[inside]] = True
    return forbidden


def runs_of(selected: np.ndarray, offsets: np.ndarray) -> Runs:
    """The runs of the ``selected`` tokens (N,) bool within the units ``offsets`` (U + 1,)."""
    selected = np.asarray(selected, dtype=bool)
    n = selected.shape[0]
    if int(offsets[-1]) != n:
        raise ValueError(f"the mask of missing tokens has {n} entries for a batch of {int(offsets[-1])} tokens")
    unit_start = np.zeros(n + 1, dtype=bool)
    unit_start[np.asarray(offsets, dtype=np.int64)] = True
    previous = np.concatenate([[False], selected[:-1]])
    starts = selected & (~previous | unit_start[:n])
    run_of = np.where(selected, np.cumsum(starts) - 1, -1).astype(np.int64)
    tokens = np.flatnonzero(selected).astype(np.int64)
    R = int(starts.sum())
    run_offsets = np.searchsorted(run_of[tokens], np.arange(R + 1)).astype(np.int64)
    first, last = tokens[run_offsets[:-1]], tokens[run_offsets[1:] - 1]
    before = np.where(unit_start[first], -1, first - 1).astype(np.int64)
    after = np.where(unit_start[last + 1], -1, last + 1).astype(np.int64)
    return Runs(tokens, run_offsets, before, after, run_of)


def covering(spans: np.ndarray, values: np.ndarray, n_tokens: int, fill: int = -1) -> np.ndarray:
    """(N,) the value of the span of ``spans`` (M, 2) [first, last] that covers
    each token (``fill`` where none does); ValueError if two overlap."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    lengths = spans[:, 1] - spans[:, 0] + 1
    starts = np.repeat(spans[:, 0] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    tokens = starts + np.arange(int(lengths.sum()))
    if np.unique(tokens).shape[0] != tokens.shape[0]:
        raise ValueError("the gold analysis has overlapping segments")
    out = np.full(n_tokens, fill, dtype=np.int64)
    out[tokens] = np.repeat(np.asarray(values, dtype=np.int64), lengths)
    return out


def touching_missing(spans: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """(M,) bool: the spans (M, 2) [first, last] that cover a missing token."""
    spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
    before = np.concatenate([[0], np.cumsum(np.asarray(missing, dtype=np.int64))])
    return before[spans[:, 1] + 1] - before[spans[:, 0]] > 0


def gold_touches_missing(spans: np.ndarray, missing: np.ndarray, structure: str) -> None:
    """ValueError if a gold mention (M, 2) covers a missing token."""
    bad = np.flatnonzero(touching_missing(spans, missing))
    if bad.shape[0]:
        first, last = (int(v) for v in np.asarray(spans)[bad[0]])
        raise ValueError(
            f"{structure}: the gold mention on tokens {first}..{last} covers a token whose annotation is "
            "missing; a gold mention's tokens are annotated (mark the mention's tokens annotated, or "
            "drop the mention)"
        )


class Borders(NamedTuple):
    """The transitions across the borders of the runs, for a structure with
    transitions (K + 1, K + 1) (row and column K: the start and end of a
    unit) whose run scores are rows (P, K): ``starts`` (P1,) the rows that
    begin a run, ``start_runs`` (P1,) their run; ``ends``, ``end_runs`` the
    rows that end one; ``before`` (R,) the gold label before each run (K at
    the unit's start), ``after`` (R,) the gold label after it (K at its end).
    A run is then a unit of its own whose start and end transitions are those
    across its borders."""

    starts: np.ndarray
    start_runs: np.ndarray
    ends: np.ndarray
    end_runs: np.ndarray
    before: np.ndarray
    after: np.ndarray

    def scores(self, run_scores: np.ndarray, transitions: np.ndarray) -> np.ndarray:
        """``run_scores`` (P, K) with the unit's start transitions replaced by
        those from the label before the run, and its end transitions by those
        to the label after it (a copy, float64)."""
        K = run_scores.shape[1]
        out = np.array(run_scores, dtype=np.float64)
        out[self.starts] += transitions[self.before[self.start_runs], :K] - transitions[K, :K]
        out[self.ends] += transitions[:K, self.after[self.end_runs]].T - transitions[:K, K]
        return out

    def move(self, row_marginals: np.ndarray, transition_marginals: np.ndarray) -> np.ndarray:
        """The expected transitions of the runs, from those of the runs as
        units (``transition_marginals``): a run's start (end) transitions
        moved to the label before (after) it. A copy."""
        K = row_marginals.shape[1]
        out = np.array(transition_marginals, dtype=np.float64)
        for rows, runs, label, view in (
            (self.starts, self.start_runs, self.before, out),
            (self.ends, self.end_runs, self.after, out.T),
        ):
            moved = np.zeros((label.shape[0], K + 1))
            np.add.at(moved, runs, np.pad(row_marginals[rows], ((0, 0), (0, 1))))
            inside = label < K
            np.add.at(view, label[inside], moved[inside])
            view[K] -= moved[inside].sum(axis=0)
        return out


def drop_borders(counts: np.ndarray, stretches: Runs, first_labels: np.ndarray, last_labels: np.ndarray) -> np.ndarray:
    """The transition counts (K + 1, K + 1) of the gold part scored with each
    stretch of annotated tokens as a unit, without the start (end)
    transitions of the stretches that follow (precede) a run: the runs' own
    border transitions count those. ``first_labels``/``last_labels`` (S,):
    the label that begins/ends each stretch. In place; returns ``counts``."""
    K = counts.shape[0] - 1
    np.subtract.at(counts, (K, first_labels[stretches.before >= 0]), 1.0)
    np.subtract.at(counts, (last_labels[stretches.after >= 0], K), 1.0)
    return counts


class Conditioned(NamedTuple):
    """The analyses that agree with a partial annotation
    (``Structure.conditioned``) as a problem of their own: each is the
    ``fixed`` gold mentions (F, 3) (batch coordinates, labels from 0) plus an
    analysis of the runs of missing tokens, the units of ``scores`` and
    ``layout`` (compact coordinates: compact token i is batch token
    ``tokens[i]``); a structure with transitions gives each run those across
    its borders. ``fixed_score``: the weight of the gold part, so that the
    log-partition over the agreeing analyses is ``fixed_score`` plus the
    sum of the runs' log Z. Exact: the MAP analysis agreeing with the
    annotation is ``fixed`` with the lifted MAP of the runs, and the marginal
    of a mention inside a run is its marginal in the runs' problem (a fixed
    mention's is 1, any other's 0). ``fixed_counts``: the gold part's
    indicator in the shapes of the batch's scores; ``expand``: the runs'
    counts (in their problem's shapes) as counts of the batch
    (``expected_counts``), whence ``Structure.constrained``."""

    fixed: np.ndarray
    fixed_score: float
    scores: object
    layout: object
    tokens: np.ndarray
    fixed_counts: object = None
    expand: Optional[Callable] = None

    def expected_counts(self, run_counts) -> object:
        """The expected indicator of the agreeing analyses in the shape of the
        batch's scores: the gold part's (``fixed_counts``) plus ``run_counts``
        (the runs' problem's marginals, in its shapes) moved back by
        ``expand`` (rows of the runs' spans, their border transitions)."""
        if run_counts is None:
            return self.fixed_counts
        moved = self.expand(run_counts)
        if isinstance(moved, tuple):
            return tuple(f + m for f, m in zip(self.fixed_counts, moved))
        return self.fixed_counts + moved

    def lift(self, mentions: np.ndarray) -> np.ndarray:
        """Mentions (M, 3) (or (M, 5) with heads) of the runs' problem in batch coordinates."""
        mentions = np.array(mentions, dtype=np.int64)
        columns = [0, 1, 3, 4][: 2 if mentions.shape[1] < 5 else 4]
        mentions[:, columns] = self.tokens[mentions[:, columns]]
        return mentions
