"""Corpus annotation on a Ray cluster, on the design of ``annotate_corpus``:
the input (a text or JSONL file, or a URI such as
``s3://bucket/corpus.jsonl``) is cut into shards (``input_shards``), a pool
of actors that each load the pipeline once (``ShardAnnotator``) each read
their shard themselves and return its JSON record lines, and this machine
writes each shard's lines to its output shard in ``OUTPUT.partial/`` as it
comes (``output_shards``), then joins them in input order: the same bytes as
``python -m spacy_depner apply``, resumable as it is (a killed run rerun
with the same arguments keeps the shards done). Only shard descriptions go
to the actors and text lines come back; an actor holds one shard's records.

Ray is imported only inside these functions (``pip install "spacy-depner[ray]"``).
On a cluster, PIPELINE (and the ``code`` file imported before it loads)
must be loadable on every node (a shared path or an installed package) and
INPUT readable from every node (a shared path, or a URI).

``PipelineAnnotator`` is the Ray Data counterpart for pipelines composed by
hand (``ray.data.read_text`` -> ``map_batches``), e.g. to write Parquet.
"""

import json
import time
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np
from spacy.vocab import Vocab

from ..util.atomic_files import atomic_path, check_manifest, discard_partial, path_fingerprint
from ..util.pipelines import pipeline_location
from .annotating import AnnotateJob
from .corpus import (
    JSONL,
    TEXT,
    input_kind,
    json_line,
    output_kind,
    progress_step,
    run_settings,
    run_summary,
    word_progress,
)
from .input_shards import InputShard, is_uri, plan_shards, uri_kind
from .output_shards import OutputShards
from .shard_pool import limit_threads


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


def load_on_actor(pipeline: str, code: Optional[str] = None):
    """The pipeline loaded in a Ray actor, after importing the Python file
    ``code`` there (registered functions the pipeline needs), as ``--code``
    does in this process."""
    import spacy
    from spacy.util import import_file

    if code is not None:
        import_file("python_code", code)
    return spacy.load(pipeline)


class PipelineAnnotator:
    """A Ray Data actor: loads the pipeline once, then maps a batch
    ``{"text": (n,) str, "meta": (n,) JSON object str}`` (``"meta"`` optional,
    e.g. after ``ray.data.read_text``) to ``{"json": (n,) record lines,
    "words": (n,) int tokens per document}``; ``code``: a Python file
    imported before the pipeline loads."""

    def __init__(self, pipeline: str, batch_size: int, code: Optional[str] = None):
        self.nlp = load_on_actor(pipeline, code)
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


class ShardAnnotator:
    """A Ray actor: loads the pipeline once (one BLAS/torch thread), then
    annotates input shards it reads itself (``AnnotateJob.annotated``) into
    ``(shard number, record lines as UTF-8 bytes, docs, words)``; ``code``:
    a Python file imported before the pipeline loads."""

    def __init__(self, pipeline: str, batch_size: int, text_key: str, code: Optional[str] = None):
        limit_threads()
        self.job = AnnotateJob(load_on_actor(pipeline, code), None, batch_size, text_key)

    def ready(self) -> bool:
        """True, once the pipeline is loaded."""
        return True

    def run(self, shard: InputShard) -> Tuple[int, bytes, int, int]:
        counts = [0, 0]

        def report(docs: int, words: int) -> None:
            counts[0] += docs
            counts[1] += words

        lines = "".join(json_line(doc, meta) + "\n" for doc, meta in self.job.annotated(shard, report))
        return shard.index, lines.encode("utf8"), counts[0], counts[1]


def ray_input(input_path: Union[str, Path]) -> tuple:
    """(path for Ray, kind) of a local file or a URI (``scheme://...``, not
    checked here), which must be text or JSONL."""
    text = str(input_path)
    if is_uri(text):
        return text, uri_kind(text)
    kind, path = input_kind(Path(text)), str(Path(text).resolve())
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
    shard_size: int = 1000,
    cpus_per_actor: float = 1,
    address: Optional[str] = None,
    overwrite: bool = False,
    progress: bool = True,
    text_key: str = "text",
    code: Optional[Path] = None,
) -> Dict[str, Any]:
    """Annotate a text or JSONL corpus (its text under ``text_key``) with
    ``actors`` Ray actors running ``pipeline`` (a path or package name) on
    shards of ``shard_size`` lines in batches of ``batch_size`` documents,
    into the JSONL file ``output``, in input order (module docstring). Uses
    the Ray instance this process has initialized, else connects to
    ``address`` (default: the ``RAY_ADDRESS`` variable, else a new local
    instance) and shuts Ray down at the end. ``code``: a Python file each
    actor imports before loading the pipeline (``--code``). Returns ``run_summary`` (time
    from the actors ready, their pipelines loaded, to the output written, as
    ``apply`` times from its pipeline loaded), ``"docs_kept"``, those found
    in the partial, and ``"actors_start_seconds"``, the actors' start."""
    if min(actors, batch_size, shard_size) < 1 or cpus_per_actor <= 0:
        raise ValueError(
            f"actors={actors}, batch_size={batch_size}, shard_size={shard_size}, cpus_per_actor={cpus_per_actor}: "
            "give at least 1 actor, 1 document per batch and per shard and a positive number of CPUs"
        )
    if Path(output).suffix.lower() != ".jsonl":
        raise ValueError(f"Annotating on Ray writes a .jsonl file, not {output}: give OUTPUT ending in .jsonl")
    path, kind = ray_input(input_path)
    output_kind(output, overwrite, [] if is_uri(input_path) else [Path(input_path)])
    pipeline = pipeline_location(pipeline)
    if overwrite:
        discard_partial(output)
    fingerprint = path_fingerprint(pipeline) if Path(pipeline).is_dir() else {"package": pipeline}
    settings = run_settings(fingerprint, path, JSONL, shard_size, text_key)
    shards = plan_shards(path, shard_size)  # before the manifest: an unreadable input leaves nothing
    ray = import_ray()  # before the manifest: without Ray, nothing is left behind
    resume = check_manifest(output, settings, restart=overwrite)
    outputs = OutputShards(output, JSONL, resume)
    vocab = Vocab()
    kept = outputs.check_done(shards, vocab, text_key) if resume else {}
    started_ray = not ray.is_initialized()
    counts, docs_kept = {"docs": 0, "words": 0}, sum(kept.values())
    starting = time.perf_counter()
    try:
        if started_ray:
            ray.init(address=address, include_dashboard=False)
        annotator = ray.remote(num_cpus=cpus_per_actor)(ShardAnnotator)
        code_path = None if code is None else str(Path(code).resolve())
        pool_actors = [annotator.remote(pipeline, batch_size, text_key, code_path) for _ in range(actors)]
        ray.get([actor.ready.remote() for actor in pool_actors])
        started = time.perf_counter()
        pool = ray.util.ActorPool(pool_actors)
        pending = [shard for shard in shards if shard.index not in kept]
        with word_progress(progress) as bar:
            for number, lines, docs, words in pool.map_unordered(lambda actor, shard: actor.run.remote(shard), pending):
                with atomic_path(outputs.path(number)) as temporary:
                    temporary.write_bytes(lines)
                counts["docs"] += docs
                counts["words"] += words
                progress_step(bar, docs_kept + counts["docs"], words)
    except Exception as error:
        if not outputs.done():
            discard_partial(output)
        raise ray_error(error) from None
    finally:
        if started_ray:
            ray.shutdown()
    outputs.finish()
    summary = run_summary(counts["docs"], counts["words"], started, output)
    return {**summary, "docs_kept": docs_kept, "actors_start_seconds": round(started - starting, 3)}
