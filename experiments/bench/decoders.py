"""The decoder-only rows of the benchmarks: candidate spans + Viterbi, and
candidate spans + forward-backward, of ``semi_markov`` (L=8), ``dgm_s`` and
``dgm`` on batches of a corpus's trees (``bench`` and ``bench-structures``)."""

from typing import Dict, List, Optional

from ..kit.timing import interleaved_best_times

DECODERS = [("semi_markov", 8), ("dgm_s", None), ("dgm", None)]


def decode(structure: str, max_length: Optional[int], batches, scores, transitions, operation: str) -> None:
    from spacy_depner.structures.lattice import LATTICE, layout
    from spacy_depner.structures.trees.candidate_spans import candidate_spans

    run = LATTICE.viterbi if operation == "viterbi" else LATTICE.marginals
    for (heads, sentence_offsets), batch_scores in zip(batches, scores):
        spans = candidate_spans(structure, heads, sentence_offsets, max_length)
        run((batch_scores, transitions), layout(spans, sentence_offsets[[0, -1]]))


def decoder_setup(batches, structure, max_length, n_labels, rng):
    from spacy_depner.structures.trees.candidate_spans import candidate_spans

    counts = [candidate_spans(structure, h, o, max_length).shape[0] for h, o in batches]
    return [rng.normal(size=(c, n_labels + 1)) for c in counts], sum(counts)


def decoder_rows(batches, n_labels: int, repeats: int, rng) -> List[Dict]:
    n_tokens = sum(int(o[-1]) for _, o in batches)
    transitions = rng.normal(size=(n_labels + 2, n_labels + 2))
    rows, runs = [], {}
    for structure, max_length in DECODERS:
        scores, n_spans = decoder_setup(batches, structure, max_length, n_labels, rng)
        rows.append(
            {
                "structure": structure + (f" (L={max_length})" if max_length else " (unbounded)"),
                "spans/token": n_spans / n_tokens,
            }
        )
        for operation in ("viterbi", "marginals"):
            decode(structure, max_length, batches[:2], scores[:2], transitions, operation)  # compile
            runs[len(rows) - 1, operation] = lambda s=structure, m=max_length, x=scores, o=operation: decode(
                s, m, batches, x, transitions, o
            )
    seconds = interleaved_best_times(runs, repeats)  # every decoder in the same rounds: one machine load for the ratios
    for (index, operation), value in seconds.items():
        rows[index][operation] = n_tokens / value
    for row in rows:
        row["Viterbi ratio vs semi_markov"] = row["viterbi"] / rows[0]["viterbi"]
    return rows


def batches_of(docs, tokens_per_batch: int):
    """Group Docs' trees into flat batches of about ``tokens_per_batch`` tokens."""
    from spacy_depner.doc_arrays.trees import tree_arrays

    groups, group, size = [], [], 0
    for doc in docs:
        group.append(doc)
        size += len(doc)
        if size >= tokens_per_batch:
            groups.append(group)
            group, size = [], 0
    if group:
        groups.append(group)
    out = []
    for group in groups:
        heads, sentence_offsets, _ = tree_arrays(group)
        out.append((heads, sentence_offsets))
    return out
