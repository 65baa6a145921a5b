"""``annotate_corpus``: a trained pipeline over a corpus, on one or several
processes, into JSONL records, one DocBin or DocBin shards (formats:
``corpus``), resumable (``output_shards``). The input is cut into shards of
``shard_size`` lines or Docs (``input_shards``); each process reads its
shards, annotates them with ``nlp.pipe`` and writes their output shards
(``shard_pool``); the output is the shards in input order, the same bytes
for any number of processes and any batch size."""

import time
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from tqdm import tqdm

from ..util.atomic_files import atomic_path, check_manifest, discard_partial
from .corpus import (
    Meta,
    input_kind,
    json_line,
    output_kind,
    pipeline_fingerprint,
    progress_step,
    run_settings,
    run_summary,
    word_progress,
)
from .input_shards import InputShard, ShardReader, plan_shards
from .output_shards import OutputShards
from .shard_pool import Report, ShardJob, run_shards


class AnnotateJob:
    """Annotates one input shard into its output shard: JSONL records
    (written as they come) or a DocBin (one shard of Docs in memory)."""

    def __init__(self, nlp: Language, outputs: Optional[OutputShards], batch_size: int, text_key: str):
        self.nlp, self.outputs, self.batch_size = nlp, outputs, batch_size
        self.reader = ShardReader(text_key)

    def annotated(self, shard: InputShard, report: Report) -> Iterator[Tuple[Doc, Meta]]:
        """The shard's (Doc, meta), annotated, reporting each batch done."""
        records = self.reader.records(shard, self.nlp.vocab)
        docs = words = 0
        for doc, meta in self.nlp.pipe(records, as_tuples=True, batch_size=self.batch_size):
            yield doc, meta
            docs, words = docs + 1, words + len(doc)
            if docs % self.batch_size == 0:
                report(self.batch_size, words)
                words = 0
        report(docs % self.batch_size, words)

    def run(self, shard: InputShard, report: Report) -> None:
        with atomic_path(self.outputs.path(shard.index)) as temporary:
            if self.outputs.suffix == ".jsonl":
                with open(temporary, "w", encoding="utf8") as out:
                    for doc, meta in self.annotated(shard, report):
                        out.write(json_line(doc, meta) + "\n")
            else:
                shard_docs = DocBin(store_user_data=True)
                for doc, meta in self.annotated(shard, report):
                    if meta:
                        doc.user_data["meta"] = meta
                    shard_docs.add(doc)
                shard_docs.to_disk(temporary)


def annotate_corpus(
    nlp: Language,
    input_path: Path,
    output: Path,
    *,
    n_process: int = 1,
    batch_size: int = 256,
    shard_size: int = 1000,
    overwrite: bool = False,
    progress: bool = True,
    text_key: str = "text",
    start_method: Optional[str] = None,
) -> Dict[str, Any]:
    """Annotate every document of ``input_path`` with ``nlp`` on
    ``n_process`` processes (``shard_pool``; ``start_method`` ``fork`` or
    ``spawn``, default ``fork`` where the platform has it) in batches of
    ``batch_size``, and write them to ``output`` in input order (module
    docstring). A partial left with other settings, or whose documents the
    input no longer holds, is a ValueError, or, with ``overwrite``,
    discarded (so is any partial). A JSONL input's text is under
    ``text_key``. Returns ``run_summary`` of the documents this run
    annotated (time from the first shard started to the output written, the
    workers' start included) and ``"docs_kept"``, those found in the partial."""
    if min(n_process, batch_size, shard_size) < 1:
        raise ValueError(
            f"n_process={n_process}, batch_size={batch_size}, shard_size={shard_size}: give at least 1 for each"
        )
    input_kind(input_path)
    kind = output_kind(output, overwrite, [input_path])
    if overwrite:  # start again, also from a partial of the same settings
        discard_partial(output)
    shards = plan_shards(input_path, shard_size)  # before the manifest: an unreadable input leaves nothing
    resume = check_manifest(
        output, run_settings(pipeline_fingerprint(nlp), input_path, kind, shard_size, text_key), restart=overwrite
    )
    outputs = OutputShards(output, kind, resume)
    kept = outputs.check_done(shards, nlp.vocab, text_key) if resume else {}
    started, docs_kept = time.perf_counter(), sum(kept.values())
    job = AnnotateJob(nlp, outputs, batch_size, text_key)
    counts = run_job(job, shards, set(kept), outputs, n_process, start_method, word_progress(progress), docs_kept)
    if docs_kept + counts["docs"] == 0:
        warnings.warn(f"The input {input_path} holds no document: {output} is empty")
    outputs.finish()
    return {**run_summary(counts["docs"], counts["words"], started, output), "docs_kept": docs_kept}


def run_job(
    job: ShardJob,
    shards: List[InputShard],
    done: Set[int],
    outputs: OutputShards,
    n_process: int,
    start_method: Optional[str],
    bar: tqdm,
    docs_done: int,
) -> Dict[str, int]:
    """Run ``job`` on the shards not ``done`` (``shard_pool.run_shards``),
    counting on ``bar`` after the ``docs_done`` documents of the partial;
    the ``{"docs", "words"}`` this run did. A run that fails before any
    shard is written leaves no partial (the same command, its input fixed,
    starts afresh)."""
    counts = {"docs": 0, "words": 0}

    def report(docs: int, words: int) -> None:
        counts["docs"] += docs
        counts["words"] += words
        progress_step(bar, docs_done + counts["docs"], words)

    pending = [shard.index for shard in shards if shard.index not in done]
    with bar:
        try:
            run_shards(job, shards, pending, n_process, report, start_method)
        except BaseException:
            if not outputs.done():
                discard_partial(outputs.output)
            raise
    return counts
