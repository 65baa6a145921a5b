"""A corpus cut into input shards: the unit of work of corpus annotation.

A shard is ``shard_size`` consecutive lines of a text or JSONL file (a byte
range, found by one scan for newlines) or ``shard_size`` consecutive Docs of
one DocBin file. A process reads its shard itself (``read_shard``), so no
Doc or text crosses a process boundary, and writes its own output shard; the
output is the shards' outputs in shard order, so it depends on the input and
``shard_size`` only, never on how many processes ran or which ran what.

Paths are local files, or (for Ray) URIs such as ``s3://bucket/corpus.jsonl``
read through ``pyarrow.fs``.
"""

import io
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator, List, Tuple, Union

import numpy as np
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from .corpus import (
    DOCBIN,
    INPUT_SUFFIXES,
    JSONL,
    TEXT,
    Meta,
    docbin_files,
    docbin_records,
    input_kind,
    read_docbin,
    read_lines,
)

BLOCK = 1 << 23  # bytes read at a time by the newline scan


@dataclass(frozen=True)
class InputShard:
    """Shard ``index`` of the input: bytes ``[start, end)`` of the text or
    JSONL file ``path`` whose first line is line ``first_line`` (1-based), or
    Docs ``[start, end)`` of the DocBin file ``path`` (``first_line`` 0)."""

    index: int
    path: str
    kind: str
    start: int
    end: int
    first_line: int

    def where(self) -> str:
        """The shard's place in the input, for messages."""
        if self.kind == DOCBIN:
            return f"{self.path}, documents {self.start + 1}-{self.end}"
        return f"{self.path}, from line {self.first_line}"


def is_uri(path: Union[str, Path]) -> bool:
    return "://" in str(path)


def open_binary(path: str) -> IO[bytes]:
    """A seekable binary stream of a local file or of a URI (``pyarrow.fs``)."""
    if not is_uri(path):
        return open(path, "rb")
    from pyarrow import fs

    filesystem, location = fs.FileSystem.from_uri(path)
    return filesystem.open_input_file(location)


def line_shards(path: str, kind: str, shard_size: int, first_index: int = 0) -> List[InputShard]:
    """The shards of ``shard_size`` lines of a text or JSONL file (the last
    may be shorter; a last line without a newline counts; an empty file has
    none). Reads the file once, ``BLOCK`` bytes at a time."""
    cuts, lines, offset = [0], 0, 0
    with open_binary(path) as stream:
        for block in iter(lambda: stream.read(BLOCK), b""):
            ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10) + offset + 1
            # the line ending at ends[k] is line lines + k + 1; a shard ends after every shard_size-th
            first = (-lines - 1) % shard_size
            cuts.extend(ends[first::shard_size].tolist())
            lines += len(ends)
            offset += len(block)
    if cuts[-1] == offset:
        cuts.pop()
    cuts.append(offset)
    if offset == 0:
        return []
    return [
        InputShard(first_index + number, path, kind, start, end, number * shard_size + 1)
        for number, (start, end) in enumerate(zip(cuts, cuts[1:]))
    ]


def plan_shards(path: Union[str, Path], shard_size: int) -> List[InputShard]:
    """The input's shards, in order (see the module docstring): a text or
    JSONL file by lines, a DocBin file or directory by Docs of each file
    (each file read once to count them)."""
    if shard_size < 1:
        raise ValueError(f"shard_size={shard_size}: give at least 1")
    kind = input_kind(Path(path)) if not is_uri(path) else uri_kind(str(path))
    if kind != DOCBIN:
        return line_shards(str(path), kind, shard_size)
    shards: List[InputShard] = []
    for file in docbin_files(path):
        count = len(read_docbin(file))
        for start in range(0, count, shard_size):
            shards.append(InputShard(len(shards), str(file), DOCBIN, start, min(start + shard_size, count), 0))
    return shards


def uri_kind(uri: str) -> str:
    """``"text"`` or ``"jsonl"`` for a URI, by its suffix; else a ValueError."""
    kind = INPUT_SUFFIXES.get(Path(uri.split("://", 1)[1]).suffix.lower())
    if kind not in (TEXT, JSONL):
        raise ValueError(f"A URI input must be a .txt or .jsonl file, not {uri}")
    return kind


def docbin_slice(docs: DocBin, start: int, end: int) -> DocBin:
    """The Docs ``[start, end)`` of a DocBin as a DocBin of their own, without making the others."""
    part = DocBin(store_user_data=docs.store_user_data)
    part.attrs, part.strings = docs.attrs, docs.strings
    for name in ("tokens", "spaces", "cats", "span_groups", "flags", "user_data"):
        setattr(part, name, getattr(docs, name)[start:end])
    return part


class ShardReader:
    """Reads shards' records in one process, keeping the last DocBin file
    read (consecutive shards of one file read it once)."""

    def __init__(self, text_key: str = "text"):
        self.text_key = text_key
        self.file: Tuple[str, DocBin] = ("", DocBin())

    def records(self, shard: InputShard, vocab: Vocab) -> Iterator[Tuple[Union[str, Doc], Meta]]:
        """The (text or Doc, meta) records of a shard, as ``corpus.read_input``
        gives them (errors name file:line)."""
        if shard.kind != DOCBIN:
            with open_binary(shard.path) as stream:
                stream.seek(shard.start)
                data = stream.read(shard.end - shard.start)
            yield from read_lines(io.BytesIO(data), shard.path, shard.kind, self.text_key, shard.first_line)
            return
        if self.file[0] != shard.path:
            self.file = (shard.path, read_docbin(shard.path))
        yield from docbin_records(docbin_slice(self.file[1], shard.start, shard.end), vocab)


def shard_records(
    shards: List[InputShard], vocab: Vocab, text_key: str = "text"
) -> Iterator[Tuple[Union[str, Doc], Meta]]:
    """The records of several shards, in order."""
    reader = ShardReader(text_key)
    return itertools.chain.from_iterable(reader.records(shard, vocab) for shard in shards)
