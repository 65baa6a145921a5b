"""``python -m experiments bench-pipelines``: the words/s of whole trained
pipelines on the same UNER English-EWT test documents, in one run, each a
ratio against the first (the baseline), and where the time of the last one
goes (``bench-stages``' per-component seconds).

The baseline a spaCy user has: the full pretrained pipeline (en_core_web_sm:
tok2vec, tagger, parser, attribute_ruler, lemmatizer, ner) with its ner
replaced by one fine-tuned on their labels; ``--baseline-ner`` builds it
from the pretrained pipeline and the fine-tuned pipeline's ``ner``.
Every pipeline runs on the data's words with their sentence starts, as
``pretrained-first-stage evaluate`` runs it on whole documents."""

from pathlib import Path
from typing import Dict, List, Optional

import typer

from ..kit.outputs import write_file
from ..kit.tables import machine, table
from ..kit.timing import pipeline_seconds
from ..publish.speeds import write_rows
from .stages import stage_rows, stage_seconds

BASELINE = "pretrained pipeline, its ner fine-tuned"
BENCHMARK = "bench-pipelines"


def with_fine_tuned_ner(pretrained: str, ner: Path):
    """The pretrained pipeline with its ``ner`` replaced by the ``ner`` of the pipeline at ``ner``."""
    import spacy

    nlp = spacy.load(pretrained)
    source = spacy.load(ner)
    index = nlp.pipe_names.index("ner")
    nlp.remove_pipe("ner")
    nlp.add_pipe("ner", source=source, before=index if index < len(nlp.pipe_names) else None)
    return nlp


def bench_pipelines(
    data: Path = typer.Option(..., help="The data folder (UD English-EWT and UNER English-EWT)"),
    pretrained: str = typer.Option(..., help="The pretrained pipeline, e.g. DATA/models/en_core_web_sm-3.8.0"),
    baseline_ner: Path = typer.Option(..., help="A pipeline whose ner, fine-tuned, replaces the pretrained one's"),
    pipeline: List[Path] = typer.Option(..., help="This project's trained pipelines, timed against the baseline"),
    documents: int = typer.Option(0, help="First N test documents (0: all)"),
    repeats: int = typer.Option(3, help="Timed rounds (the best is kept)"),
    batch_size: int = typer.Option(64, help="nlp.pipe batch size"),
    output: Path = typer.Option(..., help="Markdown report to write"),
    note: Optional[str] = typer.Option(None, help="A line on the conditions (e.g. quiet machine)"),
) -> None:
    """Words/s of the baseline and of each PIPELINE on the same documents, in one interleaved run."""
    import spacy

    from ..two_stage.pretrained_scores import split_examples

    baseline = with_fine_tuned_ner(pretrained, baseline_ner)
    docs = [eg.predicted for eg in split_examples(baseline.vocab, data, "test")]
    docs = docs[:documents] if documents else docs
    words = sum(len(doc) for doc in docs)
    nlps: Dict[str, object] = {BASELINE: baseline}
    for path in pipeline:
        nlps[str(path)] = spacy.load(path)
    seconds, _ = pipeline_seconds({name: nlp.pipe for name, nlp in nlps.items()}, docs, repeats, batch_size)
    rows = [
        [name, " → ".join(nlp.pipe_names), f"{words / seconds[name]:,.0f}", f"{seconds[BASELINE] / seconds[name]:.2f}"]
        for name, nlp in nlps.items()
    ]
    last = nlps[str(pipeline[-1])]
    stages = stage_seconds(last, [doc.copy() for doc in docs], repeats, batch_size)
    text = "\n\n".join(
        [
            "# Speed of the two-stage pipeline against the pretrained pipeline with its ner fine-tuned",
            f"Measured {machine()}. {note or ''} UNER English-EWT test, {len(docs)} whole documents, {words:,} "
            f"words (the data's tokens and sentence starts), one process, batch size {batch_size}, best of "
            f"{repeats} interleaved rounds after a warm-up; the baseline is `{pretrained}` with its ner replaced by "
            f"the ner of `{baseline_ner}`.",
            table(["pipeline", "components", "words/s", "× baseline"], rows),
            f"Where the time of `{pipeline[-1]}` goes (each component on the Docs the ones before it annotated):",
            table(["component", "seconds", "share", "words/s"], stage_rows(stages, last.pipe_names, words)),
        ]
    )
    typer.echo(write_file(output, text + "\n"))
    corpus = f"{words:,} words of UNER English-EWT test (documents)"
    speed_rows = [
        {
            "pipeline": f"{name} ({' → '.join(nlp.pipe_names)}; {seconds[BASELINE] / seconds[name]:.2f}× the first row)",
            "parser": "its own",
            "weights": "trained",
            "processes": "1",
            "words/s": f"{words / seconds[name]:,.0f}",
            "corpus": corpus,
            "machine": machine(),
        }
        for name, nlp in nlps.items()
    ]
    typer.echo(write_rows(output, BENCHMARK, speed_rows))
