"""The resumable output of a corpus run: one output shard per input shard.

While a run lasts, each input shard's output is one file of
``OUTPUT.partial/``: ``shard-000000.jsonl`` (records, one per line) or
``shard-000000.spacy`` (a DocBin, the meta in ``doc.user_data["meta"]``),
each written atomically by the process that ran the shard, beside the
manifest ``OUTPUT.partial.json`` of the run's settings. A run that finds a
partial of the same settings keeps its shards (any of them, in any order:
workers finish out of order), checks that their documents are still those
of the input, and runs the others. Complete, the shards become OUTPUT in
shard order: one JSONL file, one DocBin file, or the directory of shards.
"""

import json
import re
import shutil
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

from spacy.tokens import DocBin
from spacy.vocab import Vocab

from ..util.atomic_files import atomic_path, discard_partial, finish_partial, partial_path, remove_stale_temporaries
from .corpus import DOCBIN, DOCBIN_FILE, JSONL, Meta, as_json
from .input_shards import InputShard, ShardReader

SHARD_NAME = "shard-{:06d}{}"


class OutputShards:
    """The partial directory of a run writing ``kind`` output (``"jsonl"``,
    ``"docbin"`` or ``"docbin-file"``) to ``output``."""

    def __init__(self, output: Path, kind: str, resume: bool):
        self.output, self.kind = Path(output), kind
        self.directory = partial_path(output)
        self.suffix = ".jsonl" if kind == JSONL else ".spacy"
        self.directory.mkdir(parents=True, exist_ok=True)
        if resume:
            remove_stale_temporaries(self.directory)

    def path(self, number: int) -> Path:
        return self.directory / SHARD_NAME.format(number, self.suffix)

    def done(self) -> List[int]:
        """The numbers of the complete shards."""
        pattern = re.compile(r"shard-(\d{6})" + re.escape(self.suffix) + "$")
        return sorted(int(m.group(1)) for p in self.directory.iterdir() if (m := pattern.match(p.name)))

    def records(self, number: int, vocab: Vocab) -> Iterator[Tuple[str, Meta]]:
        """(text, meta) of each document of shard ``number``."""
        if self.suffix == ".jsonl":
            with open(self.path(number), encoding="utf8") as lines:
                for line in lines:
                    record = json.loads(line)
                    yield record["text"], record["meta"]
            return
        for doc in DocBin().from_disk(self.path(number)).get_docs(vocab):
            yield doc.text, doc.user_data.get("meta") or {}

    def check_done(self, shards: List[InputShard], vocab: Vocab, text_key: str) -> Dict[int, int]:
        """The complete shards that may be kept, with their number of
        documents, after checking each holds the documents of its input
        shard: a document changed (or an input cut short) is a ValueError
        naming it; shards not done yet may have changed."""
        reader, kept = ShardReader(text_key), {}
        for number in self.done():
            if number >= len(shards):
                raise ValueError(
                    f"The input holds {len(shards)} shards, fewer than the {self.directory} being resumed "
                    f"(it holds shard {number}): give the input it was made from, or pass --force to start again"
                )
            inputs = reader.records(shards[number], vocab)
            count = 0
            for count, (text, meta) in enumerate(self.records(number, vocab), 1):
                item, input_meta = next(inputs, (None, None))
                input_text = None if item is None else item.text if not isinstance(item, str) else item
                if input_text != text or as_json(input_meta) != as_json(meta):
                    raise ValueError(
                        f"{shards[number].where()}: document {count} is not the one {self.directory} holds for it "
                        f"({text[:40]!r}, now {'nothing' if input_text is None else repr(input_text[:40])}): the "
                        "documents already done must stay as they were to resume (others may change); restore it, "
                        "or pass --force to start again"
                    )
            if next(inputs, None) is not None:
                raise ValueError(
                    f"{shards[number].where()}: the input now holds more documents than {self.directory} holds for "
                    "it: the documents already done must stay as they were to resume; restore them, or pass "
                    "--force to start again"
                )
            kept[number] = count
        return kept

    def finish(self) -> None:
        """The shards as OUTPUT (atomically), and the partial removed."""
        numbers = self.done()
        if self.kind == DOCBIN:
            finish_partial(self.output)
            return
        if self.kind == DOCBIN_FILE:
            merged = DocBin(store_user_data=True)
            for number in numbers:
                merged.merge(DocBin(store_user_data=True).from_disk(self.path(number)))
            with atomic_path(self.output) as temporary:
                merged.to_disk(temporary)
        else:
            with atomic_path(self.output) as temporary, open(temporary, "wb") as out:
                for number in numbers:
                    with open(self.path(number), "rb") as shard:
                        shutil.copyfileobj(shard, out)
        discard_partial(self.output)
