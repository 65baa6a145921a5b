"""``python -m experiments bench-nested``: MAP decoding time of the nested
structures vs sentence length (Corro 2023, Figure 2), one thread."""

from pathlib import Path
from typing import Dict, List

import numpy as np
import typer

from ..kit.outputs import save_figure, write_file
from ..kit.tables import machine, records_table
from ..kit.timing import best_time


def nested_decode_rows(lengths, n_labels: int, sentences_per_length: int, repeats: int, rng) -> List[Dict]:
    """MAP decoding time per sentence of the three nested structures, one
    call per batch of ``sentences_per_length`` sentences of n words, float32
    scores as the span scorer produces them."""
    from spacy_depner.structures.nested import NESTED, layout
    from spacy_depner.structures.trees.candidate_spans import all_spans

    rows = []
    for n in lengths:
        doc_offsets = np.arange(sentences_per_length + 1, dtype=np.int64) * n
        every, first = (
            layout(all_spans(doc_offsets, None), doc_offsets),
            layout(all_spans(doc_offsets[:2], None), doc_offsets[:2]),
        )
        scores = rng.normal(size=(every.spans.shape[0], n_labels)).astype(np.float32)
        row = {"n": n}
        for structure in NESTED.spaces:
            NESTED.viterbi(scores[: first.spans.shape[0]], first, space=structure)  # compile
            seconds = best_time(lambda: NESTED.viterbi(scores, every, space=structure), repeats)
            row[f"{structure} sentences/s"] = sentences_per_length / seconds
        row["quadratic speed-up vs cyk"] = row["quadratic sentences/s"] / row["cyk sentences/s"]
        rows.append(row)
    return rows


def nested_decode_chart(rows: List[Dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4))
    for structure in ("semi_markov", "cyk", "quadratic"):
        axis.plot([r["n"] for r in rows], [1000.0 / r[f"{structure} sentences/s"] for r in rows], label=structure)
    axis.set_xlabel("sentence length n")
    axis.set_ylabel("ms per sentence (MAP decoding)")
    axis.set_yscale("log")
    axis.legend()
    figure.tight_layout()
    save_figure(figure, path)


def bench_nested(
    output: Path = typer.Option(..., help="Markdown file to write (and a PNG beside it)"),
    labels: int = typer.Option(5, help="Mention labels (GENIA has 5)"),
    max_n: int = typer.Option(300, help="Longest sentence"),
    repeats: int = typer.Option(7, help="Timed repeats; the best is kept"),
) -> None:
    """MAP decoding time vs sentence length of the nested structures (Corro 2023, Figure 2), one thread."""
    lengths = sorted({1, 2, 5, 10, 20, 50, 100, 150, 200, 250, max_n} & set(range(1, max_n + 1)))
    rows = nested_decode_rows(lengths, labels, sentences_per_length=20, repeats=repeats, rng=np.random.default_rng(0))
    chart = output.with_suffix(".png")
    output.parent.mkdir(parents=True, exist_ok=True)
    nested_decode_chart(rows, chart)
    text = (
        f"# Nested MAP decoding ({machine()}, {labels} labels, random scores, unbounded mention length)\n\n"
        f"{records_table(rows)}\n\n![decode time]({chart.name})\n"
    )
    typer.echo(write_file(output, text))
