"""``python -m spacy_depner convert``: the public corpora in the project's
formats to spaCy DocBin files (``.spacy``, for ``spacy train`` through
``spacy.Corpus.v1``), and the GENIA 3.02 XML release to the project's GENIA
JSON lines."""

import json
import warnings
from enum import Enum
from pathlib import Path
from typing import Optional

import spacy
import typer

from ..readers.docbins import genia_docs, gum_docs, uner_docs, write_docbin
from ..readers.genia_xml import GENIA_SPLIT, GENIAXMLStats, genia_xml_records, parse_split, write_genia_splits
from ..readers.gum import has_entity_annotation
from ..readers.uner import DEFAULT_LABELS, read_uner_corpus
from ..util.atomic_files import atomic_folder_contents, atomic_path
from ..util.progress import progress


class ConvertFormat(str, Enum):
    conllu_iob2 = "conllu-iob2"
    genia = "genia"
    gum = "gum"
    genia_xml = "genia-xml"


CONVERTERS = tuple(f.value for f in ConvertFormat)
CONVERTER_HELP = (
    "conllu-iob2 (UD CoNLL-U + UNER IOB2, with --iob2), genia (GENIA JSON lines), gum (UD English-GUM "
    "CoNLL-U), genia-xml (GENIAcorpus3.02.tgz) or auto (by INPUT's suffix: .jsonl genia, .conllu conllu-iob2 "
    "with --iob2 else gum if it has GUM's Entity= annotation, .tgz/.xml genia-xml)"
)
OLD_FORM = (
    "convert FORMAT INPUT OUTPUT is deprecated and goes in the next release: write convert INPUT OUTPUT "
    "--converter FORMAT (-c FORMAT), as spacy convert"
)


def auto_converter(input: Path, iob2: Optional[Path]) -> ConvertFormat:
    """The converter of ``--converter auto``: told by INPUT's suffix (a .conllu file with --iob2 is conllu-iob2)."""
    suffixes = "".join(Path(input).suffixes[-2:]).lower()
    by_suffix = {".jsonl": "genia", ".conllu": "conllu-iob2" if iob2 is not None else "gum", ".xml": "genia-xml"}
    name = "genia-xml" if suffixes.endswith((".tgz", ".tar.gz")) else by_suffix.get(Path(input).suffix.lower())
    if name is None:
        raise typer.BadParameter(
            f"--converter auto cannot tell the format of {input}: give -c with one of {CONVERTERS}"
        )
    if name == "gum" and not has_entity_annotation(input):
        raise typer.BadParameter(
            f"--converter auto: {input} has no GUM entity annotation (no Entity= in its MISC column): give "
            "--iob2 FILE, its UNER IOB2 entities (conllu-iob2), or -c gum to read it as GUM all the same"
        )
    return ConvertFormat(name)


def converter_of(name: str, input: Path, iob2: Optional[Path]) -> ConvertFormat:
    """The converter named ``name`` (one of ``CONVERTERS``, or "auto")."""
    if name == "auto":
        return auto_converter(input, iob2)
    if name not in CONVERTERS:
        raise typer.BadParameter(f"unknown converter {name!r}: give one of {CONVERTERS} or auto")
    return ConvertFormat(name)


