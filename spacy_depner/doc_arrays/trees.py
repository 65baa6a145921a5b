"""The trees of a batch of Docs, read and checked once where they enter the
package: ``read_trees`` reads the heads, sentences and dependency labels of
a batch with one token table, after ``require_parse`` (the error every
component and model raises for a Doc without a parse) and with one
``require_forest`` (spaCy accepts any heads, cycles included, and a cycle
would give a lattice duplicate spans: ``structures.trees.forest``).

A component reads its batch once (``doc_arrays.batch.read_batch``) and puts
the checked trees in scope (``trees_in_scope``) while its suggester and its
model run: ``batch_trees`` (the DGM suggesters' ``tree_arrays``, the
dependency features' ``batch_heads_and_labels``) takes them from there for
the same Docs, and reads and checks them itself otherwise (a suggester in
spaCy's ``spancat``, a model called alone)."""

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD, SENT_START
from spacy.tokens import Doc

from ..structures.trees import forest
from .tokens import doc_offsets_of, sentence_offsets_of, token_table


class Trees(NamedTuple):
    """The checked trees of a batch: heads (N,) absolute, -1 for a root (every
    token of a Doc without a parse); labels (N, 1) uint64, the dependency
    label hashes; sentence_offsets (U + 1,) and doc_offsets (B + 1,) in
    batch token coordinates."""

    heads: np.ndarray
    labels: np.ndarray
    sentence_offsets: np.ndarray
    doc_offsets: np.ndarray

    def heads_or_self(self) -> np.ndarray:
        """The heads (N,) with each root its own head (what the dependency features read)."""
        return np.where(self.heads == -1, np.arange(self.heads.shape[0], dtype=np.int64), self.heads)


class MissingParse(ValueError):
    """A non-empty Doc without a dependency parse, found by the component
    ``component`` or by ``reader``, a part of one (a suggester, a model
    layer); where the part does not know its component, ``in_component``
    names it."""

    def __init__(self, index: int, text: str, component: Optional[str] = None, reader: Optional[str] = None):
        self.index, self.text, self.component, self.reader = index, text, component, reader
        super().__init__(missing_parse_message(index, text, component, reader))

    def in_component(self, component: str) -> "MissingParse":
        """The same error, naming the component whose part found it."""
        return MissingParse(self.index, self.text, component, self.reader)


def missing_parse_message(index: int, text: str, component: Optional[str], reader: Optional[str]) -> str:
    """What reads the trees, the Doc without them, and both fixes: a parser
    before the component in a config (annotating), or in Python."""
    who = f"'{component}' (its {reader})" if component and reader else f"'{component or reader}'"
    where = f"'{component}'" if component else f"the component that uses '{reader}'"
    before = f', before="{component}"' if component else ""
    return (
        f"{who} needs dependency trees, but Doc {index} of the batch has no dependency parse "
        f"(text: {text[:60]!r}). Put a parser before {where} in the pipeline: with spacy train, list it in "
        "[training] annotating_components so that its trees reach the Docs in training too; in Python, "
        f'nlp.add_pipe("parser"{before}) (or source a trained one) and train with '
        'nlp.update(examples, annotates=["parser"]). Or pass Docs whose heads and deps are set (for example '
        'with the spacy_depner.UNERCorpus.v1 reader and dependencies = "given"). Dependency features and the '
        "DGM suggesters read the trees; spacy_depner.all_spans_suggester.v1 does not."
    )


def require_parse(docs: Iterable[Doc], component: Optional[str] = None, reader: Optional[str] = None) -> None:
    """Raise ``MissingParse`` for a non-empty Doc without a dependency parse,
    naming the component, or ``reader``, the part of a component that reads the trees."""
    for i, doc in enumerate(docs):
        if len(doc) and not doc.has_annotation("DEP"):
            raise MissingParse(i, doc.text, component, reader)


def read_trees(
    docs: Sequence[Doc], component: Optional[str] = None, reader: Optional[str] = None, parsed: bool = True
) -> Trees:
    """The ``Trees`` of a batch from one token table (HEAD, SENT_START, DEP):
    ``require_parse`` first (with ``parsed``), then ``require_forest`` once;
    the errors name ``component`` (and ``reader``, its part that reads the trees)."""
    docs = list(docs)
    if parsed:
        require_parse(docs, component, reader)
    table = token_table(docs, [HEAD, SENT_START, DEP])
    doc_offsets = doc_offsets_of(docs)
    relative = table[:, 0]
    heads = np.where(relative == 0, -1, relative + np.arange(relative.shape[0], dtype=np.int64))
    sentence_offsets = sentence_offsets_of(table[:, 1], doc_offsets)
    require_forest(docs, heads, sentence_offsets, doc_offsets, component or reader)
    return Trees(heads, np.ascontiguousarray(table[:, 2:3]).view(np.uint64), sentence_offsets, doc_offsets)


