"""Streaming a corpus through a trained pipeline: reading the input records,
turning each annotated Doc into one JSON record, writing JSONL or DocBin
shards. Used by ``python -m spacy_depner apply`` and by the Ray Data
version (``ray_data.py``), which share ``read_lines`` and ``json_line``
so that both write the same bytes.

Inputs (by suffix): ``.txt`` one document per line (lines end in \\n or
\\r\\n; an empty line is an empty document, so output line i is input line
i); ``.jsonl`` one ``{"text": ...}`` object per line, its other keys kept as
the record's ``meta`` (blank lines skipped); ``.spacy`` a DocBin, or a
directory walked for ``.spacy`` files as ``spacy.Corpus.v1`` does
(``doc.user_data["meta"]``, when a dict, is the meta).

Outputs: a ``.jsonl`` file of records ``{"text", "meta", "ents": [span],
"spans": {key: [span + "score"]}}`` with span = ``{"start", "end"`` (token
offsets), ``"start_char", "end_char", "label", "text"}``; or a directory of
DocBin shards ``shard-000000.spacy`` ... of at most ``shard_size`` documents
each (the meta in ``doc.user_data["meta"]``), readable by ``spacy.Corpus.v1``;
or one ``.spacy`` DocBin file, as ``spacy apply`` writes (shards while the
run lasts, merged at the end).
Memory holds the batches in flight, one output shard and one input DocBin
file, never the whole corpus.

Interrupted runs resume: records go to ``OUTPUT.partial`` (the JSONL file,
flushed every batch, or the shard folder, each shard written atomically),
beside the manifest ``OUTPUT.partial.json`` of the settings that determine
the output (``run_settings``). A run that finds a partial with the same
settings keeps its complete records, skips as many input records and
appends; at the end the partial is renamed to OUTPUT. So OUTPUT exists only
complete, and a killed run rerun with the same arguments writes the bytes of
an uninterrupted run.
"""

import hashlib
import json
import time
import warnings
from pathlib import Path
from typing import IO, Any, Dict, Iterable, Iterator, List, Tuple, Union

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span
from spacy.training.corpus import walk_corpus
from spacy.vocab import Vocab
from tqdm import tqdm

from ..util.atomic_files import (
    partial_path,
    path_fingerprint,
)

TEXT, JSONL, DOCBIN = "text", "jsonl", "docbin"
DOCBIN_FILE = "docbin-file"
INPUT_SUFFIXES = {".txt": TEXT, ".jsonl": JSONL, ".spacy": DOCBIN}
INPUT_HELP = (
    'a .txt file (one document per line), a .jsonl file ({"text": ...} per line) '
    "or a .spacy file (DocBin), or a directory of .spacy files"
)
SHARD_PATTERN = "shard-{:06d}.spacy"

Meta = Dict[str, Any]


