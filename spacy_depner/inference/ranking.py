"""Ranking a corpus by how uncertain an entity component is about each
document (``python -m spacy_depner rank``), to choose what to annotate next.

Every document of the input (``corpus.read_input``: .txt, .jsonl, .spacy)
runs through the pipeline's components up to the entity component; the
component's exact marginals give its measures (``pipeline.uncertainty``),
and one record per document goes to ``OUTPUT.partial`` in input order, as
``annotate`` writes (resumable: a killed run rerun with the same arguments
continues after the complete records). At the end the records are sorted,
most uncertain first (ties in input order), ``top`` of them kept, and
written to OUTPUT.

A record is a task in the format annotation tools read (Prodigy's
``ner_manual``, Doccano and Label Studio converters): ``{"text", "tokens":
[{"text", "start", "end", "id", "ws"}], "spans": [{"start", "end",
"token_start", "token_end", "label", "text", "score"}], "score", "meta"}``
where a span's ``score`` is its marginal probability, ``score`` the ranking
measure's value, and ``meta`` the input's meta with every measure.
"""

import heapq
import itertools
import json
import time
import warnings
from pathlib import Path
from typing import Any, Dict, Optional

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch

from ..pipeline.uncertainty import MEASURES, DocUncertainty, doc_uncertainties, only_entity_pipe
from ..util.atomic_files import (
    atomic_path,
    check_manifest,
    complete_lines,
    discard_partial,
    partial_path,
    path_fingerprint,
)
from .corpus import (
    JSONL,
    LINE_BREAKS,
    Meta,
    output_kind,
    progress_step,
    read_input,
    run_settings,
    run_summary,
    word_progress,
)


def rank_record(doc: Doc, meta: Meta, uncertainty: DocUncertainty, labels, measure: str) -> Dict[str, Any]:
    """The task record of one document (module docstring)."""
    spans = []
    for (start, end, label), probability in zip(uncertainty.mentions.tolist(), uncertainty.probabilities.tolist()):
        span = doc[start:end]
        spans.append(
            {
                "start": span.start_char,
                "end": span.end_char,
                "token_start": start,
                "token_end": end - 1,
                "label": labels[label],
                "text": span.text,
                "score": round(probability, 6),
            }
        )
    tokens = [
        {"text": t.text, "start": t.idx, "end": t.idx + len(t.text), "id": t.i, "ws": bool(t.whitespace_)} for t in doc
    ]
    measures = {name: round(float(getattr(uncertainty, name)), 6) for name in MEASURES}
    return {
        "text": doc.text,
        "tokens": tokens,
        "spans": spans,
        "score": measures[measure],
        "meta": {**meta, **measures},
    }


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
) -> Dict[str, Any]:
    """Rank the documents of ``input_path`` by ``measure`` of the entity
    component ``component`` (default: the pipeline's only one) and write
    the ``top`` most uncertain (None: all) to the .jsonl ``output``.
    Returns ``run_summary`` of the documents scored in this run, with
    ``docs_kept`` (found in the partial) and ``docs_written``."""
    if measure not in MEASURES:
        raise ValueError(f"Unknown measure {measure!r}: use one of {', '.join(MEASURES)}")
    if batch_size < 1 or (top is not None and top < 1):
        raise ValueError(f"batch_size={batch_size}, top={top}: give at least 1 for each")
    pipe = only_entity_pipe(nlp, component)
    if output_kind(output, overwrite, [input_path]) != JSONL:
        raise ValueError(f"OUTPUT {output} must be a .jsonl file: rank writes one task record per line")
    # the whole input's fingerprint: a ranked partial holds no record of the documents it read
    settings = {
        **run_settings(nlp, input_path, JSONL, 0),
        "input": path_fingerprint(input_path),
        "measure": measure,
        "component": pipe.name,
    }
    resume = check_manifest(output, settings, restart=overwrite)
    partial = partial_path(output)
    done = complete_lines(partial) if resume else 0
    before = nlp.pipe_names[: nlp.pipe_names.index(pipe.name)]
    started, n_docs, n_words = time.perf_counter(), 0, 0
    records = itertools.islice(read_input(input_path, nlp.vocab), done, None)
    try:
        with (
            open(partial, "a" if resume else "w", encoding="utf8") as out,
            word_progress(progress) as bar,
            nlp.select_pipes(enable=before),
        ):
            bar.set_description("rank")
            for chunk in minibatch(nlp.pipe(records, as_tuples=True, batch_size=batch_size), batch_size):
                docs, metas = zip(*chunk)
                for doc, meta, uncertainty in zip(docs, metas, doc_uncertainties(pipe, list(docs))):
                    record = rank_record(doc, meta, uncertainty, pipe.labels, measure)
                    out.write(json.dumps(record, ensure_ascii=False).translate(LINE_BREAKS) + "\n")
                    n_docs += 1
                    n_words += len(doc)
                    progress_step(bar, done + n_docs, len(doc))
                out.flush()
    except BaseException:
        if done + n_docs == 0:
            discard_partial(output)
        raise
    if done + n_docs == 0:
        warnings.warn(f"The input {input_path} holds no document: {output} is empty")
    written = write_ranked(partial, output, top)
    discard_partial(output)
    return {**run_summary(n_docs, n_words, started, output), "docs_kept": done, "docs_written": written}


def write_ranked(partial: Path, output: Path, top: Optional[int]) -> int:
    """The records of ``partial``, most uncertain first (ties in input order),
    the ``top`` first (None: all) written to ``output``; their number. With
    ``top``, memory holds ``top`` records, else all of them."""

    def scored():
        with open(partial, encoding="utf8") as lines:
            for index, line in enumerate(lines):
                yield json.loads(line)["score"], -index, line

    ranked = heapq.nlargest(top, scored()) if top is not None else sorted(scored(), reverse=True)
    with atomic_path(output) as temporary, open(temporary, "w", encoding="utf8") as out:
        out.writelines(line for _, _, line in ranked)
    return len(ranked)
