"""Token, sentence and Doc offsets of a batch of Docs, in batch token
coordinates: the tokens of a batch are the tokens of its Docs, one after
the other."""

from typing import List, Tuple

import numpy as np
from spacy.attrs import IS_SPACE, SENT_START
from spacy.tokens import Doc


def doc_offsets_of(docs: List[Doc]) -> np.ndarray:
    """(B + 1,) int64: the tokens of Doc b are doc_offsets[b]:doc_offsets[b+1] of the batch."""
    return np.concatenate([[0], np.cumsum([len(doc) for doc in docs])]).astype(np.int64)


def token_table(docs: List[Doc], attrs: List[int]) -> np.ndarray:
    """(N, len(attrs)) int64: ``doc.to_array(attrs)`` of every Doc, stacked
    (uint64 columns such as DEP hashes wrap to negative values: ``.view(np.uint64)``)."""
    tables = [doc.to_array(attrs).astype(np.int64).reshape(len(doc), len(attrs)) for doc in docs if len(doc)]
    return np.concatenate(tables) if tables else np.zeros((0, len(attrs)), dtype=np.int64)


def sentence_offsets_of(sent_start: np.ndarray, doc_offsets: np.ndarray) -> np.ndarray:
    """(U + 1,) int64 from the SENT_START column (N,): a sentence starts where
    it is 1 and at the start of every Doc (a Doc without boundaries is one sentence)."""
    starts = sent_start == 1
    starts[doc_offsets[:-1][np.diff(doc_offsets) > 0]] = True
    return np.concatenate([np.flatnonzero(starts), doc_offsets[-1:]]).astype(np.int64)


def batch_offsets(docs: List[Doc]) -> Tuple[np.ndarray, np.ndarray]:
    """doc_offsets (B + 1,) and sentence_offsets (U + 1,) of a batch of Docs,
    in batch token coordinates (int64)."""
    doc_offsets = doc_offsets_of(docs)
    return doc_offsets, sentence_offsets_of(token_table(docs, [SENT_START])[:, 0], doc_offsets)


def whitespace_tokens(docs: List[Doc]) -> np.ndarray:
    """(N,) bool: the tokens made only of whitespace (``token.is_space``), which no entity may contain."""
    return token_table(docs, [IS_SPACE])[:, 0] == 1
