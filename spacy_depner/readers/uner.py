"""UNER IOB2 entities joined with UD CoNLL-U trees on ``# sent_id``.

The IOB2 files (``index  token  label  [-  annotator]``) follow the UD syntactic
words. Labels outside the kept types (``B-OTH``/``I-OTH`` and the stray ``B-O``
of the legacy UNER train file) are read as O; an ``I-X`` that does not continue
an entity of type X starts one (such repairs are counted).

Examples are single sentences, or with ``whole_documents`` whole CoNLL-U
documents (``# newdoc id``; a sentence without one continues the previous
document), their sentences marked in the input Doc.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from .conllu import Sentence, read_conllu, sentences_to_doc

DEFAULT_LABELS = ("PER", "ORG", "LOC")
DEPENDENCIES = ("given", "predicted")


@dataclass
class TaggedSentence:
    sent_id: str
    words: List[str]
    tags: List[str]


@dataclass
class UNERCorpus:
    """Sentences in CoNLL-U order with their entity tags; ``repairs`` counts
    I- tags that had to start an entity."""

    sentences: List[Sentence]
    tags: List[List[str]]
    repairs: int = 0
    removed: Dict[str, int] = field(default_factory=dict)


def read_iob2(path) -> Iterable[TaggedSentence]:
    """Sentences of a UNER IOB2 file, with their raw labels."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"IOB2 file not found: {path}")
    sent_id, words, tags = None, [], []
    with path.open(encoding="utf8") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                key, _, value = line[1:].partition("=")
                if key.strip() == "sent_id":
                    sent_id = value.strip()
                continue
            if not line.strip():
                if words:
                    yield TaggedSentence(sent_id or f"{path.name}:{number}", words, tags)
                sent_id, words, tags = None, [], []
                continue
            columns = line.split("\t")
            if len(columns) < 3:
                raise ValueError(f"{path}:{number}: an IOB2 line needs index, token and label, got {line!r}")
            words.append(columns[1])
            tags.append(columns[2].strip())
    if words:
        yield TaggedSentence(sent_id or f"{path.name}:end", words, tags)


def clean_tags(tags: Sequence[str], labels: Sequence[str]) -> Tuple[List[str], int, Dict[str, int]]:
    """Valid IOB2 over ``labels``: other types become O; an I-X that does not
    continue an X starts one. Returns (tags, repairs, removed label counts)."""
    out, repairs, removed, previous = [], 0, {}, "O"
    for tag in tags:
        prefix, _, kind = tag.partition("-")
        if tag == "O" or kind not in labels or prefix not in ("B", "I"):
            if tag != "O":
                removed[tag] = removed.get(tag, 0) + 1
            out.append("O")
            previous = "O"
            continue
        if prefix == "I" and previous != kind:
            repairs += 1
            prefix = "B"
        out.append(f"{prefix}-{kind}")
        previous = kind
    return out, repairs, removed


def read_uner_corpus(conllu, iob2, labels: Sequence[str] = DEFAULT_LABELS) -> UNERCorpus:
    """Join an IOB2 file with a CoNLL-U file on ``# sent_id`` (the two orders may differ)."""
    tagged = {s.sent_id: s for s in read_iob2(iob2)}
    corpus = UNERCorpus([], [])
    for sentence in read_conllu(conllu):
        entry = tagged.pop(sentence.sent_id, None)
        if entry is None:
            raise ValueError(f"sent_id {sentence.sent_id!r} of {conllu} is not in {iob2}")
        if entry.words != sentence.words:
            raise ValueError(
                f"sent_id {sentence.sent_id!r}: the tokens of {iob2} and {conllu} differ "
                f"({entry.words[:8]}... vs {sentence.words[:8]}...); use the UD release the entities were made on"
            )
        tags, repairs, removed = clean_tags(entry.tags, labels)
        corpus.sentences.append(sentence)
        corpus.tags.append(tags)
        corpus.repairs += repairs
        for tag, count in removed.items():
            corpus.removed[tag] = corpus.removed.get(tag, 0) + count
    if tagged:
        raise ValueError(f"{len(tagged)} sentences of {iob2} are not in {conllu}, e.g. {next(iter(tagged))!r}")
    return corpus


