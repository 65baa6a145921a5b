"""Gazetteer token features: phrases per label, matched case-insensitively with
spaCy's PhraseMatcher, as a code per token and gazetteer label.

The phrase file is JSONL in the format of spaCy's entity ruler phrase
patterns, one ``{"label": "LOC", "pattern": "New York"}`` per line.
"""

from pathlib import Path
from typing import Dict, List, Sequence, Union

import numpy as np
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..util.text_lines import json_lines

NONE, BEGIN, INSIDE, LAST, UNIT = range(5)


def read_phrases(path: Union[str, Path]) -> Dict[str, List[str]]:
    """Phrases per label from a JSONL file. A missing file, a folder, a file
    that is not UTF-8 text, a line that is not ``{"label": str, "pattern":
    str}`` (both non-empty) and a file without phrases are ValueErrors naming
    the file (and line)."""
    phrases: Dict[str, List[str]] = {}
    for _, where, line in json_lines(path, "gazetteer"):
        if (
            not isinstance(line, dict)
            or not isinstance(line.get("label"), str)
            or not isinstance(line.get("pattern"), str)
        ):
            raise ValueError(f'{where}: expected {{"label": str, "pattern": str}}, got {line!r}')
        if not line["label"].strip() or not line["pattern"].strip():
            raise ValueError(f"{where}: the label and the pattern must not be empty, got {line!r}")
        phrases.setdefault(line["label"], []).append(line["pattern"])
    if not phrases:
        raise ValueError(
            f'{path}:1: no phrases in the gazetteer file; give one {{"label": "LOC", "pattern": "New York"}} per line'
        )
    return phrases


class Gazetteer:
    """Phrases per label, with ``codes`` giving the token features."""

    def __init__(self, vocab: Vocab, phrases: Dict[str, Sequence[str]]):
        self.vocab = vocab
        self.phrases = {label: list(items) for label, items in sorted(phrases.items())}
        self.labels = list(self.phrases)
        self.matcher = PhraseMatcher(vocab, attr="LOWER")
        tokenizer = Doc  # phrases are split on whitespace, as the corpora are
        for label, items in self.phrases.items():
            self.matcher.add(label, [tokenizer(vocab, words=p.split()) for p in items if p.split()])

    def __len__(self) -> int:
        return len(self.labels)

    def codes(self, docs: List[Doc]) -> np.ndarray:
        """(N, G) int32: for each token of the batch and gazetteer label, NONE,
        or its position (BEGIN, INSIDE, LAST, UNIT) in a matched phrase."""
        n_tokens = sum(len(doc) for doc in docs)
        codes = np.zeros((n_tokens, len(self.labels)), dtype=np.int32)
        if not self.labels:
            return codes
        column = {self.vocab.strings[label]: g for g, label in enumerate(self.labels)}
        starts, ends, columns, offset = [], [], [], 0
        for doc in docs:
            matches = self.matcher(doc) if len(doc) else []
            starts.extend(offset + start for _, start, _ in matches)
            ends.extend(offset + end for _, _, end in matches)
            columns.extend(column[key] for key, _, _ in matches)
            offset += len(doc)
        starts, ends, columns = (np.asarray(a, dtype=np.int64) for a in (starts, ends, columns))
        inside = np.zeros((n_tokens + 1, len(self.labels)), dtype=np.int64)
        np.add.at(inside, (starts, columns), 1)
        np.add.at(inside, (ends, columns), -1)
        codes[np.cumsum(inside, axis=0)[:-1] > 0] = INSIDE
        long = ends - starts > 1
        codes[starts[long], columns[long]] = BEGIN
        codes[ends[long] - 1, columns[long]] = LAST
        codes[starts[~long], columns[~long]] = UNIT
        return codes
