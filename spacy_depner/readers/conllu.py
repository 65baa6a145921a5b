"""A small CoNLL-U reader: syntactic words and basic trees, as spaCy Docs.

spaCy's own ``conllu_to_docs`` converter is not used: it reads entities only
from the MISC column, so it cannot join the UNER IOB2 files on ``# sent_id``,
and it turns whole files into Docs without the sentence ids we join on.

Multiword-token lines (``n-m``) and empty nodes (``n.1``) are skipped: the
tokens are the syntactic words, as in UNER. The words of a multiword token are
written without a space between them; the last takes the token's SpaceAfter.
"""

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import numpy as np
from spacy.parts_of_speech import IDS
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..structures.trees.forest import CYCLE, HEAD_OUTSIDE_SENTENCE, NO_FAULT, cycle_through, first_fault
from ..util.text_lines import numbered_lines, readable_file

UPOS_TAGS = frozenset(IDS) - {""}  # the UD tags spaCy takes as ``pos`` ("_": none given)
_RANGE_ID = re.compile(r"([0-9]+)-([0-9]+)")
_EMPTY_NODE_ID = re.compile(r"[0-9]+\.[0-9]+")
TREES_CHECKED_TOGETHER = 256


@dataclass
class Sentence:
    """One CoNLL-U sentence. heads: 0-based within the sentence, -1 for the root;
    line: the number of its first line in the file."""

    sent_id: str
    newdoc_id: Optional[str]
    words: List[str] = field(default_factory=list)
    spaces: List[bool] = field(default_factory=list)
    heads: List[int] = field(default_factory=list)
    deprels: List[str] = field(default_factory=list)
    upos: List[str] = field(default_factory=list)
    xpos: List[str] = field(default_factory=list)
    lemmas: List[str] = field(default_factory=list)
    line: int = 0


def _space_after(misc: str) -> bool:
    return "SpaceAfter=No" not in misc.split("|")


def new_sent_id(value: str, path: Path, number: int, current_line: int, sent_ids: Dict[str, int]) -> str:
    """The id of a ``# sent_id`` comment at line ``number`` of ``path``, checked:
    not empty, the sentence's first (``current_line``: the line of its id so
    far, 0 if none), not in ``sent_ids`` (id -> line), where it is then recorded."""
    if not value:
        raise ValueError(f"{path}:{number}: an empty sent_id; give the sentence an id or remove the line")
    if current_line:
        raise ValueError(
            f"{path}:{number}: a second sent_id for the sentence of line {current_line}; "
            "a blank line must separate two sentences"
        )
    if value in sent_ids:
        raise ValueError(
            f"{path}:{number}: sent_id {value!r} was already given at line {sent_ids[value]}; "
            "every sentence needs its own id (renumber one)"
        )
    sent_ids[value] = number
    return value


