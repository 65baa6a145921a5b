"""``DocBatch``: what a component reads off a batch of Docs, once per batch."""
from typing import Callable, List, NamedTuple, Optional

import numpy as np
from spacy.tokens import Doc
from thinc.api import Ops

from .spans import suggested_spans
from .tokens import batch_offsets


class DocBatch(NamedTuple):
    """A batch of Docs as arrays: docs; doc_offsets (B + 1,) and
    sentence_offsets (U + 1,) in batch token coordinates; spans (S, 2)
    [first, last] sorted by (last, first), the suggester's (None without)."""

    docs: List[Doc]
    doc_offsets: np.ndarray
    sentence_offsets: np.ndarray
    spans: Optional[np.ndarray] = None

    @property
    def n_tokens(self) -> int:
        return int(self.doc_offsets[-1])

    def of_doc(self, d: int) -> "DocBatch":
        """The batch of Doc ``d`` alone, in its own token coordinates: what
        ``read_batch([docs[d]], ...)`` gives, without reading it again."""
        lo, hi = int(self.doc_offsets[d]), int(self.doc_offsets[d + 1])
        starts = self.sentence_offsets[:-1]
        sentences = np.concatenate([starts[(starts >= lo) & (starts < hi)] - lo, [hi - lo]]).astype(np.int64)
        spans = None
        if self.spans is not None:
            rows = np.searchsorted(self.spans[:, 1], [lo, hi], side="left")
            spans = self.spans[rows[0]:rows[1]] - lo
        return DocBatch([self.docs[d]], np.array([0, hi - lo], dtype=np.int64), sentences, spans)


def read_batch(docs: List[Doc], suggester: Optional[Callable] = None, ops: Optional[Ops] = None) -> DocBatch:
    """The Docs' offsets and, with a suggester (any spaCy suggester), its spans."""
    docs = list(docs)
    doc_offsets, sentence_offsets = batch_offsets(docs)
    spans = None if suggester is None else suggested_spans(docs, suggester, doc_offsets, ops)
    return DocBatch(docs, doc_offsets, sentence_offsets, spans)
