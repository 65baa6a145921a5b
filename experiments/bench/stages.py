"""``python -m experiments bench-stages``: where the prediction time of a
trained pipeline goes. Each component is timed on its own, on the Docs the
components before it annotated, and the whole ``nlp.pipe`` (the baseline)
in the same rounds; each component's share of their sum. For an entity
component that is its scoring head plus its dynamic program (on the CPU);
for a transformer, the encoder."""

from pathlib import Path
from typing import Dict, List, Optional

import typer

from ..kit.outputs import write_file
from ..kit.tables import table
from ..kit.timing import interleaved_best_times

WHOLE = "whole pipeline"


def stage_seconds(nlp, docs, repeats: int, batch_size: int) -> Dict[str, float]:
    """Best wall time of each component's ``pipe`` over ``docs`` (annotated
    in place by the components before it, in pipeline order), and of the
    whole ``nlp.pipe`` over copies of the input Docs (key "whole pipeline"),
    interleaved over ``repeats`` rounds after a warm-up round."""
    inputs, current = [doc.copy() for doc in docs], {"docs": docs}

    def stage(component):
        def run():
            current["docs"] = list(
                component.pipe(current["docs"], batch_size=batch_size)
                if hasattr(component, "pipe")
                else map(component, current["docs"])
            )

        return run

    runs = {name: stage(component) for name, component in nlp.pipeline}
    runs[WHOLE] = lambda: list(nlp.pipe([doc.copy() for doc in inputs], batch_size=batch_size))
    interleaved_best_times(runs, 1)  # warm-up: numba caches, allocations
    return interleaved_best_times(runs, repeats)


def stage_rows(seconds: Dict[str, float], names: List[str], words: int) -> List[List]:
    """Component, its seconds, its share of the sum, words/s; then the whole pipeline."""
    total = sum(seconds[name] for name in names)
    rows = [
        [name, f"{seconds[name]:.2f}", f"{seconds[name] / total:.1%}", f"{words / seconds[name]:,.0f}"]
        for name in names
    ]
    rows.append(
        [
            WHOLE + " (nlp.pipe)",
            f"{seconds[WHOLE]:.2f}",
            f"{seconds[WHOLE] / total:.1%}",
            f"{words / seconds[WHOLE]:,.0f}",
        ]
    )
    return rows


def bench_stages(
    pipeline: Path = typer.Argument(..., help="A trained pipeline folder"),
    jsonl: Optional[Path] = typer.Option(None, help="GENIA JSON lines to annotate"),
    gum: Optional[Path] = typer.Option(None, help="UD English-GUM CoNLL-U to annotate; the trees are not given"),
    limit: int = typer.Option(500, help="Sentences timed"),
    repeats: int = typer.Option(3, help="Timed rounds (the best is kept)"),
    batch_size: int = typer.Option(256, help="nlp.pipe batch size"),
    output: Path = typer.Option(..., help="Markdown table to write"),
) -> None:
    """Seconds and share of each component of PIPELINE over the first LIMIT
    sentences, the whole pipeline timed in the same run."""
    import spacy

    from spacy_depner.evaluation.corpus_scores import nested_file_examples

    nlp = spacy.load(pipeline)
    examples = nested_file_examples(nlp.vocab, jsonl, gum, "bench", dependencies="predicted")[:limit]
    docs = [example.predicted for example in examples]
    words = sum(len(doc) for doc in docs)
    seconds = stage_seconds(nlp, docs, repeats, batch_size)
    text = (
        f"# Where the time of {pipeline} goes\n\n{len(docs)} sentences, {words:,} words, best of {repeats} rounds, "
        f"batch size {batch_size}, {torch_threads()}\n\n"
        + table(
            ["component", "seconds", "share of the components' sum", "words/s"],
            stage_rows(seconds, nlp.pipe_names, words),
        )
        + "\n"
    )
    typer.echo(write_file(output, text))


def torch_threads() -> str:
    try:
        import torch
    except ImportError:
        return "no torch"
    return f"torch threads {torch.get_num_threads()}"
