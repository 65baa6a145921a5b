"""The DGM against the semi-Markov CRF as Jie, Muis & Lu (2017) compare them:
the time of a training iteration of the structure (span scores to loss and
gradient: ``LATTICE.nll``, i.e. forward-backward and the gold's counts) and
of Viterbi, at L = 8 for the semi-Markov CRF, on the same spans' scores (one
random score per span and label of the union of the lattices, each lattice
reading its own spans' rows), on a corpus's trees, sentence by sentence.
The candidate spans are built once beforehand (as training on given trees
builds them once) and timed on their own. Beside each ratio, its limit: the
semi-Markov CRF's spans per token over the lattice's (the ratio a cost
proportional to the spans would give), and the limit of the recursion
itself: it shares the transition step among the spans that start at a
position (``_segment_lattice``), so a document costs K^2 terms per token
beside K per one-token span and K - 1 per longer span (O is one token), and
the ratio of those counts bounds the ratio of a cost proportional to them;
and that of the span labels alone, which bounds it even with transitions
that cost nothing."""

from typing import Dict, List

import numpy as np

from ..kit.timing import interleaved_best_times

LATTICES = [("semi_markov", 8), ("dgm_s", None), ("dgm", None)]


def lattice_inputs(batches, n_labels: int, rng):
    """Per lattice: [(scores, layout, gold)] per batch, the same score for a
    span and label in every lattice that has the span; gold the all-O
    segmentation (every lattice has it)."""
    from spacy_depner.structures.lattice import layout
    from spacy_depner.structures.trees.candidate_spans import candidate_spans, merge_spans, span_index

    transitions = rng.normal(size=(n_labels + 2, n_labels + 2))
    inputs = {name: [] for name, _ in LATTICES}
    for heads, offsets in batches:
        spans = {name: candidate_spans(name, heads, offsets, length) for name, length in LATTICES}
        n_tokens = int(offsets[-1])
        union = spans["semi_markov"]
        for name in spans:
            union = merge_spans(union, spans[name], n_tokens)
        table = rng.normal(size=(union.shape[0], n_labels + 1))
        for name, own in spans.items():
            gold = np.where(own[:, 0] == own[:, 1], 0, -1)
            inputs[name].append(((table[span_index(union, own, n_tokens)], transitions), layout(own, offsets), gold))
    return inputs


def span_label_terms(layout, n_labels: int) -> int:
    """The span labels of a ``layout`` (K = n_labels + 1 labels with O): K
    per one-token span, K - 1 per longer span (O is one token). Each is a
    term of the recursion that no exact algorithm skips: its score enters
    log Z through its own exp."""
    K = n_labels + 1
    single = int(np.count_nonzero(layout.spans[:, 0] == layout.spans[:, 1]))
    return single * K + (layout.spans.shape[0] - single) * (K - 1)


def recursion_terms(layout, n_labels: int) -> int:
    """The terms of the lattice's recursion (``_segment_lattice``) over a
    ``layout``'s spans with ``n_labels`` + O labels (K = n_labels + 1): in a
    unit of n > 0 tokens, K^2 transition terms at each of its n - 1 inner
    positions and K at each end, and its ``span_label_terms``."""
    K = n_labels + 1
    lengths = np.diff(layout.offsets)
    lengths = lengths[lengths > 0]
    return int((lengths - 1).sum()) * K * K + 2 * K * lengths.shape[0] + span_label_terms(layout, n_labels)


def iteration_rows(batches, n_labels: int, repeats: int, rng) -> List[Dict]:
    """One row per lattice: spans/token, candidate spans, training iteration
    (nll) and Viterbi times per token, and their speed against the
    semi-Markov CRF beside the limit; every run in the same interleaved rounds."""
    from spacy_depner.structures.lattice import LATTICE
    from spacy_depner.structures.trees.candidate_spans import candidate_spans

    n_tokens = sum(int(o[-1]) for _, o in batches)
    inputs = lattice_inputs(batches, n_labels, rng)
    runs = {}
    for name, length in LATTICES:
        cases = inputs[name]
        runs[name, "candidate spans"] = lambda n=name, m=length: [candidate_spans(n, h, o, m) for h, o in batches]
        runs[name, "iteration"] = lambda c=cases: [LATTICE.nll(s, lay, g) for s, lay, g in c]
        runs[name, "viterbi"] = lambda c=cases: [LATTICE.viterbi(s, lay) for s, lay, _ in c]
        for run in list(runs.values())[-3:]:
            run()  # compile
    seconds = interleaved_best_times(runs, repeats)
    n_spans = {name: sum(lay.spans.shape[0] for _, lay, _ in inputs[name]) for name, _ in LATTICES}
    terms = {name: sum(recursion_terms(lay, n_labels) for _, lay, _ in inputs[name]) for name, _ in LATTICES}
    labels = {name: sum(span_label_terms(lay, n_labels) for _, lay, _ in inputs[name]) for name, _ in LATTICES}
    rows = []
    for name, length in LATTICES:
        rows.append(
            {
                "lattice": name + (f" (L={length})" if length else " (unbounded)"),
                "spans/token": n_spans[name] / n_tokens,
                "candidate spans µs/token": 1e6 * seconds[name, "candidate spans"] / n_tokens,
                "iteration µs/token": 1e6 * seconds[name, "iteration"] / n_tokens,
                "viterbi µs/token": 1e6 * seconds[name, "viterbi"] / n_tokens,
                "iteration time / semi_markov's": seconds[name, "iteration"] / seconds["semi_markov", "iteration"],
                "viterbi speed / semi_markov's": seconds["semi_markov", "viterbi"] / seconds[name, "viterbi"],
                "limit (semi_markov's spans / its spans)": n_spans["semi_markov"] / n_spans[name],
                "limit of the recursion (semi_markov's terms / its terms)": terms["semi_markov"] / terms[name],
                "limit of its span labels alone (semi_markov's / its)": labels["semi_markov"] / labels[name],
            }
        )
    return rows


def iteration_section(batches, n_labels: int, repeats: int, rng) -> List[str]:
    """The title and table of the training-iteration comparison."""
    from ..kit.tables import records_table

    return [
        f"## DGM and DGM-S against the semi-Markov CRF (L=8), as Jie et al. 2017 compare them: a training "
        f"iteration of the structure (span scores to loss and gradient) and Viterbi on the same spans' scores "
        f"({n_labels} labels + O, sentences as units, candidate spans built beforehand and timed apart); the "
        "limit is the ratio of spans per token; the recursion's, that of its terms (K^2 per token for the "
        "transitions, K per one-token span, K - 1 per longer span); that of its span labels alone, the ratio the "
        "times could reach if the transitions cost nothing (each span label's score enters log Z through an exp "
        "of its own, so no exact training iteration gets below its inverse)",
        records_table(iteration_rows(batches, n_labels, repeats, rng)),
    ]
