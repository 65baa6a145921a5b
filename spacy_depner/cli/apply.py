"""``python -m spacy_depner apply`` and ``apply-ray``: stream a corpus
through a trained pipeline into JSONL records, one DocBin (as ``spacy
apply``) or DocBin shards, on one machine (spaCy's ``nlp.pipe`` with
``--n-process``) or on a Ray cluster."""
import json
from pathlib import Path
from typing import Optional

import typer

from ..annotation.corpus import annotate_corpus, input_kind
from ..util.pipelines import load_pipeline
from .arguments import PIPELINE_HELP
from ..annotation.ray_data import ray_annotate

INPUT_HELP = ("Corpus: .txt (one document per line), .jsonl ({\"text\": ...} per line, other keys kept as "
              "\"meta\"), or a .spacy DocBin file or directory of them")


def apply(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    input_path: Path = typer.Argument(..., metavar="INPUT", help=INPUT_HELP),
    output: Path = typer.Argument(..., metavar="OUTPUT",
                                  help="A .jsonl file of records, a .spacy file (one DocBin, as spacy apply writes), or a directory for DocBin shards"),
    n_process: int = typer.Option(1, min=1, help="Processes of nlp.pipe (the output is the same for any number)"),
    batch_size: int = typer.Option(256, min=1, help="Documents per batch of nlp.pipe"),
    shard_size: int = typer.Option(1000, min=1, help="Documents per DocBin shard (directory OUTPUT)"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT, and restart instead of "
                                   "refusing an OUTPUT.partial left by a run with other arguments"),
    progress: bool = typer.Option(True, help="Show a progress bar (words, words/s, documents) on stderr"),
) -> None:
    """Run a pipeline over a corpus, as spacy apply; resumable.

    Writes JSONL records ({text, meta, ents, spans with scores}), one
    DocBin (.spacy, as `spacy apply`), or DocBin shards of at most
    --shard-size documents, in input order. They go to OUTPUT.partial,
    renamed to OUTPUT when complete; an interrupted run, rerun with the same
    arguments, continues from there. Prints docs, words and words/s."""
    input_kind(input_path)
    nlp = load_pipeline(pipeline)
    summary = annotate_corpus(nlp, input_path, output, n_process=n_process, batch_size=batch_size,
                              shard_size=shard_size, overwrite=overwrite, progress=progress)
    typer.echo(json.dumps(summary, indent=2))


def apply_ray(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP + ", readable on every Ray node"),
    input_path: str = typer.Argument(..., metavar="INPUT", help="Corpus: .txt or .jsonl file, or a URI "
                                     "such as s3://bucket/corpus.jsonl, readable on every Ray node"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="The .jsonl file of records (written by this machine)"),
    actors: int = typer.Option(2, min=1, help="Ray actors, each loading the pipeline once"),
    batch_size: int = typer.Option(256, min=1, help="Documents per batch (per call of an actor)"),
    cpus_per_actor: float = typer.Option(1.0, help="CPUs Ray reserves for each actor"),
    address: Optional[str] = typer.Option(None, help="Ray cluster address (default: RAY_ADDRESS, else a new "
                                          "local Ray instance on this machine)"),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing OUTPUT"),
    progress: bool = typer.Option(True, help="Show a progress bar (words, words/s, documents) on stderr"),
) -> None:
    """Run a pipeline over a corpus on a Ray cluster.

    A pool of --actors actors runs PIPELINE on a text or JSONL corpus and
    this machine writes the same JSONL records as `apply`, in input order. Prints docs, words and words/s (including
    the actors' start)."""
    summary = ray_annotate(pipeline, input_path, output, actors=actors, batch_size=batch_size,
                           cpus_per_actor=cpus_per_actor, address=address, overwrite=overwrite, progress=progress)
    typer.echo(json.dumps(summary, indent=2))
