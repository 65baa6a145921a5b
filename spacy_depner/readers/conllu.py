"""A small CoNLL-U reader: syntactic words and basic trees, as spaCy Docs.

spaCy's own ``conllu_to_docs`` converter is not used: it reads entities only
from the MISC column, so it cannot join the UNER IOB2 files on ``# sent_id``,
and it turns whole files into Docs without the sentence ids we join on.

Multiword-token lines (``n-m``) and empty nodes (``n.1``) are skipped: the
tokens are the syntactic words, as in UNER. The words of a multiword token are
written without a space between them; the last takes the token's SpaceAfter.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import numpy as np
from spacy.tokens import Doc
from spacy.vocab import Vocab


@dataclass
class Sentence:
    """One CoNLL-U sentence. heads: 0-based within the sentence, -1 for the root."""

    sent_id: str
    newdoc_id: Optional[str]
    words: List[str] = field(default_factory=list)
    spaces: List[bool] = field(default_factory=list)
    heads: List[int] = field(default_factory=list)
    deprels: List[str] = field(default_factory=list)
    upos: List[str] = field(default_factory=list)
    xpos: List[str] = field(default_factory=list)
    lemmas: List[str] = field(default_factory=list)


def _space_after(misc: str) -> bool:
    return "SpaceAfter=No" not in misc.split("|")


def read_conllu(path) -> Iterator[Sentence]:
    """Sentences of a CoNLL-U file, in file order."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"CoNLL-U file not found: {path}")
    sentence: Optional[Sentence] = None
    newdoc: Optional[str] = None
    multiword_end, multiword_space = -1, True
    with path.open(encoding="utf8") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                if sentence is not None and sentence.words:
                    yield sentence
                sentence, multiword_end = None, -1
                continue
            if sentence is None:
                sentence = Sentence(sent_id=f"{path.name}:{number}", newdoc_id=None)
            if line.startswith("#"):
                key, _, value = line[1:].partition("=")
                if key.strip() == "sent_id":
                    sentence.sent_id = value.strip()
                elif key.strip().startswith("newdoc"):
                    newdoc = value.strip() or key.strip()
                    sentence.newdoc_id = newdoc
                continue
            columns = line.split("\t")
            if len(columns) != 10:
                raise ValueError(f"{path}:{number}: a CoNLL-U line has 10 tab-separated columns, this one {len(columns)}")
            index, form, lemma, upos, xpos, _, head, deprel, _, misc = columns
            if "-" in index:
                multiword_end = int(index.split("-")[1])
                multiword_space = _space_after(misc)
                continue
            if "." in index:
                continue
            position = int(index)
            inside_multiword = position <= multiword_end
            sentence.words.append(form)
            sentence.spaces.append(
                (multiword_space if position == multiword_end else False) if inside_multiword else _space_after(misc)
            )
            sentence.heads.append(int(head) - 1 if head not in ("_", "0") else -1)
            sentence.deprels.append(deprel)
            sentence.upos.append(upos)
            sentence.xpos.append(xpos)
            sentence.lemmas.append(lemma)
    if sentence is not None and sentence.words:
        yield sentence


def sentences_to_doc(vocab: Vocab, sentences: List[Sentence], with_trees: bool, with_tags: bool = False, ents: Optional[List[str]] = None) -> Doc:
    """One Doc of one or more sentences (each with its own root).

    with_trees: set heads and deps (sentence boundaries follow from them);
    otherwise only words and spaces. with_tags: also POS, tags and lemmas.
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
    if with_tags:
        annotations["pos"] = [p for s in sentences for p in s.upos]
        annotations["tags"] = [t for s in sentences for t in s.xpos]
        annotations["lemmas"] = [lemma for s in sentences for lemma in s.lemmas]
    if ents is not None:
        annotations["ents"] = ents
    return Doc(vocab, words=words, spaces=spaces, **annotations)