def convert(
    input: Path = typer.Argument(
        ..., metavar="INPUT", help="The corpus file: .conllu, .jsonl, or the GENIA 3.02 tarball (or its .xml)"
    ),
    output_dir: Path = typer.Argument(
        ...,
        metavar="OUTPUT_DIR",
        help="Folder to write the DocBin INPUT_NAME.spacy to, as spacy convert (or the .spacy file itself); "
        "for genia-xml the folder of train/dev/test.jsonl",
    ),
    old_output: Optional[Path] = typer.Argument(None, hidden=True, metavar="OUTPUT"),
    converter: str = typer.Option("auto", "--converter", "-c", help=CONVERTER_HELP),
    iob2: Optional[Path] = typer.Option(
        None,
        help="conllu-iob2: the UNER IOB2 file of the same sentences (joined on # sent_id, else by sentence order, else by words)",
    ),
    labels: str = typer.Option(
        ",".join(DEFAULT_LABELS), help="conllu-iob2: entity labels kept, comma-separated (others read as O)"
    ),
    spans_key: str = typer.Option(
        "nested_ner", help="genia, gum: span group of the mentions (nested_ner's default spans_key)"
    ),
    documents: bool = typer.Option(
        False, "--documents", help="conllu-iob2, gum: one Doc per document (# newdoc id), not per sentence"
    ),
    shared: bool = typer.Option(
        False,
        "--shared",
        help="conllu-iob2: keep only the sentences both files have (e.g. "
        "a slice of one joined with the whole other), printing how many of each were dropped",
    ),
    limit: int = typer.Option(
        0,
        min=0,
        help="Write only the first LIMIT Docs (sentences, or documents with "
        "--documents; 0: all): a small slice for a first try",
    ),
    split: str = typer.Option(
        ",".join(map(str, GENIA_SPLIT)), help="genia-xml: sentences of train,dev,test, in corpus order"
    ),
    allow_empty: bool = typer.Option(
        False, "--allow-empty", help="Write the DocBin even when the conversion yields no entity at all"
    ),
) -> None:
    """Convert CoNLL-U + IOB2, GENIA or GUM to DocBin or JSONL.

    As spacy convert: INPUT OUTPUT_DIR --converter FORMAT (auto: by INPUT's
    suffix). Prints what was written (JSON). conllu-iob2 and gum keep the gold trees, POS, tags and lemmas; the
    entities go to doc.ents (conllu-iob2) or to the span group --spans-key
    (genia, gum; GUM's mention heads to SPANS_KEY_heads). genia-xml applies
    the rules of the GENIA data README (five types, coordinated terms,
    tokenisation, the 15,022 / 1,669 / 1,855 split). A conversion that
    yields no entity at all is an error unless --allow-empty. Each output file is
    written under a temporary name and renamed when complete: an interrupted
    run leaves the previous files. The earlier form FORMAT INPUT OUTPUT still
    works, with a warning, until the next release."""
    if old_output is not None:
        warnings.warn(OLD_FORM, FutureWarning)
        if str(input) not in CONVERTERS:
            raise typer.BadParameter(
                f"FORMAT {input}: give one of {CONVERTERS} (or write convert INPUT OUTPUT -c FORMAT)"
            )
        format, input, output = ConvertFormat(str(input)), output_dir, old_output
        if format != ConvertFormat.genia_xml and output.suffix != ".spacy":
            raise typer.BadParameter(f"OUTPUT {output} must be a .spacy file (spacy.Corpus.v1 reads only those)")
    else:
        format = converter_of(converter, input, iob2)
        output = output_dir
        if format != ConvertFormat.genia_xml and output.suffix != ".spacy":
            if output.is_file():
                raise typer.BadParameter(
                    f"OUTPUT_DIR {output} is a file: give a folder, or a file name ending in .spacy"
                )
            output = output / f"{Path(input).stem}.spacy"
    if iob2 is not None and format != ConvertFormat.conllu_iob2:
        raise typer.BadParameter(f"--iob2 goes with conllu-iob2, not {format.value}")
    if shared and format != ConvertFormat.conllu_iob2:
        raise typer.BadParameter(f"--shared goes with conllu-iob2, not {format.value}: only it joins two files")
    if limit and format == ConvertFormat.genia_xml:
        raise typer.BadParameter("--limit goes with the formats written to a DocBin, not genia-xml (use --split)")
    if documents and format not in (ConvertFormat.conllu_iob2, ConvertFormat.gum):
        raise typer.BadParameter(
            f"--documents goes with conllu-iob2 or gum: {format.value} is read one sentence per Doc"
        )
    if format == ConvertFormat.genia_xml:
        sizes, stats = parse_split(split), GENIAXMLStats()
        records = progress(genia_xml_records(input, stats), sum(sizes), "GENIA sentences read", unit="sentence")
        with atomic_folder_contents(output) as temporary:
            counts = write_genia_splits(records, temporary, sizes)
        typer.echo(json.dumps({"output": str(output), "split": counts, **stats.as_dict()}, indent=2))
        return
    if output.is_dir():
        raise typer.BadParameter(f"OUTPUT {output} is a folder: give a file name ending in .spacy")
    vocab, extra = spacy.blank("en").vocab, {}
    if format == ConvertFormat.conllu_iob2:
        if iob2 is None:
            raise typer.BadParameter("conllu-iob2 needs --iob2 FILE: the UNER IOB2 entities of the CoNLL-U sentences")
        kept = [label.strip() for label in labels.split(",") if label.strip()]
        if not kept:
            raise typer.BadParameter(f"--labels must name at least one entity label, not {labels!r}")
        corpus = read_uner_corpus(input, iob2, kept, shared)
        docs = uner_docs(vocab, corpus, documents)
        if shared:
            extra["dropped_sentences"] = corpus.dropped
    elif format == ConvertFormat.genia:
        docs = genia_docs(vocab, input, spans_key)
    else:
        docs = gum_docs(vocab, input, spans_key, documents)
    docs = docs[:limit] if limit else docs
    with atomic_path(output) as temporary:
        summary = write_docbin(progress(docs, len(docs), "Docs written"), temporary)
        if not (allow_empty or summary.ents or any(summary.spans.values())):
            raise ValueError(
                f"{input}: the {format.value} conversion yields no entity in its {summary.docs} Docs (none in "
                "doc.ents or a span group): check the converter (-c) and the entity file (--iob2), "
                "or give --allow-empty to write it"
            )
    typer.echo(json.dumps({"output": str(output), **summary.as_dict(), **extra}, indent=2))
