"""``python -m spacy_depner pretrain-text``: the sentences of a training
split as the JSON lines that ``spacy pretrain`` reads through
``spacy.JsonlCorpus.v1`` (``[corpora.pretrain]`` of the configs).

One line per sentence, ``{"text": ..., "tokens": [...]}``: ``tokens`` are
the sentence's words as training reads them (CoNLL-U syntactic words, GENIA
tokens, the tokens of a DocBin's Docs); ``text`` is those words joined with
their own spacing (CoNLL-U ``SpaceAfter``, a Doc's whitespace; GENIA has
none, so one space), the field ``spacy.JsonlCorpus.v1`` reads and gives to
the pipeline's tokenizer.
"""

import json
from enum import Enum
from pathlib import Path
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

import typer

from ..evaluation.data_files import data_kind
from ..readers.conllu import read_conllu
from ..readers.genia import read_genia
from ..util.atomic_files import atomic_path
from ..util.progress import progress
from ..util.text_lines import readable_file

Words = Tuple[List[str], List[bool]]  # a sentence's words and whether a space follows each


class TextFormat(str, Enum):
    conllu = "conllu"
    gum = "gum"
    genia = "genia"
    docbin = "docbin"


def input_format(path: Path, chosen: Optional[TextFormat]) -> TextFormat:
    """``chosen``, or the format of ``path``'s suffix as the data commands
    read it (``data_kind``: .conllu GUM/CoNLL-U, .jsonl GENIA, .spacy DocBin)."""
    if chosen is not None:
        return chosen
    try:
        return TextFormat(data_kind(path))
    except ValueError:
        raise ValueError(
            f"{path}: cannot tell its format from the suffix {path.suffix!r}; give --format "
            f"({', '.join(f.value for f in TextFormat)})"
        ) from None


def docbin_sentences(path: Path) -> Iterator[Words]:
    """The sentences of the Docs of a DocBin file (each Doc whole if it has
    no sentence boundaries), empty ones left out."""
    from spacy.tokens import DocBin
    from spacy.vocab import Vocab

    path = readable_file(path, "DocBin")
    try:
        docbin = DocBin().from_disk(path)
    except Exception as error:  # srsly/msgpack raise many kinds on a file that is not a DocBin
        raise ValueError(
            f"{path}: not a DocBin file ({type(error).__name__}); give a .spacy file written by "
            "DocBin.to_disk (e.g. by `python -m spacy_depner convert`), or the right --format"
        ) from None
    for doc in docbin.get_docs(Vocab()):
        parts = doc.sents if doc.has_annotation("SENT_START") else [doc[:]]
        for sentence in parts:
            if len(sentence):
                yield [t.text for t in sentence], [bool(t.whitespace_) for t in sentence]


def sentence_words(path: Path, format: TextFormat) -> Iterator[Words]:
    """The words (and spaces after them) of every sentence of the corpus file
    ``path`` in ``format``, read by the project's readers, in file order."""
    if format in (TextFormat.conllu, TextFormat.gum):  # a GUM file is CoNLL-U: its words are read the same way
        return ((s.words, s.spaces) for s in read_conllu(path))
    if format == TextFormat.genia:
        return ((words, [True] * len(words)) for words, _ in read_genia(path))
    return docbin_sentences(path)


def sentence_record(words: Sequence[str], spaces: Sequence[bool]) -> dict:
    """``{"text", "tokens"}`` of one sentence: the words, and the words joined
    with the spaces between them (none after the last)."""
    text = "".join(word + (" " if space else "") for word, space in zip(words[:-1], spaces[:-1])) + words[-1]
    return {"text": text, "tokens": list(words)}


def write_pretrain_text(sentences: Iterable[Words], output: Path, source: str) -> dict:
    """Write one JSON line per sentence (``sentence_record``) to OUTPUT
    (a .jsonl file, written under a temporary name and renamed when
    complete); ``{"output", "sentences", "words"}``. A corpus without a
    sentence is a ValueError naming ``source``."""
    output = Path(output)
    if output.suffix != ".jsonl":
        raise ValueError(f"OUTPUT {output} must end in .jsonl (spacy.JsonlCorpus.v1 reads only those)")
    if output.is_dir():
        raise ValueError(f"OUTPUT {output} is a folder: give a file name ending in .jsonl")
    counts = {"output": str(output), "sentences": 0, "words": 0}
    with atomic_path(output) as temporary:
        with temporary.open("w", encoding="utf8") as lines:
            for words, spaces in sentences:
                lines.write(json.dumps(sentence_record(words, spaces), ensure_ascii=False) + "\n")
                counts["sentences"] += 1
                counts["words"] += len(words)
        if not counts["sentences"]:
            raise ValueError(f"{source} holds no sentence: nothing to pretrain on; check the file and --format")
    return counts


def pretrain_text(
    input: Path = typer.Argument(
        ...,
        metavar="INPUT",
        help="The training split: CoNLL-U (UD EWT, UD GUM, ...), GENIA JSON lines, or a DocBin (.spacy)",
    ),
    output: Path = typer.Argument(
        ..., metavar="OUTPUT", help="JSON-lines file to write (.jsonl), for --paths.raw_text of `spacy pretrain`"
    ),
    format: Optional[TextFormat] = typer.Option(
        None,
        help="conllu (gum: the same, a GUM file is CoNLL-U), genia (JSON lines) or docbin; "
        "default: from INPUT's suffix (.conllu, .jsonl, .spacy)",
    ),
) -> None:
    """Write a training split's sentences for spacy pretrain.

    Each line is {"text", "tokens"} (spacy.JsonlCorpus.v1 reads "text"; "tokens" are the
    words as training reads them), and print what was written (JSON). Give
    the training split only: pretraining on dev or test text leaks it into
    the model. The file is written under a temporary name and renamed when
    complete: an interrupted run leaves the previous file."""
    chosen = input_format(input, format)
    readable_file(input, "corpus")  # before OUTPUT's folder is made
    counts = write_pretrain_text(
        progress(sentence_words(input, chosen), None, "sentences written", unit="sentence"), output, str(input)
    )
    typer.echo(json.dumps(counts, indent=2))
