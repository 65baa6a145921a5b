"""``python -m spacy_depner rank``: order a corpus by how uncertain a trained
entity component is about each document, for choosing what to annotate next."""

import json
from pathlib import Path
from typing import Optional

import typer

from ..inference.corpus import input_kind
from ..inference.ranking import TASK_FORMATS, check_task_format, rank_corpus
from ..pipeline.uncertainty import MEASURES
from ..util.pipelines import load_pipeline
from .apply import INPUT_HELP, N_PROCESS_HELP, SHARD_SIZE_HELP
from .arguments import (
    CODE_HELP,
    FORCE_FLAGS,
    GPU_ID_HELP,
    PIPELINE_HELP,
    RESTART_HELP,
    TEXT_KEY_HELP,
    import_code,
    use_gpu,
)

FORMAT_HELP = (
    f"Task format ({', '.join(TASK_FORMATS)}): records (Prodigy-like records with tokens and "
    "probabilities), prodigy (ner_manual tasks; binary ner tasks for --unit span), label-studio "
    "(tasks with a scored prediction), doccano (text and [start, end, label] triples)"
)


def rank(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    input_path: Path = typer.Argument(..., metavar="INPUT", help=INPUT_HELP),
    output: Path = typer.Argument(
        ...,
        metavar="OUTPUT",
        help="The .jsonl file of tasks (--format), most uncertain first; for label-studio also .json (one JSON list, as Label Studio imports it)",
    ),
    measure: str = typer.Option("expected_errors", help=f"Ranking measure: {', '.join(MEASURES)}"),
    component: Optional[str] = typer.Option(None, help="The entity component (default: the pipeline's only one)"),
    unit: str = typer.Option(
        "doc",
        help="What a task asks to review: doc (a whole document), span (accept or reject one proposed "
        "mention, in its sentence), region (annotate a stretch of uncertain tokens, in its sentences)",
    ),
    format: str = typer.Option("records", "--format", "-f", help=FORMAT_HELP),
    top: Optional[int] = typer.Option(None, min=1, help="Keep only the TOP most uncertain tasks (default: all)"),
    code: Optional[Path] = typer.Option(None, "--code", "-c", help=CODE_HELP),
    text_key: str = typer.Option("text", "--text-key", "-tk", help=TEXT_KEY_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_ID_HELP),
    batch_size: int = typer.Option(256, "--batch-size", "-b", min=1, help="Documents per batch"),
    n_process: int = typer.Option(1, "--n-process", "-n", min=1, help=N_PROCESS_HELP),
    shard_size: int = typer.Option(1000, min=1, help=SHARD_SIZE_HELP),
    overwrite: bool = typer.Option(False, *FORCE_FLAGS, help=RESTART_HELP),
    progress: bool = typer.Option(True, help="Show a progress bar (words, words/s, documents) on stderr"),
) -> None:
    """Rank documents by uncertainty: what to annotate next.

    Writes tasks (text, spans with probabilities, score) in an annotation
    tool's format, most uncertain first; resumable like `apply`. Prints
    docs, words, words/s and tasks_written."""
    input_kind(input_path)
    check_task_format(format, unit)
    use_gpu(gpu_id, n_process)
    import_code(code)
    nlp = load_pipeline(pipeline)
    summary = rank_corpus(
        nlp,
        input_path,
        output,
        measure=measure,
        component=component,
        batch_size=batch_size,
        n_process=n_process,
        shard_size=shard_size,
        top=top,
        unit=unit,
        overwrite=overwrite,
        progress=progress,
        format=format,
        text_key=text_key,
    )
    typer.echo(json.dumps(summary, indent=2))
