"""``python -m spacy_depner import-annotations``: an annotation tool's export
(Prodigy, Label Studio, doccano) to a DocBin (``.spacy``) that the package's
components train on (``readers/annotation_tools.py``)."""

import json
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from ..readers.annotation_tools import ImportCounts, read_annotations, write_annotation_docbin
from ..util.atomic_files import atomic_path
from ..util.pipelines import load_pipeline


class AnnotationFormat(str, Enum):
    prodigy = "prodigy"
    label_studio = "label-studio"
    doccano = "doccano"


class ImportMode(str, Enum):
    flat = "flat"
    nested = "nested"


def import_annotations(
    format: AnnotationFormat = typer.Argument(
        ...,
        help="prodigy (JSON lines of ner_manual, spans_manual or ner.teach tasks, or answered rank records), "
        "label-studio (the JSON export) or doccano (JSON lines)",
    ),
    input: Path = typer.Argument(..., help="The export file"),
    output: Path = typer.Argument(..., help="DocBin file to write (.spacy)"),
    lang: str = typer.Option("en", help="Language of the blank tokenizer used where a task has no tokens"),
    model: Optional[str] = typer.Option(
        None, help="Pipeline (directory or package) whose tokenizer is used instead of --lang's"
    ),
    mode: ImportMode = typer.Option(
        ImportMode.flat,
        help="flat: doc.ents, tokens outside the reviewed regions missing; nested: the span groups "
        "--spans-key and --annotated-key",
    ),
    spans_key: str = typer.Option(
        "nested_ner", help="nested: span group of the accepted spans (nested_ner's spans_key)"
    ),
    annotated_key: str = typer.Option(
        "annotated", help="nested: span group of the reviewed regions (the nested component's annotated_key)"
    ),
    incorrect_spans_key: str = typer.Option(
        "incorrect_spans", help="Span group of the rejected spans (spaCy ner's incorrect_spans_key)"
    ),
) -> None:
    """Import Prodigy, Label Studio or doccano annotations.

    Reads the tool's export and writes a DocBin that the package's components train on.

    Accepted spans become entities (flat) or spans (nested), rejected ones the
    span group --incorrect-spans-key; tokens no one reviewed are missing
    (flat) or outside --annotated-key (nested). Prints the counts (JSON). The
    file is written under a temporary name and renamed when complete."""
    if output.suffix != ".spacy":
        raise typer.BadParameter(f"OUTPUT {output} must be a .spacy file (spacy.Corpus.v1 reads only those)")
    if output.is_dir():
        raise typer.BadParameter(f"OUTPUT {output} is a folder: give a file name ending in .spacy")
    counts = ImportCounts()
    docs = read_annotations(
        format.value,
        input,
        load_pipeline(model) if model else None,
        lang=lang,
        mode=mode.value,
        spans_key=spans_key,
        annotated_key=annotated_key,
        incorrect_spans_key=incorrect_spans_key,
        counts=counts,
    )
    if not docs:
        raise ValueError(
            f"{input} holds no answered task ({counts.tasks} tasks, {counts.ignored} ignored): nothing to write"
        )
    with atomic_path(output) as temporary:
        write_annotation_docbin(docs, temporary)
    typer.echo(json.dumps({"output": str(output), **counts.as_dict()}, indent=2))