class _SentenceLines:
    """The lines of one sentence as they are read, checked; ``sentence`` when complete."""

    def __init__(self, path: Path, first_line: int, newdoc_id: Optional[str], sent_ids: Dict[str, int]):
        self.path, self.sent_ids = path, sent_ids
        self.sentence = Sentence(sent_id=f"{path.name}:{first_line}", newdoc_id=newdoc_id, line=first_line)
        self.sent_id_line = 0
        self.word_lines: List[int] = []
        self.multiword_end, self.multiword_space = -1, True

    def comment(self, line: str, number: int) -> None:
        if self.word_lines:
            raise ValueError(
                f"{self.path}:{number}: a comment line after the words of a sentence; comments go before the "
                "first word line of their sentence, and a blank line ends a sentence"
            )
        key, _, value = line[1:].partition("=")
        key, value = key.strip(), value.strip()
        if key == "sent_id":
            self.sentence.sent_id = new_sent_id(value, self.path, number, self.sent_id_line, self.sent_ids)
            self.sent_id_line = number
        elif key.startswith("newdoc"):
            self.sentence.newdoc_id = value or key

    def word(self, line: str, number: int) -> None:
        columns = line.split("\t")
        if len(columns) != 10:
            raise ValueError(
                f"{self.path}:{number}: a CoNLL-U line has 10 tab-separated columns, this one {len(columns)}"
            )
        index, form, lemma, upos, xpos, _, head, deprel, _, misc = columns
        s, expected = self.sentence, len(self.sentence.words) + 1
        is_word = index.isdigit() and index.isascii()
        if not is_word:
            span = _RANGE_ID.fullmatch(index)
            if span and int(span.group(1)) == expected and int(span.group(2)) >= expected:
                self.multiword_end, self.multiword_space = int(span.group(2)), _space_after(misc)
                return
            if span:
                raise ValueError(
                    f"{self.path}:{number}: multiword range {index} where {expected}-m was expected; "
                    "a range n-m comes right before its words n..m"
                )
            if _EMPTY_NODE_ID.fullmatch(index):
                return
        if not is_word or int(index) != expected:
            raise ValueError(
                f"{self.path}:{number}: word id {index!r} where {expected} was expected; the word ids of "
                "a sentence run 1, 2, 3, ... (besides ranges n-m and empty nodes n.k)"
            )
        if not form:
            raise ValueError(f"{self.path}:{number}: word {index} has an empty form (column 2)")
        if head != "_" and not (head.isdigit() and head.isascii()):
            raise ValueError(
                f"{self.path}:{number}: head {head!r} of word {index} ({form!r}) is not a word id; "
                "give the id of a word of the sentence, 0 for a root, or _"
            )
        if upos not in UPOS_TAGS and upos != "_":
            raise ValueError(
                f"{self.path}:{number}: UPOS {upos!r} of word {index} ({form!r}) is not a Universal "
                "Dependencies tag (ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ "
                "SYM VERB X, or _); language-specific tags go in XPOS (column 5)"
            )
        if expected <= self.multiword_end:
            s.spaces.append(self.multiword_space if expected == self.multiword_end else False)
        else:
            s.spaces.append(_space_after(misc))
        s.words.append(form)
        s.heads.append(int(head) - 1 if head != "_" else -1)
        s.deprels.append(deprel)
        s.upos.append(upos)
        s.xpos.append(xpos)
        s.lemmas.append(lemma)
        self.word_lines.append(number)

    def tree_fault(self, token: int, kind: int) -> ValueError:
        """The error for a ``first_fault`` of this sentence's heads, at word ``token`` (0-based)."""
        s, where = self.sentence, f"{self.path}:{self.word_lines[token]}"
        if kind == HEAD_OUTSIDE_SENTENCE:
            return ValueError(
                f"{where}: head {s.heads[token] + 1} of word {token + 1} ({s.words[token]!r}) is outside the sentence "
                f"of {len(s.words)} words (lines {s.line}-{self.word_lines[-1]}); a head is the id of a word of the "
                "same sentence, or 0 for a root"
            )
        loop = " -> ".join(str(w + 1) for w in cycle_through(s.heads, token))
        return ValueError(
            f"{where}: word {token + 1} ({s.words[token]!r}) is on a head cycle ({loop}); the heads of "
            "a sentence must form a tree, or several trees each with a root of head 0"
        )


def read_conllu(path) -> Iterator[Sentence]:
    """Sentences of a CoNLL-U file, in file order, checked as they are read
    (a ValueError "FILE:LINE: ..." names the first fault): 10 columns; word ids
    1, 2, ... in each sentence; a form; a head that is a word id of the
    sentence, 0 (a root) or _ (a root); the heads of a sentence a forest (no
    cycle; several roots and crossing arcs are fine); a UD UPOS tag or _;
    comment lines before the words of their sentence; each ``# sent_id`` once
    in the file; at least one sentence. A ``# newdoc`` in a block without
    words applies to the next sentence. The trees of ``TREES_CHECKED_TOGETHER``
    sentences are checked in one call before they are given out."""
    pending: List[_SentenceLines] = []
    complete = _complete_sentences(readable_file(path, "CoNLL-U"))
    while True:
        try:
            lines = next(complete, None)
        except ValueError:
            _check_trees(pending)  # a tree fault on an earlier line is named first
            raise
        if lines is not None:
            pending.append(lines)
        if pending and (lines is None or len(pending) >= TREES_CHECKED_TOGETHER):
            _check_trees(pending)
            yield from (p.sentence for p in pending)
            pending = []
        if lines is None:
            return