def corpus_examples(
    vocab: Vocab, corpus: UNERCorpus, dependencies: str, whole_documents: bool = False
) -> List[Example]:
    """One Example per sentence, or per document with ``whole_documents``.
    The reference has trees, tags and entities; the input has words and, with
    ``dependencies="given"``, the gold trees. A document's sentences are marked
    in its input Doc also without trees (gold segmentation)."""
    if dependencies not in DEPENDENCIES:
        raise ValueError(f"dependencies must be 'given' or 'predicted', not {dependencies!r}")
    return [
        Example(
            _group_doc(vocab, [corpus.sentences[i] for i in group], with_trees=dependencies == "given"),
            _group_doc(
                vocab,
                [corpus.sentences[i] for i in group],
                with_trees=True,
                with_tags=True,
                ents=[tag for i in group for tag in corpus.tags[i]],
            ),
        )
        for group in example_groups(corpus, whole_documents)
    ]


def document_groups(corpus: UNERCorpus) -> List[List[int]]:
    """Indices of the sentences of each CoNLL-U document (``# newdoc id``), in
    file order. A sentence without a newdoc comment continues the previous
    document; sentences before the first newdoc form one document."""
    groups: List[List[int]] = []
    for i, sentence in enumerate(corpus.sentences):
        if sentence.newdoc_id is not None or not groups:
            groups.append([])
        groups[-1].append(i)
    return groups


def example_groups(corpus: UNERCorpus, whole_documents: bool) -> List[List[int]]:
    """Sentence indices of each Example: one sentence each, or whole documents."""
    return document_groups(corpus) if whole_documents else [[i] for i in range(len(corpus.sentences))]


def _group_doc(vocab: Vocab, sentences: List[Sentence], with_trees: bool, with_tags: bool = False, ents=None):
    """``sentences_to_doc``, with the sentence starts set when there are no trees."""
    doc = sentences_to_doc(vocab, sentences, with_trees=with_trees, with_tags=with_tags, ents=ents)
    if not with_trees and len(sentences) > 1:
        starts = set(np.cumsum([0] + [len(s.words) for s in sentences[:-1]]).tolist())
        for token in doc:
            token.is_sent_start = token.i in starts
    return doc


@registry.readers("spacy_depner.UNERCorpus.v1")
def create_uner_reader(
    conllu: Path,
    iob2: Path,
    dependencies: str = "given",
    limit: int = 0,
    labels: List[str] = list(DEFAULT_LABELS),
    whole_documents: bool = False,
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: UD trees + UNER entities, one Example
    per sentence. dependencies: "given" puts the gold trees in the input Docs;
    "predicted" leaves them to a parser in the pipeline. whole_documents: one
    Example per CoNLL-U document (``# newdoc id``) instead of per sentence, its
    sentences marked in the input Doc (for document-level features such as the
    two-stage non-local ones). limit: first N Examples, i.e. sentences, or
    documents with whole_documents (0: all)."""
    if dependencies not in DEPENDENCIES:
        raise ValueError(f"dependencies must be 'given' or 'predicted', not {dependencies!r}")
    if limit < 0:
        raise ValueError(f"limit must be 0 (all) or positive, not {limit!r}")
    cache: Dict[str, UNERCorpus] = {}

    def read(nlp: Language) -> Iterable[Example]:
        if "corpus" not in cache:
            corpus = read_uner_corpus(conllu, iob2, labels)
            if limit:
                kept = [i for group in example_groups(corpus, whole_documents)[:limit] for i in group]
                corpus = UNERCorpus(
                    [corpus.sentences[i] for i in kept], [corpus.tags[i] for i in kept], corpus.repairs, corpus.removed
                )
            cache["corpus"] = corpus
        return corpus_examples(nlp.vocab, cache["corpus"], dependencies, whole_documents)

    return read
