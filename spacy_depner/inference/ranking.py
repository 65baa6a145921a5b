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
The shards hold the records; the output has them in the ``format`` of an
annotation tool (``TASK_FORMATS``: ``records`` as they are, or written by
the tool's own module, ``readers.prodigy_format``, ``label_studio_format``,
``doccano_format``). Label Studio and doccano have no accept/reject task for
one proposed span: ``--unit span`` is for Prodigy (and the records) only.

Everything that can be refused is checked before the progress bar starts
(the arguments, the output, every line of a text or JSONL input), so a
failing run prints its error and nothing else.
"""

import heapq
import itertools
import json
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch

from ..pipeline.uncertainty import MEASURES, DocUncertainty, doc_uncertainties, only_entity_pipe
from ..readers.doccano_format import doccano_task
from ..readers.label_studio_format import label_studio_task
from ..readers.prodigy_format import prodigy_task
from ..util.atomic_files import (
    atomic_path,
    check_manifest,
    complete_lines,
    discard_partial,
    path_fingerprint,
)
from .annotating import run_job
from .corpus import (
    DOCBIN,
    JSONL,
    LINE_BREAKS,
    output_kind,
    pipeline_fingerprint,
    run_settings,
    run_summary,
    word_progress,
)
from .input_shards import InputShard, ShardReader, plan_shards, shard_records
from .output_shards import OutputShards
from .review_tasks import UNITS, doc_tasks
from .shard_pool import Report

TASK_WRITERS: Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]] = {
    "prodigy": prodigy_task,
    "label-studio": label_studio_task,
    "doccano": doccano_task,
}
TASK_FORMATS = ("records", *TASK_WRITERS)
BINARY_FORMATS = ("records", "prodigy")  # the formats with an accept/reject task (rank --unit span)


def check_task_format(format: str, unit: str) -> None:
    """A ValueError naming the fix for an unknown ``format`` or a ``unit`` its tool cannot review."""
    if format not in TASK_FORMATS:
        raise ValueError(f"Unknown task format {format!r}: use one of {', '.join(TASK_FORMATS)}")
    if unit == "span" and format not in BINARY_FORMATS:
        raise ValueError(
            f"--format {format} with --unit span: {format} has no accept/reject task for one proposed span; "
            "use --unit region (annotate the uncertain stretch) or --format prodigy (binary ner tasks)"
        )


class RankJob:
    """Ranks one input shard: its task records (``review_tasks.doc_tasks``) to its output shard."""

    def __init__(
        self,
        nlp: Language,
        pipe,
        outputs: OutputShards,
        measure: str,
        batch_size: int,
        unit: str = "doc",
        text_key: str = "text",
    ):
        self.nlp, self.pipe, self.outputs, self.measure, self.batch_size = nlp, pipe, outputs, measure, batch_size
        self.unit = unit
        self.reader = ShardReader(text_key)

    def run(self, shard: InputShard, report: Report) -> None:
        records = self.reader.records(shard, self.nlp.vocab)
        with atomic_path(self.outputs.path(shard.index)) as temporary, open(temporary, "w", encoding="utf8") as out:
            for scored in scored_batches(self.nlp, self.pipe, records, self.batch_size):
                for doc, meta, uncertainty in scored:
                    for record in doc_tasks(doc, meta, uncertainty, self.pipe.labels, self.measure, self.unit):
                        out.write(json.dumps(record, ensure_ascii=False).translate(LINE_BREAKS) + "\n")
                report(len(scored), sum(len(doc) for doc, _, _ in scored))


def scored_batches(
    nlp: Language, pipe, records: Iterable[Tuple[Any, Any]], batch_size: int
) -> Iterator[List[Tuple[Doc, Any, DocUncertainty]]]:
    """Batches of ``batch_size`` (Doc, meta, ``DocUncertainty`` by the entity
    component ``pipe``) of the (text or Doc, meta) ``records``, each Doc
    through the components before ``pipe`` (e.g. the parser it reads)."""
    before = nlp.pipe_names[: nlp.pipe_names.index(pipe.name)]
    with nlp.select_pipes(enable=before):
        for chunk in minibatch(nlp.pipe(records, as_tuples=True, batch_size=batch_size), batch_size):
            docs, metas = zip(*chunk)
            yield list(zip(docs, metas, doc_uncertainties(pipe, list(docs))))


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
    format: str = "records",
    text_key: str = "text",
) -> Dict[str, Any]:
    """Rank the ``unit`` tasks (``review_tasks``: documents, proposed
    mentions or token regions) of the documents of ``input_path`` (a JSONL
    input's text under ``text_key``) by ``measure`` of the entity component
    ``component`` (default: the pipeline's only one) on ``n_process``
    processes, as ``annotate_corpus`` runs (shards of ``shard_size``
    documents), and write the ``top`` most uncertain (None: all) to the
    .jsonl ``output`` in the tool ``format`` (``TASK_FORMATS``). Returns
    ``run_summary`` of the documents scored in this run, with ``docs_kept``
    (found in the partial) and ``tasks_written``, whatever the unit."""
    check_task_format(format, unit)
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
    check_output(Path(output), overwrite, input_path, format)
    # the whole input's fingerprint: a ranked shard's records are not the input's to check them against
    settings = {
        **run_settings(pipeline_fingerprint(nlp), input_path, JSONL, shard_size, text_key),
        "input": path_fingerprint(input_path),
        "measure": measure,
        "component": pipe.name,
        "unit": unit,
    }
    shards = plan_shards(input_path, shard_size)  # before the manifest: an unreadable input leaves nothing
    check_lines(shards, nlp, text_key)
    resume = check_manifest(output, settings, restart=overwrite)
    outputs = OutputShards(output, JSONL, resume)
    done = set(outputs.done()) if resume else set()
    kept = sum(complete_lines(outputs.path(number)) for number in done)
    started, bar = time.perf_counter(), word_progress(progress)
    bar.set_description("rank")
    job = RankJob(nlp, pipe, outputs, measure, batch_size, unit, text_key)
    counts = run_job(job, shards, done, outputs, n_process, start_method, bar, kept)
    if kept + counts["docs"] == 0:
        warnings.warn(f"The input {input_path} holds no document: {output} is empty")
    written = write_ranked([outputs.path(number) for number in outputs.done()], output, top, format)
    discard_partial(output)
    return {
        **run_summary(counts["docs"], counts["words"], started, output),
        "docs_kept": kept,
        "tasks_written": written,
    }


def check_output(output: Path, overwrite: bool, input_path: Path, format: str) -> None:
    """OUTPUT is a .jsonl file (one task a line) or, for ``label-studio``, a
    .json file (one JSON list of tasks: what Label Studio's import reads);
    an existing one is refused unless ``overwrite``."""
    if output.suffix.lower() != ".json" or format != "label-studio":
        if output_kind(output, overwrite, [input_path]) != JSONL:
            raise ValueError(
                f"OUTPUT {output} must be a .jsonl file (one task a line; with --format label-studio also a "
                ".json file, the JSON list Label Studio imports)"
            )
    elif output.is_dir():
        raise ValueError(f"OUTPUT {output} is a directory: give a .json file path")
    elif output.exists() and not overwrite:
        raise ValueError(f"OUTPUT {output} exists: pass --force to replace it, or choose another path")


def check_lines(shards: List[InputShard], nlp: Language, text_key: str) -> None:
    """Read every line of the text or JSONL ``shards`` (DocBin shards were
    read whole when planned), so that a bad line is a ValueError naming
    file:line before any progress is shown."""
    for _ in shard_records([shard for shard in shards if shard.kind != DOCBIN], nlp.vocab, text_key):
        pass


def write_ranked(shards: List[Path], output: Path, top: Optional[int], format: str = "records") -> int:
    """The records of the ``shards`` files (in input order), most uncertain
    first (ties in input order), the ``top`` first (None: all) written to
    ``output`` in the tool ``format`` (``TASK_FORMATS``); their number. With
    ``top``, memory holds ``top`` records, else all of them. An ``output``
    ending in .json gets one JSON list."""

    def scored():
        lines = itertools.chain.from_iterable(open_lines(shard) for shard in shards)
        for index, line in enumerate(lines):
            yield json.loads(line)["score"], -index, line

    ranked = heapq.nlargest(top, scored()) if top is not None else sorted(scored(), reverse=True)
    convert = TASK_WRITERS.get(format)
    json_list = Path(output).suffix.lower() == ".json"  # one JSON list (Label Studio's import), else JSON lines
    with atomic_path(output) as temporary, open(temporary, "w", encoding="utf8") as out:
        if convert is None:
            out.writelines(line for _, _, line in ranked)
        else:
            out.write("[\n" if json_list else "")
            for number, (_, _, line) in enumerate(ranked):
                task = json.dumps(convert(json.loads(line)), ensure_ascii=False).translate(LINE_BREAKS)
                out.write((",\n" if json_list and number else "") + task + ("" if json_list else "\n"))
            out.write("\n]\n" if json_list else "")
    return len(ranked)


def open_lines(path: Path) -> Iterator[str]:
    with open(path, encoding="utf8") as lines:
        yield from lines
