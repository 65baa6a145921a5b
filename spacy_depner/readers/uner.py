"""UNER IOB2 entities joined with UD CoNLL-U trees: on ``# sent_id``, else by
sentence order, else by the words of each sentence (``read_uner_corpus``).

The IOB2 files (``index  token  label  [-  annotator]``) follow the UD syntactic
words. Labels outside the kept types (e.g. ``B-OTH``/``I-OTH``; every type is
kept when ``labels`` is None), and the stray ``B-O`` of the legacy UNER train
file, are read as O; an ``I-X`` that does not continue
an entity of type X starts one (such repairs are counted).

Examples are single sentences, or with ``whole_documents`` whole CoNLL-U
documents (``# newdoc id``; a sentence without one continues the previous
document), their sentences marked in the input Doc.
"""

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Deque, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from ..util.text_lines import numbered_lines, readable_file
from .conllu import Sentence, new_sent_id, read_conllu, sentences_to_doc

DEFAULT_LABELS = ("PER", "ORG", "LOC")
DEPENDENCIES = ("given", "predicted")
JOIN_METHODS = ("sent_id", "order", "words")


@dataclass
class TaggedSentence:
    """One IOB2 sentence; line: the number of its first line in the file."""

    sent_id: str
    words: List[str]
    tags: List[str]
    line: int = 0


@dataclass
class UNERCorpus:
    """Sentences in CoNLL-U order with their entity tags; ``repairs`` counts
    I- tags that had to start an entity; ``joined_by`` how many sentences the
    join matched by sent_id, by order and by words, and ``dropped`` how many
    of each file's sentences had no partner in the other (with ``shared``;
    ``read_uner_corpus``)."""

    sentences: List[Sentence]
    tags: List[List[str]]
    repairs: int = 0
    removed: Dict[str, int] = field(default_factory=dict)
    joined_by: Dict[str, int] = field(default_factory=lambda: dict.fromkeys(JOIN_METHODS, 0))
    dropped: Dict[str, int] = field(default_factory=lambda: {"conllu": 0, "iob2": 0})


def read_iob2(path) -> Iterator[TaggedSentence]:
    """Sentences of a UNER IOB2 file, with their raw labels, checked as they
    are read (a ValueError "FILE:LINE: ..." names the first fault): index,
    token and label columns; indices 1, 2, ... in each sentence; a token;
    comment lines before the tokens of their sentence; each ``# sent_id``
    once in the file; at least one sentence. A sentence without a sent_id is
    named FILE:LINE (its first line)."""
    path = readable_file(path, "IOB2")
    sent_id, sent_id_line, first, words, tags = None, 0, 0, [], []
    sent_ids: Dict[str, int] = {}
    number, count = 0, 0
    for number, line in numbered_lines(path, "IOB2"):
        if not line.strip():
            if words:
                count += 1
                yield TaggedSentence(sent_id or f"{path.name}:{first}", words, tags, first)
            sent_id, sent_id_line, first, words, tags = None, 0, 0, [], []
            continue
        first = first or number
        if line.startswith("#"):
            if words:
                raise ValueError(
                    f"{path}:{number}: a comment line after the tokens of a sentence; comments go "
                    "before the first token of their sentence, and a blank line ends a sentence"
                )
            key, _, value = line[1:].partition("=")
            if key.strip() == "sent_id":
                sent_id = new_sent_id(value.strip(), path, number, sent_id_line, sent_ids)
                sent_id_line = number
            continue
        columns = line.split("\t", 3)
        if len(columns) < 3 or columns[0] != str(len(words) + 1) or not columns[1]:
            _raise_token_fault(f"{path}:{number}", line, len(words) + 1)
        words.append(columns[1])
        tags.append(columns[2].strip())
    if words:
        count += 1
        yield TaggedSentence(sent_id or f"{path.name}:{first}", words, tags, first)
    if not count:
        raise ValueError(
            f"{path}:{max(number, 1)}: no sentence in the file; an IOB2 file has lines of index, token "
            "and label, tab-separated, its sentences separated by blank lines"
        )


def _raise_token_fault(where: str, line: str, expected: int) -> None:
    columns = line.split("\t")
    if len(columns) < 3:
        raise ValueError(f"{where}: an IOB2 line needs index, token and label, tab-separated, got {line!r}")
    if columns[0] != str(expected):
        raise ValueError(
            f"{where}: token index {columns[0]!r} where {expected} was expected; the indices of a "
            "sentence run 1, 2, 3, ..."
        )
    raise ValueError(f"{where}: token {columns[0]} is empty (column 2)")


def clean_tags(tags: Sequence[str], labels: Optional[Sequence[str]]) -> Tuple[List[str], int, Dict[str, int]]:
    """Valid IOB2 over ``labels`` (None: every type but the stray ``O``):
    other types become O; an I-X that does not continue an X starts one.
    Returns (tags, repairs, removed label counts)."""
    out, repairs, removed, previous = [], 0, {}, "O"
    for tag in tags:
        prefix, _, kind = tag.partition("-")
        kept = kind not in ("", "O") if labels is None else kind in labels
        if tag == "O" or not kept or prefix not in ("B", "I"):
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