def input_kind(path: Path) -> str:
    """``"text"``, ``"jsonl"`` or ``"docbin"`` for an input path, by its suffix
    (a directory: DocBin shards); a missing path or another suffix is a ValueError."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"Input {path} does not exist: give {INPUT_HELP}")
    if path.is_dir():
        if not docbin_files(path):
            raise ValueError(f"Input directory {path} holds no .spacy file: give {INPUT_HELP}")
        return DOCBIN
    kind = INPUT_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ValueError(f"Unknown input suffix {path.suffix!r} of {path}: give {INPUT_HELP}")
    return kind


def read_lines(
    stream: IO[bytes], path: Union[str, Path], kind: str, text_key: str = "text", first_line: int = 1
) -> Iterator[Tuple[str, Meta]]:
    """The (text, meta) records of a text or JSONL binary stream whose lines
    end in \\n or \\r\\n (a UTF-8 byte order mark on line 1 is dropped); its
    first line is line ``first_line`` of the file ``path``, which the
    ValueError of a bad line names (``file:line``): not UTF-8, not one JSON
    object, or without a string under ``text_key``."""
    if kind not in (TEXT, JSONL):
        raise ValueError(f"read_lines reads {TEXT!r} or {JSONL!r} input, not {kind!r}")
    for number, raw in enumerate(stream, first_line):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError(
                f"{path}:{number}: not UTF-8 ({error.reason} at byte {error.start} of the line); "
                "convert the file to UTF-8"
            ) from None
        line = line[:-1] if line.endswith("\n") else line
        line = line[:-1] if line.endswith("\r") else line
        if number == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if kind == TEXT:
            yield line, {}
        elif line.strip():
            yield parse_jsonl_line(line, f"{path}:{number}", text_key)


def parse_jsonl_line(line: str, where: str, text_key: str = "text") -> Tuple[str, Meta]:
    """(text, meta) of one JSONL line ``{text_key: ..., other keys}``;
    ``where`` (``file:line``) names it in the ValueError of a bad line."""
    example = json.dumps({text_key: "..."})
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{where}: not valid JSON ({error}); each line must be one JSON object such as {example}"
        ) from None
    if not isinstance(record, dict):
        raise ValueError(
            f"{where}: a JSON {type(record).__name__}, not an object; each line must be "
            f"one JSON object such as {example}"
        )
    if text_key not in record:
        raise ValueError(
            f"{where}: no {json.dumps(text_key)} key (keys: {sorted(record)}); add the document's "
            f"text as {json.dumps(text_key)}, or name its key with --text-key (other keys are kept "
            "as metadata)"
        )
    text = record.pop(text_key)
    if not isinstance(text, str):
        kind = {
            int: "a number",
            float: "a number",
            bool: "true or false",
            list: "a list",
            dict: "an object",
            type(None): "null",
        }.get(type(text), type(text).__name__)
        raise ValueError(
            f"{where}: {json.dumps(text_key)} is {kind} ({json.dumps(text)[:40]}), not a string; "
            f"give the document's text as a JSON string, e.g. {example}"
        )
    return text, record


def docbin_files(path: Union[str, Path]) -> List[Path]:
    """The DocBin files of a .spacy file, or of a directory walked as ``spacy.Corpus.v1`` walks it."""
    if not Path(path).is_dir():
        return [Path(path)]
    with warnings.catch_warnings():  # spaCy's W090 says what input_kind's ValueError says
        warnings.simplefilter("ignore", UserWarning)
        return walk_corpus(path, ".spacy")


def read_docbin(file: Union[str, Path]) -> DocBin:
    """A DocBin file, or a ValueError naming it."""
    try:
        return DocBin().from_disk(file)
    except Exception as error:
        raise ValueError(f"{file}: not a readable DocBin ({error}); write it with spacy.tokens.DocBin") from None


def docbin_records(docs: DocBin, vocab: Vocab) -> Iterator[Tuple[Doc, Meta]]:
    """(Doc, meta) of each Doc of a DocBin: ``doc.user_data["meta"]``, when a dict, is the meta."""
    for doc in docs.get_docs(vocab):
        meta = doc.user_data.get("meta")
        yield doc, meta if isinstance(meta, dict) else {}


def read_input(path: Path, vocab: Vocab, text_key: str = "text") -> Iterator[Tuple[Union[str, Doc], Meta]]:
    """Stream the (text or Doc, meta) records of an input (see ``input_kind``;
    a JSONL file's text under ``text_key``), one line or one DocBin file in
    memory at a time."""
    kind = input_kind(path)
    if kind != DOCBIN:
        with open(path, "rb") as stream:
            yield from read_lines(stream, path, kind, text_key)
        return
    for file in docbin_files(path):
        yield from docbin_records(read_docbin(file), vocab)


def span_record(span: Span) -> Dict[str, Any]:
    return {
        "start": span.start,
        "end": span.end,
        "start_char": span.start_char,
        "end_char": span.end_char,
        "label": span.label_,
        "text": span.text,
    }


def doc_record(doc: Doc, meta: Meta) -> Dict[str, Any]:
    """The JSON record of an annotated Doc: text, meta, ``ents`` and every span
    group (keys sorted) with, when ``attrs["scores"]`` holds one score per
    span, each span's ``score`` (the shortest decimal that reads back as the
    same float32)."""
    spans = {}
    for key in sorted(doc.spans):
        group = doc.spans[key]
        records = [span_record(span) for span in group]
        scores = group.attrs.get("scores")
        if scores is not None:
            scores = np.asarray(scores, dtype=np.float32)
            where = f"doc.spans[{key!r}] of the document {doc.text[:40]!r}"
            if scores.shape != (len(group),):
                raise ValueError(
                    f"{where}: attrs['scores'] has shape {scores.shape}, not one score per span "
                    f"({len(group)}); the component that wrote the group must write one score per span"
                )
            if not np.isfinite(scores).all():
                raise ValueError(
                    f"{where}: attrs['scores'] holds NaN or infinite values; check the component's weights"
                )
            for record, score in zip(records, scores.astype(str).tolist()):
                record["score"] = float(score)
        spans[key] = records
    return {"text": doc.text, "meta": meta, "ents": [span_record(ent) for ent in doc.ents], "spans": spans}


#: Characters that ``str.splitlines`` (and JavaScript) take as line ends but
#: JSON may hold raw: escaped, so that a record is one line for any reader.
LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def json_line(doc: Doc, meta: Meta) -> str:
    """``doc_record`` as one line of JSON (UTF-8 text, no newline)."""
    try:
        return json.dumps(doc_record(doc, meta), ensure_ascii=False).translate(LINE_BREAKS)
    except TypeError as error:
        raise ValueError(
            f"The meta of the document {doc.text[:40]!r} cannot be written as JSON ({error}); "
            "keep JSON values (strings, numbers, lists, objects) in it"
        ) from None


def output_kind(output: Path, overwrite: bool, inputs: Iterable[Path] = ()) -> str:
    """``"jsonl"`` (an OUTPUT ending in .jsonl), ``"docbin-file"`` (one
    DocBin, .spacy) or ``"docbin"`` (a directory for the shards), after checking OUTPUT: an existing output is refused
    unless ``overwrite`` (a shard directory is then replaced at the end, if
    it holds only .spacy files), and neither OUTPUT nor its partial
    (``partial_path``) may be or contain one of ``inputs``."""
    output = Path(output)
    for path in inputs:
        for target in (output.resolve(), partial_path(output).resolve()):
            resolved = Path(path).resolve()
            if resolved == target or target in resolved.parents:
                raise ValueError(f"OUTPUT {output} would overwrite the input {path}: choose another OUTPUT")
    if output.suffix.lower() in (".jsonl", ".spacy"):
        if output.is_dir():
            raise ValueError(f"OUTPUT {output} is a directory: give a {output.suffix} file path")
        if output.exists() and not overwrite:
            raise ValueError(f"OUTPUT {output} exists: pass --force to replace it, or choose another path")
        return JSONL if output.suffix.lower() == ".jsonl" else DOCBIN_FILE
    if output.suffix and not output.is_dir():
        raise ValueError(
            f"Unknown output suffix {output.suffix!r} of {output}: give a .jsonl file, a .spacy file "
            "(one DocBin), or a directory (no suffix) for DocBin shards of at most --shard-size documents"
        )
    if output.is_file():
        raise ValueError(f"OUTPUT {output} is a file: DocBin output is a directory of shards; choose a directory path")
    if output.is_dir() and any(output.iterdir()):
        if not overwrite:
            raise ValueError(
                f"OUTPUT directory {output} is not empty: pass --force to replace its shards, or choose another path"
            )
        others = [p for p in output.rglob("*") if p.is_file() and p.suffix != ".spacy"]
        if others:
            raise ValueError(
                f"OUTPUT directory {output} holds other files than .spacy shards (e.g. {others[0]}): "
                "move them away or choose another path"
            )
    return DOCBIN


def pipeline_fingerprint(nlp: Language) -> Dict[str, Any]:
    """The ``path_fingerprint`` of a pipeline loaded from disk, else the SHA-256 of its bytes."""
    if nlp.path is not None:
        return path_fingerprint(nlp.path)
    return {"sha256": hashlib.sha256(nlp.to_bytes()).hexdigest()}


def run_settings(
    pipeline: Dict[str, Any], input_path: Union[str, Path], kind: str, shard_size: int, text_key: str = "text"
) -> Dict[str, Any]:
    """What determines the output of a corpus run (not ``n_process``,
    ``actors`` or ``batch_size``): the output format, the shard size (the
    shards a partial holds), the input's path (or URI) and text key, and
    the ``pipeline``'s fingerprint (``pipeline_fingerprint``). The input's
    content is checked where it matters, document by document
    (``OutputShards.check_done``)."""
    return {
        "format": kind,
        "shard_size": shard_size,
        "input": str(input_path) if "://" in str(input_path) else str(Path(input_path).resolve()),
        "text_key": text_key,
        "pipeline": pipeline,
    }


def as_json(meta: Meta) -> str:
    """The meta as canonical JSON (a DocBin gives back its lists as tuples)."""
    return json.dumps(meta, sort_keys=True, ensure_ascii=False, default=str)


def word_progress(enabled: bool = True) -> tqdm:
    """The progress bar of an annotation run: words (and their rate), with the
    documents done as its postfix (``progress_step``)."""
    return tqdm(unit="word", unit_scale=True, desc="annotate", disable=not enabled, dynamic_ncols=True)


def progress_step(bar: tqdm, docs: int, words: int) -> None:
    """Add ``words`` to the bar; ``docs`` is the number of documents done."""
    bar.update(words)
    bar.set_postfix_str(f"{docs} docs", refresh=False)


def run_summary(docs: int, words: int, started: float, output: Path) -> Dict[str, Any]:
    """``{"docs", "words", "seconds", "words_per_second", "output"}`` of a run
    that started at ``started`` (``time.perf_counter()``)."""
    seconds = time.perf_counter() - started
    return {
        "docs": docs,
        "words": words,
        "seconds": round(seconds, 3),
        "words_per_second": round(words / seconds, 1) if seconds > 0 else None,
        "output": str(output),
    }
