"""Corpus annotation on Ray Data, for corpora that outgrow one machine: the
records of a text or JSONL file are read as ``annotate`` reads them
(``read_lines``), a fixed pool of actors that each load the pipeline once
annotates them (``map_batches``), and the driver writes their JSON records
(``json_line``, as ``annotate`` writes them) to one JSONL file in input order
(``preserve_order``): the same bytes as ``python -m spacy_depner apply``,
since a Doc's annotations do not depend on the other Docs of its batch. The
file is written under a temporary name and renamed when complete (no
resume: an interrupted run starts again).

Ray is imported only inside these functions (``pip install "spacy-depner[ray]"``).
On a cluster, PIPELINE must be loadable on every node (a shared path or an
installed package) and INPUT readable from every node (a shared path, or a
URI such as ``s3://bucket/corpus.jsonl``).
"""

import io
import json
import time
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Union

import numpy as np

from ..util.atomic_files import atomic_path
from ..util.pipelines import pipeline_location
from .corpus import (
    INPUT_SUFFIXES,
    JSONL,
    TEXT,
    input_kind,
    json_line,
    output_kind,
    progress_step,
    read_lines,
    run_summary,
    word_progress,
)


def import_ray():
    """The ``ray`` module, or a ValueError that says how to install it."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise ValueError(
            'Annotating on Ray needs Ray Data: pip install ".[ray]" in the spacy-depner checkout'
        ) from None
    return ray


class PipelineAnnotator:
    """A Ray Data actor: loads the pipeline once, then maps a batch
    ``{"text": (n,) str, "meta": (n,) JSON object str}`` (``"meta"`` optional,
    e.g. after ``ray.data.read_text``) to ``{"json": (n,) record lines,
    "words": (n,) int tokens per document}``."""

    def __init__(self, pipeline: str, batch_size: int):
        import spacy

        self.nlp = spacy.load(pipeline)
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
        texts = batch["text"].tolist()
        metas = [json.loads(meta) for meta in batch["meta"].tolist()] if "meta" in batch else [{}] * len(texts)
        records = zip(texts, metas)
        lines, words = [], []
        for doc, meta in self.nlp.pipe(records, as_tuples=True, batch_size=self.batch_size):
            lines.append(json_line(doc, meta))
            words.append(len(doc))
        return {"json": np.array(lines, dtype=object), "words": np.array(words, dtype=np.int64)}


def line_records(path: str, kind: str, rows_per_block: int, text_key: str = "text"):
    """A Ray datasource of the (text, meta as JSON) records of a text or
    JSONL file, read by ``read_lines`` (errors name file:line) and handed to
    Ray ``rows_per_block`` rows at a time (Ray merges them into blocks of up
    to ``DataContext.target_max_block_size`` and splits those among the actors)."""
    import pyarrow
    from ray.data.datasource import FileBasedDatasource

    class LineRecords(FileBasedDatasource):
        def _read_stream(self, stream, file: str) -> Iterator[Any]:
            texts, metas = [], []
            for text, meta in read_lines(io.BufferedReader(stream), file, kind, text_key):
                texts.append(text)
                metas.append(json.dumps(meta, ensure_ascii=False))
                if len(texts) == rows_per_block:
                    yield pyarrow.table({"text": texts, "meta": metas})
                    texts, metas = [], []
            if texts:
                yield pyarrow.table({"text": texts, "meta": metas})

    return LineRecords(path)


def ray_input(input_path: Union[str, Path]) -> tuple:
    """(path for Ray, kind) of a local file or a URI (``scheme://...``, not
    checked here), which must be text or JSONL."""
    text = str(input_path)
    if "://" in text:
        kind = INPUT_SUFFIXES.get(Path(text.split("://", 1)[1]).suffix.lower())
        path = text
    else:
        kind = input_kind(Path(text))
        path = str(Path(text).resolve())
    if kind not in (TEXT, JSONL):
        raise ValueError(
            f"Annotating on Ray reads a .txt or .jsonl file, not {input_path}: "
            "use `python -m spacy_depner apply` for DocBin input"
        )
    return path, kind


def ray_error(error: BaseException) -> BaseException:
    """The ValueError a Ray task raised, as a ValueError of its first line
    (without the retry notes Ray appends to it); else ``error``."""
    cause = error
    while isinstance(getattr(cause, "cause", None), BaseException):
        cause = cause.cause
    if cause is not error and isinstance(cause, ValueError):
        return ValueError(str(cause).strip().splitlines()[0])
    return error


def ray_annotate(
    pipeline: Union[str, Path],
    input_path: Union[str, Path],
    output: Path,
    *,
    actors: int = 2,
    batch_size: int = 256,
    cpus_per_actor: float = 1,
    address: Optional[str] = None,
    overwrite: bool = False,
    progress: bool = True,
    text_key: str = "text",
) -> Dict[str, Any]:
    """Annotate a text or JSONL corpus (its text under ``text_key``) with ``actors`` Ray actors running
    ``pipeline`` (a path or package name) on batches of ``batch_size``
    documents, into the JSONL file ``output``, in input order. Uses the
    Ray instance this process has initialized, else connects to ``address``
    (default: the ``RAY_ADDRESS`` variable, else a new local instance) and
    shuts Ray down at the end. Returns ``run_summary`` (time includes starting
    the actors and loading the pipeline)."""
    if min(actors, batch_size) < 1 or cpus_per_actor <= 0:
        raise ValueError(
            f"actors={actors}, batch_size={batch_size}, cpus_per_actor={cpus_per_actor}: "
            "give at least 1 actor, 1 document per batch and a positive number of CPUs"
        )
    if Path(output).suffix.lower() != ".jsonl":
        raise ValueError(f"Annotating on Ray writes a .jsonl file, not {output}: give OUTPUT ending in .jsonl")
    path, kind = ray_input(input_path)
    output_kind(output, overwrite, [] if "://" in str(input_path) else [Path(input_path)])
    pipeline = pipeline_location(pipeline)
    ray = import_ray()
    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=address, include_dashboard=False)
    context = ray.data.DataContext.get_current()
    preserve_order = context.execution_options.preserve_order
    context.execution_options.preserve_order = True
    started, n_docs, n_words = time.perf_counter(), 0, 0
    try:
        # reading takes no CPU of the actors' (else a read task can wait for one forever)
        records = ray.data.read_datasource(line_records(path, kind, batch_size, text_key), num_cpus=0)
        annotated = records.map_batches(
            PipelineAnnotator,
            fn_constructor_kwargs={"pipeline": pipeline, "batch_size": batch_size},
            batch_size=batch_size,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=actors),
            num_cpus=cpus_per_actor,
        )
        with (
            atomic_path(output) as temporary,
            open(temporary, "w", encoding="utf8") as out,
            word_progress(progress) as bar,
        ):
            for batch in annotated.iter_batches(batch_size=None, batch_format="numpy"):
                out.write("".join(line + "\n" for line in batch["json"].tolist()))
                n_docs += len(batch["json"])
                n_words += int(batch["words"].sum())
                progress_step(bar, n_docs, int(batch["words"].sum()))
    except Exception as error:
        raise ray_error(error) from None
    finally:
        context.execution_options.preserve_order = preserve_order
        if started_ray:
            ray.shutdown()
    return run_summary(n_docs, n_words, started, output)
