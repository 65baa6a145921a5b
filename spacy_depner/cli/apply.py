"""``python -m spacy_depner apply`` and ``apply-ray``: stream a corpus
through a trained pipeline into JSONL records, one DocBin (as ``spacy
apply``) or DocBin shards, on one machine (spaCy's ``nlp.pipe`` with
``--n-process``) or on a Ray cluster."""

import json
from pathlib import Path
from typing import Optional

import typer

from ..inference.annotating import annotate_corpus
from ..inference.corpus import input_kind
from ..inference.ray_data import ray_annotate
from ..util.pipelines import load_pipeline
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

INPUT_HELP = (
    'Corpus: .txt (one document per line), .jsonl ({"text": ...} per line, other keys kept as '
    '"meta"), or a .spacy DocBin file or directory of them'
)

N_PROCESS_HELP = (
    "Processes, each reading its own shards of INPUT and writing their output shards, one BLAS "
    "thread each (the output is the same for any number)"
)
SHARD_SIZE_HELP = (
    "Lines (a .txt or .jsonl INPUT) or documents (DocBin INPUT) per shard: the unit of work of a "
    "process and of resuming, and the most documents of an output DocBin shard"
)


def apply(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    input_path: Path = typer.Argument(..., metavar="INPUT", help=INPUT_HELP),
    output: Path = typer.Argument(
        ...,
        metavar="OUTPUT",
        help="A .jsonl file of records, a .spacy file (one DocBin, as spacy apply writes), or a directory for DocBin shards",
    ),
    code: Optional[Path] = typer.Option(None, "--code", "-c", help=CODE_HELP),
    text_key: str = typer.Option("text", "--text-key", "-tk", help=TEXT_KEY_HELP),
    force: bool = typer.Option(False, *FORCE_FLAGS, help=RESTART_HELP),
    gpu_id: int = typer.Option(-1, "--gpu-id", "-g", help=GPU_ID_HELP),
    batch_size: int = typer.Option(256, "--batch-size", "-b", min=1, help="Documents per batch of nlp.pipe"),
    n_process: int = typer.Option(1, "--n-process", "-n", min=1, help=N_PROCESS_HELP),
    shard_size: int = typer.Option(1000, min=1, help=SHARD_SIZE_HELP),
    progress: bool = typer.Option(True, help="Show a progress bar (words, words/s, documents) on stderr"),
) -> None:
    """Run a pipeline over a corpus, as spacy apply; resumable.

    Writes JSONL records ({text, meta, ents, spans with scores}), one
    DocBin (.spacy, as `spacy apply`), or DocBin shards of at most
    --shard-size documents, in input order. INPUT is cut into shards of
    --shard-size lines or documents, which --n-process processes read and
    annotate; each shard's output goes to OUTPUT.partial/, joined into
    OUTPUT when all are done. An interrupted run, rerun with the same
    arguments, keeps the shards done, also after lines of shards not done
    were corrected. Prints docs, words and words/s. The options of `spacy
    apply` have its names."""
    input_kind(input_path)
    use_gpu(gpu_id, n_process)
    import_code(code)
    nlp = load_pipeline(pipeline)
    summary = annotate_corpus(
        nlp,
        input_path,
        output,
        n_process=n_process,
        batch_size=batch_size,
        shard_size=shard_size,
        overwrite=force,
        progress=progress,
        text_key=text_key,
    )
    typer.echo(json.dumps(summary, indent=2))


def apply_ray(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP + ", readable on every Ray node"),
    input_path: str = typer.Argument(
        ...,
        metavar="INPUT",
        help="Corpus: .txt or .jsonl file, or a URI such as s3://bucket/corpus.jsonl, readable on every Ray node",
    ),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .jsonl file of records (written by this machine)"),
    code: Optional[Path] = typer.Option(
        None, "--code", "-c", help=CODE_HELP + ", here and in every actor (readable on every Ray node)"
    ),
    text_key: str = typer.Option("text", "--text-key", "-tk", help=TEXT_KEY_HELP),
    force: bool = typer.Option(False, *FORCE_FLAGS, help=RESTART_HELP),
    actors: int = typer.Option(2, min=1, help="Ray actors, each loading the pipeline once"),
    batch_size: int = typer.Option(256, "--batch-size", "-b", min=1, help="Documents per batch of an actor"),
    shard_size: int = typer.Option(
        1000, min=1, help="Lines of INPUT per shard: the unit of work of an actor and of resuming"
    ),
    cpus_per_actor: float = typer.Option(1.0, help="CPUs Ray reserves for each actor"),
    address: Optional[str] = typer.Option(
        None, help="Ray cluster address (default: RAY_ADDRESS, else a new local Ray instance on this machine)"
    ),
    progress: bool = typer.Option(True, help="Show a progress bar (words, words/s, documents) on stderr"),
) -> None:
    """Run a pipeline over a corpus on a Ray cluster.

    A pool of --actors actors runs PIPELINE on the shards of a text or JSONL
    corpus, each reading its own, and this machine writes the same JSONL
    records as `apply`, in input order; resumable as `apply`. Prints docs,
    words and words/s (from the actors ready: their start is printed apart)."""
    import_code(code)
    summary = ray_annotate(
        pipeline,
        input_path,
        output,
        actors=actors,
        batch_size=batch_size,
        shard_size=shard_size,
        cpus_per_actor=cpus_per_actor,
        address=address,
        overwrite=force,
        progress=progress,
        text_key=text_key,
        code=code,
    )
    typer.echo(json.dumps(summary, indent=2))