def read_uner_corpus(
    conllu, iob2, labels: Optional[Sequence[str]] = DEFAULT_LABELS, shared: bool = False
) -> UNERCorpus:
    """Join an IOB2 file with a CoNLL-U file of the same sentences; the corpus
    is in CoNLL-U order, its entities of the types ``labels`` (None: every type). Each IOB2 sentence is matched, in this order:

    1. by ``# sent_id``: the CoNLL-U sentence of the same id, if it has the same words;
    2. by order: when the sentences left on both sides are as many and have
       the same words at each position (files without ids, or renumbered ids);
    3. by words: the first CoNLL-U sentence left with the same words (ambiguous
       duplicates are paired in file order).

    ``UNERCorpus.joined_by`` counts the sentences of each step. An IOB2
    sentence that none matches is a ValueError naming it (FILE:LINE) and, when
    a CoNLL-U sentence has its id or position, the first token where the two
    differ; so is a CoNLL-U sentence left without entities. With ``shared``
    such sentences are dropped instead (a slice of one file joined with the
    whole other), and ``UNERCorpus.dropped`` counts them."""
    sentences, tagged = list(read_conllu(conllu)), list(read_iob2(iob2))
    pairs, joined_by = join_sentences(conllu, sentences, iob2, tagged, shared)
    corpus = UNERCorpus([], [], joined_by=joined_by)
    corpus.dropped = {"conllu": pairs.count(None), "iob2": len(tagged) - (len(pairs) - pairs.count(None))}
    for sentence, entry in zip(sentences, pairs):
        if entry is None:
            continue
        tags, repairs, removed = clean_tags(entry.tags, labels)
        corpus.sentences.append(sentence)
        corpus.tags.append(tags)
        corpus.repairs += repairs
        for tag, count in removed.items():
            corpus.removed[tag] = corpus.removed.get(tag, 0) + count
    return corpus


def join_sentences(conllu, sentences: List[Sentence], iob2, tagged: List[TaggedSentence], shared: bool = False):
    """(the IOB2 sentence of each CoNLL-U sentence, None for one without
    with ``shared``; counts per join step); the steps of ``read_uner_corpus``.
    Sentence ids are unique on each side."""
    pairs: List[Optional[TaggedSentence]] = [None] * len(sentences)
    joined_by = dict.fromkeys(JOIN_METHODS, 0)
    by_id = {s.sent_id: i for i, s in enumerate(sentences)}
    left: List[TaggedSentence] = []
    for entry in tagged:
        i = by_id.get(entry.sent_id)
        if i is not None and sentences[i].words == entry.words:
            pairs[i] = entry
            joined_by["sent_id"] += 1
        else:
            left.append(entry)
    free = [i for i, pair in enumerate(pairs) if pair is None]
    if left and len(left) == len(free) and all(sentences[i].words == e.words for i, e in zip(free, left)):
        for i, entry in zip(free, left):
            pairs[i] = entry
        joined_by["order"] = len(left)
    elif left:
        same_words: Dict[Tuple[str, ...], Deque[int]] = {}
        for i in free:
            same_words.setdefault(tuple(sentences[i].words), deque()).append(i)
        for position, entry in enumerate(left):
            candidates = same_words.get(tuple(entry.words))
            if not candidates and shared:
                continue
            if not candidates:
                counterpart = by_id.get(entry.sent_id, free[position] if len(free) == len(left) else None)
                detail = (
                    ""
                    if counterpart is None
                    else (
                        f"; CoNLL-U sentence {sentences[counterpart].sent_id!r} ({conllu}:{sentences[counterpart].line}) "
                        + token_difference(entry.words, sentences[counterpart].words)
                    )
                )
                raise ValueError(
                    f"{iob2}:{entry.line}: sentence {entry.sent_id!r} matches no sentence of {conllu} by "
                    f"sent_id, by order or by its words{detail}; {mismatch_hint(sentences, tagged)}"
                )
            pairs[candidates.popleft()] = entry
            joined_by["words"] += 1
    missing = [s for s, pair in zip(sentences, pairs) if pair is None]
    if missing and not shared:
        raise ValueError(
            f"{conllu}:{missing[0].line}: sentence {missing[0].sent_id!r} is not in {iob2} "
            f"({len(missing)} CoNLL-U sentences have no entities); {mismatch_hint(sentences, tagged)}"
        )
    return pairs, joined_by


def mismatch_hint(sentences: Sequence[Sentence], tagged: Sequence[TaggedSentence]) -> str:
    """How to go on when a sentence of one file is not in the other."""
    if len(sentences) != len(tagged):
        return (
            f"the CoNLL-U file has {len(sentences)} sentences and the IOB2 file {len(tagged)}: if one is a slice "
            "of the other, keep only the sentences both have (convert --shared), else give the two files of the same UD release"
        )
    return "give the CoNLL-U file of the UD release the entities were made on"


def token_difference(iob2_words: Sequence[str], conllu_words: Sequence[str], context: int = 3) -> str:
    """Where two token lists first differ: the position (1-based), both tokens
    and ``context`` tokens either side."""
    at = next(
        (k for k, (a, b) in enumerate(zip(iob2_words, conllu_words)) if a != b), min(len(iob2_words), len(conllu_words))
    )

    def token(words):
        return repr(words[at]) if at < len(words) else f"the end (after {len(words)} tokens)"

    low, high = max(0, at - context), at + context + 1
    return (
        f"differs at token {at + 1}: {token(iob2_words)} in the IOB2 file, {token(conllu_words)} in the "
        f"CoNLL-U file (tokens {low + 1}-{high}: {list(iob2_words[low:high])} vs {list(conllu_words[low:high])})"
    )


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
            sentences_to_doc(vocab, [corpus.sentences[i] for i in group], with_trees=dependencies == "given"),
            sentences_to_doc(
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
                    [corpus.sentences[i] for i in kept],
                    [corpus.tags[i] for i in kept],
                    corpus.repairs,
                    corpus.removed,
                    corpus.joined_by,
                )
            cache["corpus"] = corpus
        return corpus_examples(nlp.vocab, cache["corpus"], dependencies, whole_documents)

    return read
