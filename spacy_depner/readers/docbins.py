"""The project's corpora as spaCy Docs, and Docs to a DocBin (``.spacy``) file
that ``spacy.Corpus.v1`` reads, so ``spacy train`` can start from them.

The Docs are the reference Docs of the project's readers (one format, one
reader: nothing is parsed here):

* CoNLL-U + UNER IOB2 (``uner.py``): words, spaces, gold trees (heads, deps),
  POS, tags, lemmas and the entities in ``doc.ents``;
* GENIA JSON lines (``genia.py``): words and the nested mentions in
  ``doc.spans[spans_key]`` (no trees: GENIA has none);
* UD English-GUM CoNLL-U (``gum.py``): trees, POS, tags, lemmas, the nested
  mentions in ``doc.spans[spans_key]`` and their heads (minspan) in
  ``doc.spans[spans_key + "_heads"]``.

One Doc per sentence, or per document (``# newdoc id``) with ``documents``
for the two CoNLL-U formats, its sentences given by the trees.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Sequence

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from .genia import genia_examples, read_genia
from .gum import gum_examples, read_gum
from .uner import DEFAULT_LABELS, UNERCorpus, corpus_examples, read_uner_corpus


def read_docbin(vocab: Vocab, path) -> List[Doc]:
    """The Docs of the DocBin file ``path`` (``.spacy``) in ``vocab``; a
    missing file is a ValueError naming it."""
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such DocBin file (check the path)")
    return list(DocBin().from_disk(path).get_docs(vocab))


def read_reference_docbin(vocab: Vocab, path) -> List[Doc]:
    """``read_docbin``'s Docs as the gold standard of a score: a ValueError
    when the file holds no Doc (nothing to score against)."""
    docs = read_docbin(vocab, path)
    if not docs:
        raise ValueError(
            f"{path}: the DocBin holds no Doc, so there is no gold annotation to score against: "
            "check how it was written (convert prints the Docs it writes)"
        )
    return docs


def conllu_iob2_docs(
    vocab: Vocab, conllu, iob2, labels: Sequence[str] = DEFAULT_LABELS, documents: bool = False
) -> List[Doc]:
    """Docs of a CoNLL-U file joined with a UNER IOB2 file (``read_uner_corpus``:
    on ``# sent_id``, else by order, else by words): trees, tags and
    ``doc.ents`` of the ``labels`` (other labels read as O)."""
    return uner_docs(vocab, read_uner_corpus(conllu, iob2, labels), documents)


def uner_docs(vocab: Vocab, corpus: UNERCorpus, documents: bool = False) -> List[Doc]:
    """The reference Docs of a joined corpus, one per sentence or, with
    ``documents``, per CoNLL-U document."""
    return [eg.reference for eg in corpus_examples(vocab, corpus, "given", whole_documents=documents)]


def genia_docs(vocab: Vocab, path, spans_key: str = "nested_ner") -> List[Doc]:
    """Docs of a GENIA JSON-lines file, one per sentence, the mentions in ``doc.spans[spans_key]``."""
    return [eg.reference for eg in genia_examples(vocab, read_genia(path), spans_key)]


def gum_docs(vocab: Vocab, path, spans_key: str = "nested_ner", documents: bool = False) -> List[Doc]:
    """Docs of a UD English-GUM CoNLL-U file: trees, tags, the mentions in
    ``doc.spans[spans_key]`` and their heads in ``doc.spans[spans_key + "_heads"]``."""
    examples = gum_examples(vocab, read_gum(path), "given", spans_key, whole_documents=documents)
    return [eg.reference for eg in examples]


@dataclass
class DocBinSummary:
    """What ``write_docbin`` wrote: Docs, words, entities (``doc.ents``) and
    spans per span group."""

    docs: int = 0
    words: int = 0
    ents: int = 0
    spans: Dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> Dict:
        return dict(self.__dict__)


def write_docbin(docs: Iterable[Doc], output) -> DocBinSummary:
    """Write the Docs (every token attribute, span groups, no user data) to
    the DocBin file OUTPUT (``.spacy``, its folder made if needed)."""
    output = Path(output)
    if output.suffix != ".spacy":
        raise ValueError(f"{output}: a DocBin file must end in .spacy (spacy.Corpus.v1 reads only those)")
    if output.is_dir():
        raise ValueError(f"{output} is a folder: give a file name ending in .spacy")
    docbin, summary = DocBin(store_user_data=False), DocBinSummary()
    for doc in docs:
        docbin.add(doc)
        summary.docs += 1
        summary.words += len(doc)
        summary.ents += len(doc.ents)
        for key, group in doc.spans.items():
            summary.spans[key] = summary.spans.get(key, 0) + len(group)
    output.parent.mkdir(parents=True, exist_ok=True)
    docbin.to_disk(output)
    return summary