# The Docs of the batch a component is working on and their checked trees (``trees_in_scope``).
_IN_SCOPE: ContextVar[Optional[Tuple[List[Doc], Trees]]] = ContextVar("spacy_depner_trees_in_scope", default=None)


@contextmanager
def trees_in_scope(docs: Sequence[Doc], trees: Optional[Trees]) -> Iterator[None]:
    """While the block runs, ``batch_trees`` of the same Docs gives ``trees``
    (read and checked already) instead of reading them again; nothing when
    ``trees`` is None."""
    token = _IN_SCOPE.set(None if trees is None else (list(docs), trees))
    try:
        yield
    finally:
        _IN_SCOPE.reset(token)


def batch_trees(docs: Sequence[Doc], component: Optional[str] = None, reader: Optional[str] = None) -> Trees:
    """The checked ``Trees`` of ``docs``: those in scope when they are the
    trees of these very Docs (``trees_in_scope``), else ``read_trees``."""
    docs = list(docs)
    scoped = _IN_SCOPE.get()
    if scoped is not None and len(scoped[0]) == len(docs) and all(a is b for a, b in zip(scoped[0], docs)):
        return scoped[1]
    return read_trees(docs, component, reader)


def tree_arrays(docs: List[Doc], component: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """heads (N,) absolute, -1 for a root (every token of a Doc without a
    parse), sentence_offsets (U + 1,) and doc_offsets (B + 1,) of a batch; a
    ValueError (``require_forest``, naming ``component`` if given) if the heads
    of a Doc are not a forest within each of its sentences. No parse check."""
    trees = read_trees(docs, component, parsed=False)
    return trees.heads, trees.sentence_offsets, trees.doc_offsets


def require_forest(
    docs: List[Doc],
    heads: np.ndarray,
    sentence_offsets: np.ndarray,
    doc_offsets: np.ndarray,
    component: Optional[str] = None,
) -> None:
    """Raise a clear error if ``heads`` (N,) (absolute, -1 or itself for a
    root) of the batch ``docs`` are not a forest within each sentence
    (``forest.first_fault``, called once): it names the Doc, the sentence,
    the first token at fault, its head, the fault and the fix."""
    token, kind = forest.first_fault(heads, sentence_offsets)
    if kind == forest.NO_FAULT:
        return
    b = int(np.searchsorted(doc_offsets, token, side="right")) - 1
    doc, base = docs[b], int(doc_offsets[b])
    sentence = int(np.searchsorted(sentence_offsets, token, side="right")) - 1
    first_of_doc = int(np.searchsorted(sentence_offsets, base, side="right")) - 1
    start, end = int(sentence_offsets[sentence]) - base, int(sentence_offsets[sentence + 1]) - base
    i, h = token - base, int(heads[token]) - base
    words = " ".join(t.text for t in doc[:8]) + (" ..." if len(doc) > 8 else "")
    head = f"token {h} {doc[h].text!r}" if 0 <= h < len(doc) else f"{h}, outside the Doc"
    if kind == forest.CYCLE:
        path = forest.cycle_through(heads, token)
        cycle = " -> ".join(str(t - base) for t in path) + ("" if path[-1] == token else " -> ...")
        fault = (
            f"it lies on the cycle of heads {cycle}, so following heads from it never reaches a root. "
            "Make one token of the cycle a root (its own head) or hang it from a token outside the cycle"
        )
    else:
        fault = (
            "that head is outside its sentence. spaCy starts a sentence at the leftmost token under each "
            "root, so the subtrees of two roots must not interleave: give the sentence one root or make each "
            "root's subtree a contiguous run of tokens"
        )
    prefix = f"'{component}': " if component else ""
    raise ValueError(
        f"{prefix}the parse is not a forest (each head must be a token of the same sentence, or the token itself "
        f"for a root, and following heads must reach a root): in Doc {b} of the batch ({words!r}), sentence "
        f"{sentence - first_of_doc} (tokens {start}-{end - 1}), token {i} {doc[i].text!r} has head {head}: {fault}, "
        f"in the parser or input data of that Doc (or with doc[{i}].head), or leave the Doc out."
    )


def batch_heads_and_labels(docs: List[Doc], component: str = "dependency_features") -> Tuple[np.ndarray, np.ndarray]:
    """Absolute head of each token in the batch (a root is its own head) (N,)
    and its dependency label hash (N, 1) uint64, from ``batch_trees``
    (``require_parse`` and ``require_forest`` with ``component`` in their
    messages, unless the batch's trees are in scope)."""
    trees = batch_trees(docs, reader=component)
    return trees.heads_or_self(), trees.labels