def _complete_sentences(path: Path) -> Iterator[_SentenceLines]:
    """The sentences with words of a CoNLL-U file, each checked line by line
    (its sent_id against the earlier ones); not their trees."""
    lines: Optional[_SentenceLines] = None
    newdoc: Optional[str] = None
    sent_ids: Dict[str, int] = {}
    last, count = 1, 0
    for number, line in itertools.chain(numbered_lines(path, "CoNLL-U"), [(0, "")]):  # (0, ""): the end
        if line.strip():
            if lines is None:
                lines = _SentenceLines(path, number, newdoc, sent_ids)
            if line.startswith("#"):
                lines.comment(line, number)
            else:
                lines.word(line, number)
            continue
        if lines is not None and not lines.sentence.words:
            newdoc = lines.sentence.newdoc_id
        elif lines is not None:
            newdoc, count = None, count + 1
            yield lines
        last, lines = max(last, number), None
    if not count:
        raise ValueError(
            f"{path}:{last}: no sentence in the file; a CoNLL-U file has lines of 10 "
            "tab-separated columns, its sentences separated by blank lines"
        )


def _check_trees(pending: List[_SentenceLines]) -> None:
    """The heads of the pending sentences, checked in one ``first_fault`` call:
    the error of the first word whose head is outside its sentence or on a
    cycle. A word that is its own head is a cycle in CoNLL-U (``first_fault``
    reads it as a root), so those are looked for here."""
    if not pending:
        return
    lengths = np.array([len(p.sentence.heads) for p in pending], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    local = np.fromiter(itertools.chain.from_iterable(p.sentence.heads for p in pending), np.int64, int(offsets[-1]))
    heads = np.where(local >= 0, local + np.repeat(offsets[:-1], lengths), -1)
    token, kind = first_fault(heads, offsets)
    loops = np.flatnonzero((local >= 0) & (heads == np.arange(len(heads))))
    if len(loops) and (kind == NO_FAULT or loops[0] < token):
        token, kind = int(loops[0]), CYCLE
    if kind != NO_FAULT:
        sentence = int(np.searchsorted(offsets, token, side="right")) - 1
        raise pending[sentence].tree_fault(token - int(offsets[sentence]), kind)


def sentences_to_doc(
    vocab: Vocab, sentences: List[Sentence], with_trees: bool, with_tags: bool = False, ents: Optional[List[str]] = None
) -> Doc:
    """One Doc of one or more sentences (each with its own root).

    with_trees: set heads and deps (sentence boundaries follow from them);
    otherwise words, spaces and the sentence starts (every token that does
    not start a sentence marked so), so that a parser in the pipeline keeps
    the data's sentences: it respects preset starts, but leaves broken trees
    where it parses over preset heads. with_tags: also POS (none for UPOS "_"),
    tags and lemmas.
    ents: IOB2 tags for every token (e.g. "B-PER"), or None.
    """
    words = [w for s in sentences for w in s.words]
    spaces = [sp for s in sentences for sp in s.spaces]
    if spaces:
        spaces[-1] = False
    annotations: Dict = {}
    if with_trees:
        offsets = np.cumsum([0] + [len(s.words) for s in sentences])
        heads = []
        for offset, s in zip(offsets, sentences):
            heads.extend(offset + (h if h >= 0 else i) for i, h in enumerate(s.heads))
        annotations["heads"] = heads
        annotations["deps"] = [("ROOT" if h < 0 else d) for s in sentences for h, d in zip(s.heads, s.deprels)]
    else:
        starts = set(np.cumsum([0] + [len(s.words) for s in sentences]).tolist())
        annotations["sent_starts"] = [i in starts for i in range(len(words))]
    if with_tags:
        annotations["pos"] = [("" if p == "_" else p) for s in sentences for p in s.upos]
        annotations["tags"] = [t for s in sentences for t in s.xpos]
        annotations["lemmas"] = [lemma for s in sentences for lemma in s.lemmas]
    if ents is not None:
        annotations["ents"] = ents
    return Doc(vocab, words=words, spaces=spaces, **annotations)
