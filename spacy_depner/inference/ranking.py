"""Ranking a corpus by how uncertain an entity component is about each
document (``python -m spacy_depner rank``), to choose what to annotate next.

Every document of the input (.txt, .jsonl, .spacy) runs through the
pipeline's components up to the entity component; the component's exact
marginals give its measures (``pipeline.uncertainty``), and one record per
document goes to the output shard of its input shard in ``OUTPUT.partial/``,
on one or several processes as ``annotate_corpus`` runs (resumable: a
killed run rerun with the same arguments keeps the shards done). At the end
the records are sorted,
most uncertain first (ties in input order), ``top`` of them kept, and
written to OUTPUT.

A record is a task in the format annotation tools read (Prodigy's
``ner_manual``, Doccano and Label Studio converters): ``{"text", "tokens":
[{"text", "start", "end", "id", "ws"}], "spans": [{"start", "end",
"token_start", "token_end", "label", "text", "score"}], "score", "meta"}``
where a span's ``score`` is its marginal probability, ``score`` the ranking
measure's value, and ``meta`` the input's meta with every measure. With
``unit`` span or region a document gives one task per proposed mention or
per region of uncertain tokens instead (``review_tasks``), ranked together.
"""

import heapq
import itertools
import json
import time
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from spacy.language import Language
from spacy.util import minibatch

from ..pipeline.uncertainty import MEASURES, doc_uncertainties, only_entity_pipe
from ..util.atomic_files import (
    atomic_path,
    check_manifest,
    complete_lines,
    discard_partial,
    path_fingerprint,
)
from .annotating import run_job
from .corpus import (
    JSONL,
    LINE_BREAKS,
    output_kind,
    pipeline_fingerprint,
    run_settings,
    run_summary,
    word_progress,
)
from .input_shards import InputShard, ShardReader, plan_shards
from .output_shards import OutputShards
from .review_tasks import UNITS, doc_tasks
from .shard_pool import Report


class RankJob:
    """Ranks one input shard: its task records (``review_tasks.doc_tasks``) to its output shard."""

    def __init__(self, nlp: Language, pipe, outputs: OutputShards, measure: str, batch_size: int, unit: str = "doc"):
        self.nlp, self.pipe, self.outputs, self.measure, self.batch_size = nlp, pipe, outputs, measure, batch_size
        self.unit = unit
        self.reader = ShardReader()

    def run(self, shard: InputShard, report: Report) -> None:
        before = self.nlp.pipe_names[: self.nlp.pipe_names.index(self.pipe.name)]
        records = self.reader.records(shard, self.nlp.vocab)
        with (
            atomic_path(self.outputs.path(shard.index)) as temporary,
            open(temporary, "w", encoding="utf8") as out,
            self.nlp.select_pipes(enable=before),
        ):
            for chunk in minibatch(self.nlp.pipe(records, as_tuples=True, batch_size=self.batch_size), self.batch_size):
                docs, metas = zip(*chunk)
                for doc, meta, uncertainty in zip(docs, metas, doc_uncertainties(self.pipe, list(docs))):
                    for record in doc_tasks(doc, meta, uncertainty, self.pipe.labels, self.measure, self.unit):
                        out.write(json.dumps(record, ensure_ascii=False).translate(LINE_BREAKS) + "\n")
                report(len(docs), sum(len(doc) for doc in docs))


def rank_corpus(
    nlp: Language,
    input_path: Path,
    output: Path,
    *,
    measure: str = "expected_errors",
    component: Optional[str] = None,
    batch_size: int = 256,
    top: Optional[int] = None,
    overwrite: bool = False,
    progress: bool = True,
    n_process: int = 1,
    shard_size: int = 1000,
    start_method: Optional[str] = None,
    unit: str = "doc",
) -> Dict[str, Any]:
    """Rank the ``unit`` tasks (``review_tasks``: documents, proposed mentions or token regions) of the documents of ``input_path`` by ``measure`` of the entity
    component ``component`` (default: the pipeline's only one) on
    ``n_process`` processes, as ``annotate_corpus`` runs (shards of
    ``shard_size`` documents), and write the ``top`` most uncertain (None:
    all) to the .jsonl ``output``. Returns ``run_summary`` of the documents
    scored in this run, with ``docs_kept`` (found in the partial) and
    ``docs_written`` (``tasks_written`` for the units span and region)."""
    if measure not in MEASURES:
        raise ValueError(f"Unknown measure {measure!r}: use one of {', '.join(MEASURES)}")
    if unit not in UNITS:
        raise ValueError(f"Unknown review unit {unit!r}: use one of {', '.join(UNITS)}")
    if min(batch_size, n_process, shard_size) < 1 or (top is not None and top < 1):
        raise ValueError(
            f"batch_size={batch_size}, n_process={n_process}, shard_size={shard_size}, top={top}: "
            "give at least 1 for each"
        )
    pipe = only_entity_pipe(nlp, component)
    if output_kind(output, overwrite, [input_path]) != JSONL:
        raise ValueError(f"OUTPUT {output} must be a .jsonl file: rank writes one task record per line")
    # the whole input's fingerprint: a ranked shard's records are not the input's to check them against
    settings = {
        **run_settings(pipeline_fingerprint(nlp), input_path, JSONL, shard_size),
        "input": path_fingerprint(input_path),
        "measure": measure,
        "component": pipe.name,
        "unit": unit,
    }
    shards = plan_shards(input_path, shard_size)  # before the manifest: an unreadable input leaves nothing
    resume = check_manifest(output, settings, restart=overwrite)
    outputs = OutputShards(output, JSONL, resume)
    done = set(outputs.done()) if resume else set()
    kept = sum(complete_lines(outputs.path(number)) for number in done)
    started, bar = time.perf_counter(), word_progress(progress)
    bar.set_description("rank")
    job = RankJob(nlp, pipe, outputs, measure, batch_size, unit)
    counts = run_job(job, shards, done, outputs, n_process, start_method, bar, kept)
    if kept + counts["docs"] == 0:
        warnings.warn(f"The input {input_path} holds no document: {output} is empty")
    written = write_ranked([outputs.path(number) for number in outputs.done()], output, top)
    discard_partial(output)
    written_key = "docs_written" if unit == "doc" else "tasks_written"
    return {**run_summary(counts["docs"], counts["words"], started, output), "docs_kept": kept, written_key: written}


def write_ranked(shards: List[Path], output: Path, top: Optional[int]) -> int:
    """The records of the ``shards`` files (in input order), most uncertain
    first (ties in input order), the ``top`` first (None: all) written to
    ``output``; their number. With ``top``, memory holds ``top`` records,
    else all of them."""

    def scored():
        lines = itertools.chain.from_iterable(open_lines(shard) for shard in shards)
        for index, line in enumerate(lines):
            yield json.loads(line)["score"], -index, line

    ranked = heapq.nlargest(top, scored()) if top is not None else sorted(scored(), reverse=True)
    with atomic_path(output) as temporary, open(temporary, "w", encoding="utf8") as out:
        out.writelines(line for _, _, line in ranked)
    return len(ranked)


def open_lines(path: Path) -> Iterator[str]:
    with open(path, encoding="utf8") as lines:
        yield from lines
