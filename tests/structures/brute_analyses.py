"""Every analysis of a batch, by enumeration, in the one form the protocol
tests read: per unit (document, sentence or chain) of the layout, a list of
``Analysis(weight, counts, mentions)``: the analysis's weight, its
indicator in the shape of the scores (a tuple of arrays, like the scores),
and its mentions as a frozenset of (first, last, label) in batch
coordinates. Built on each structure's brute-force twin, written from the
definitions (``brute_segment_lattice``, ``brute_linear_chain``,
``brute_nested_mentions``, ``brute_mention_hypergraph``)."""

from typing import List, NamedTuple, Tuple

import brute_linear_chain as chain_twin
import brute_mention_hypergraph as hypergraph_twin
import brute_nested_mentions as nested_twin
import brute_segment_lattice as lattice_twin
import numpy as np

from spacy_depner.structures.hypergraph import _mention_hypergraph as mention_hypergraph


class Analysis(NamedTuple):
    weight: float
    counts: Tuple[np.ndarray, ...]
    mentions: frozenset


def lattice(scores, layout) -> List[List[Analysis]]:
    span_scores, transitions = (np.asarray(part, dtype=np.float64) for part in scores)
    spans, S, K = layout.spans, span_scores.shape[0], span_scores.shape[1]
    units = []
    for u in range(len(layout.offsets) - 1):
        groups = lattice_twin.labelled_segmentations_of_document(
            spans,
            int(layout.span_offsets[u]),
            int(layout.span_offsets[u + 1]),
            int(layout.offsets[u]),
            int(layout.offsets[u + 1]),
            K,
        )
        found = []
        for rows, labellings in groups:
            weights = lattice_twin._group_scores(rows, labellings, span_scores, transitions)
            for labels, weight in zip(labellings, weights):
                indicator = np.zeros((S, K))
                indicator[rows, labels] = 1.0
                sequence = [K] + labels.tolist() + [K]
                pairs = np.zeros((K + 1, K + 1))
                if rows.shape[0]:
                    np.add.at(pairs, (sequence[:-1], sequence[1:]), 1.0)
                mentions = frozenset(
                    (int(spans[r, 0]), int(spans[r, 1]), int(k) - 1) for r, k in zip(rows, labels) if k > 0
                )
                found.append(Analysis(float(weight), (indicator, pairs), mentions))
        units.append(found)
    return units


def chain(scores, layout, scheme) -> List[List[Analysis]]:
    tag_scores, transitions = (np.asarray(part, dtype=np.float64) for part in scores)
    N, T = tag_scores.shape
    n_labels = (T - 1) // (2 if scheme == "BIO" else 4)
    names = chain_twin.tag_names(chain_twin.LABELS[:n_labels], scheme)
    units = []
    for u in range(len(layout.offsets) - 1):
        first, end = int(layout.offsets[u]), int(layout.offsets[u + 1])
        found = []
        for sequence in chain_twin.valid_sequences(scheme, n_labels, end - first):
            indicator = np.zeros((N, T))
            indicator[first + np.arange(end - first), sequence] = 1.0
            pairs = np.zeros((T + 1, T + 1))
            if end > first:
                full = [T] + sequence.tolist() + [T]
                np.add.at(pairs, (full[:-1], full[1:]), 1.0)
            weight = float((tag_scores * indicator).sum() + (transitions * pairs).sum())
            mentions = frozenset(
                (first + a, first + b, chain_twin.LABELS.index(label))
                for a, b, label in chain_twin.entities_of_names([names[t] for t in sequence])
            )
            found.append(Analysis(weight, (indicator, pairs), mentions))
        units.append(found)
    return units


def nested(scores, layout, space, max_length=None) -> List[List[Analysis]]:
    scores = np.asarray(scores, dtype=np.float64)
    S, T = scores.shape
    row_of = {(int(a), int(b)): r for r, (a, b) in enumerate(layout.spans.tolist())}
    units = []
    for u in range(len(layout.offsets) - 1):
        first, n = int(layout.offsets[u]), int(layout.offsets[u + 1] - layout.offsets[u])
        if n == 0:
            units.append([Analysis(0.0, (np.zeros((S, T)),), frozenset())])
            continue
        spans = nested_twin.span_list(n)
        allowed = np.array([(first + a, first + b) in row_of for a, b in spans]) & nested_twin.allowed_rows(
            n, max_length, None
        )
        columns, _ = nested_twin.labelled_analyses(space, n, T)
        found = []
        for analysis in columns:
            cells = [(int(c) // T, int(c) % T) for c in analysis if c < len(spans) * T]
            if not all(allowed[r] for r, _ in cells):
                continue
            indicator = np.zeros((S, T))
            for r, k in cells:
                indicator[row_of[(first + spans[r][0], first + spans[r][1])], k] = 1.0
            mentions = frozenset((first + spans[r][0], first + spans[r][1], k) for r, k in cells)
            found.append(Analysis(float((scores * indicator).sum()), (indicator,), mentions))
        units.append(found)
    return units


def hypergraph(scores, layout, mention_penalty=0.0, heads=False) -> List[List[Analysis]]:
    scores = np.asarray(scores, dtype=np.float64)
    N, T, K = scores.shape
    units = []
    for u in range(len(layout.offsets) - 1):
        first, n = int(layout.offsets[u]), int(layout.offsets[u + 1] - layout.offsets[u])
        if n == 0:
            units.append([Analysis(0.0, (np.zeros((N, T, K)),), frozenset())])
            continue
        indices, pens = hypergraph_twin.sub_hypergraphs(n, T, heads)
        found = []
        for row, pen in zip(indices, pens):
            edges = np.zeros(n * T * K + 1)
            edges[row] = 1.0
            indicator = np.zeros((N, T, K))
            indicator[first : first + n] = edges[:-1].reshape(n, T, K)
            read = mention_hypergraph.edges_to_mentions(indicator[first : first + n].astype(np.int8), [0, n])
            mentions = frozenset(
                (first + int(m[0]), first + int(m[1]), *map(int, m[2:3]), *(first + int(h) for h in m[3:]))
                for m in read.tolist()
            )
            found.append(Analysis(float((scores * indicator).sum() + mention_penalty * pen), (indicator,), mentions))
        units.append(found)
    return units
