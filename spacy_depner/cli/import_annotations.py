"""``python -m spacy_depner import-annotations``: an annotation tool's export
(Prodigy, Label Studio, doccano) to a DocBin (``.spacy``) that the package's
components train on (``readers/annotation_tools.py``)."""

import json
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from ..readers.annotation_tasks import (
    ALIGNMENT_MODES,
    ANNOTATOR_POLICIES,
    OFFSET_UNITS,
    PRODIGY_KINDS,
    UNLABELLED_POLICIES,
    ImportOptions,
)
from ..readers.annotation_tools import FORMATS, MODES, ImportCounts, read_annotations, write_annotation_docbin
from ..util.atomic_files import atomic_path
from ..util.pipelines import load_pipeline


def choices(name: str, values) -> type:
    """A str Enum of ``values`` (typer's choice type), member names the values with "-" as "_"."""
    return Enum(name, {value.replace("-", "_"): value for value in values}, type=str)


AnnotationFormat = choices("AnnotationFormat", FORMATS)
ImportMode = choices("ImportMode", MODES)
ProdigyKind = choices("ProdigyKind", PRODIGY_KINDS)
AnnotatorPolicy = choices("AnnotatorPolicy", ANNOTATOR_POLICIES)
UnlabelledPolicy = choices("UnlabelledPolicy", UNLABELLED_POLICIES)
AlignmentMode = choices("AlignmentMode", ALIGNMENT_MODES)
OffsetUnit = choices("OffsetUnit", OFFSET_UNITS)


def import_annotations(
    format: AnnotationFormat = typer.Argument(
        ...,
        metavar="FORMAT",
        help="prodigy (JSON lines of ner_manual, spans_manual, ner.teach or review tasks, or answered rank "
        "records), label-studio (the JSON, JSON-MIN or CSV export) or doccano (JSON lines)",
    ),
    input: Path = typer.Argument(..., metavar="INPUT", help="The export file"),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="DocBin file to write (.spacy)"),
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
    prodigy_kind: ProdigyKind = typer.Option(
        ProdigyKind.auto,
        help="prodigy: the kind of a task without _view_id: binary (a decision on its spans only), manual (the "
        "whole annotation of its text or region), or auto (told from its content; ambiguous tasks are an error)",
    ),
    text_key: str = typer.Option("text", "--text-key", "-tk", help="label-studio: the key of the text in data"),
    from_name: Optional[str] = typer.Option(
        None, help="label-studio: the from_name of the Labels control to read (default: the only one)"
    ),
    to_name: Optional[str] = typer.Option(None, help="label-studio: the to_name of the Labels control to read"),
    annotators: AnnotatorPolicy = typer.Option(
        AnnotatorPolicy.last,
        help="label-studio: of several annotations of a task keep the last, the first, the ground-truth one, "
        "each (one Doc each) or the majority (spans more than half of them marked)",
    ),
    unlabelled: UnlabelledPolicy = typer.Option(
        UnlabelledPolicy.skip,
        help="doccano: a record with no span is skipped (counted) or read as reviewed with no entity (outside)",
    ),
    alignment_mode: AlignmentMode = typer.Option(
        AlignmentMode.strict,
        help="Character spans off token boundaries: an error (strict), or snapped to the tokens inside them "
        "(contract) or that they touch (expand), as spaCy's Doc.char_span",
    ),
    skip_misaligned: bool = typer.Option(
        False, help="Skip spans off token boundaries (counted) instead of stopping with all of them listed"
    ),
    offsets: OffsetUnit = typer.Option(
        OffsetUnit.characters,
        help="What the spans' character offsets count: characters (code points; Label Studio offsets whose text "
        "shows them to be UTF-16 are converted) or utf-16 (code units, what a browser counts: an emoji is two)",
    ),
) -> None:
    """Import Prodigy, Label Studio or doccano annotations.

    Reads the tool's export and writes a DocBin that the package's components train on.

    Accepted spans become entities (flat) or spans (nested), rejected ones the
    span group --incorrect-spans-key; tokens no one reviewed are missing
    (flat) or outside --annotated-key (nested). The tasks on one input make
    one Doc; contradictions are an error naming both tasks. Prints the counts
    (JSON), with everything skipped by reason. The file is written under a
    temporary name and renamed when complete."""
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
        options=ImportOptions(
            prodigy_kind=prodigy_kind.value,
            text_key=text_key,
            from_name=from_name,
            to_name=to_name,
            annotators=annotators.value,
            unlabelled=unlabelled.value,
            alignment_mode=alignment_mode.value,
            skip_misaligned=skip_misaligned,
            offsets=offsets.value,
        ),
    )
    if not docs:
        raise ValueError(
            f"{input} holds no answered task ({counts.tasks} tasks, {counts.ignored} ignored, skipped: "
            f"{dict(counts.skipped) or 'none'}): nothing to write"
        )
    with atomic_path(output) as temporary:
        write_annotation_docbin(docs, temporary)
    typer.echo(json.dumps({"output": str(output), **counts.as_dict()}, indent=2))
