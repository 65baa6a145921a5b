"""A data file as Examples with their gold spans, read by its kind (GENIA
JSON lines, GUM CoNLL-U, UD CoNLL-U + UNER IOB2, DocBin), for the searches
of a setting and the calibration."""

from pathlib import Path
from typing import List, Optional, Set, Tuple

from .corpus_scores import input_doc, nested_file_examples, parsed_docs, parses, with_vocab, without_trees

GoldSpans = Set[Tuple[int, int, str]]
# The span group the GENIA and GUM readers put the gold mentions in.
GOLD_KEY = "nested_ner"
DATA_KINDS = (
    ".jsonl (GENIA JSON lines), .conllu (UD English-GUM, or a UD CoNLL-U file with its UNER IOB2 file "
    "given by --iob2) or .spacy (DocBin)"
)


def data_kind(path: Path, uner: Optional[Path] = None) -> str:
    """ "genia", "gum", "uner" or "docbin" by the file's suffix (a .conllu
    file with a UNER file is "uner"), or a ValueError naming the kinds."""
    suffix = Path(path).suffix.lower()
    kinds = {".jsonl": "genia", ".conllu": "uner" if uner is not None else "gum", ".spacy": "docbin"}
    if suffix not in kinds:
        raise ValueError(f"{path}: unknown data file kind {suffix or '(no suffix)'!r}: give {DATA_KINDS}")
    if uner is not None and kinds[suffix] != "uner":
        raise ValueError(f"a UNER IOB2 file ({uner}) goes with a UD CoNLL-U file, not with {path}")
    return kinds[suffix]


def docbin_gold_key(references, path: Path, spans_key: Optional[str]) -> Optional[str]:
    """Where the gold spans of DocBin references are: ``spans_key``, else
    ``doc.ents`` (None) if some reference has entities, else the one span
    group besides heads; a ValueError when that is ambiguous or missing."""
    keys = sorted({key for doc in references for key in doc.spans})
    if spans_key is not None:
        if spans_key not in keys:
            raise ValueError(f"{path}: no Doc has the span group {spans_key!r} (groups: {keys or 'none'})")
        return spans_key
    if any(doc.has_annotation("ENT_IOB") for doc in references):
        return None
    groups = [key for key in keys if not key.endswith("_heads")]
    if len(groups) != 1:
        raise ValueError(
            f"{path}: the Docs have no doc.ents and {len(groups)} span groups ({groups}): "
            "name the group of the gold spans with --spans-key"
        )
    return groups[0]


def gold_spans(references, key: Optional[str]) -> List[GoldSpans]:
    """Per reference Doc, (start, end, label) of its ``doc.ents`` (key None)
    or of ``doc.spans[key]``."""
    return [
        {(s.start, s.end, s.label_) for s in (doc.ents if key is None else doc.spans.get(key, []))}
        for doc in references
    ]


def file_examples(
    nlp, path: Path, uner: Optional[Path] = None, spans_key: Optional[str] = None, parser: Optional[Path] = None
) -> Tuple[List, List[GoldSpans]]:
    """The Examples of a data file in ``nlp``'s vocab (inputs with the words,
    and the gold trees where the file has them, or the trees of the parser
    pipeline at ``parser``; none when ``nlp`` has its own parser) and the
    gold spans of each: a GENIA .jsonl or a
    GUM .conllu file (nested mentions), a UD .conllu file with its UNER IOB2
    file ``uner`` (entities), or a .spacy DocBin (``doc.ents``, or the span
    group ``spans_key``)."""
    from spacy.training import Example

    from ..readers.docbins import read_reference_docbin
    from ..readers.uner import corpus_examples, read_uner_corpus

    kind, key = data_kind(path, uner), spans_key or GOLD_KEY
    if kind in ("genia", "gum"):
        examples = nested_file_examples(
            nlp.vocab, path if kind == "genia" else None, path if kind == "gum" else None, key
        )
    elif kind == "uner":
        examples, key = corpus_examples(nlp.vocab, read_uner_corpus(path, uner), "given"), None
    else:
        references = read_reference_docbin(nlp.vocab, path)
        key = docbin_gold_key(references, path, spans_key)
        examples = [Example(input_doc(doc), doc) for doc in references]
    if parser is not None:
        for eg, doc in zip(examples, parsed_docs(parser, [eg.predicted for eg in examples])):
            eg.predicted = with_vocab(nlp.vocab, doc)
    elif parses(nlp):
        for eg in examples:  # the pipeline's parser makes the trees: spaCy's parser on given heads can make cycles
            eg.predicted = without_trees(eg.predicted)
    return examples, gold_spans([eg.reference for eg in examples], key)
