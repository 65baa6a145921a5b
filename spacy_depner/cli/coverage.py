"""``python -m spacy_depner coverage``: how much of the gold entities each
lattice can represent, and how many candidate spans per token it has."""

import json
from pathlib import Path
from typing import Optional

import typer

from ..evaluation.coverage import coverage_report
from ..evaluation.nested_coverage import coverage_main
from ..util.atomic_files import atomic_path
from .arguments import IOB2_HELP, PARSER_HELP, nested_data


def coverage(
    data: Path = typer.Argument(
        ...,
        metavar="DATA",
        help=".conllu with --iob2 (flat entities), .conllu alone "
        "(UD English-GUM's nested mentions) or .jsonl (GENIA's nested mentions)",
    ),
    iob2: Optional[Path] = typer.Option(None, help=IOB2_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP + " (.conllu DATA only)"),
    output: Optional[Path] = typer.Option(None, help="Also write the JSON to this file"),
) -> None:
    """Count the gold entities each search space can hold.

    Flat entities (.conllu with --iob2): sentences, tokens, entities,
    coverage (percent) and spans_per_token of the semi-Markov (L=8), DGM-S
    and DGM lattices, on the gold trees or --parser's. Nested mentions
    (GENIA .jsonl, GUM .conllu): coverage by the flat, nested and quadratic
    search spaces (and the DGM valid spans of GUM's trees)."""
    if iob2 is not None:
        if Path(data).suffix.lower() != ".conllu":
            raise typer.BadParameter(f"--iob2 goes with a .conllu DATA, not {data}")
        report = coverage_report(data, iob2, parser=parser)
    else:
        jsonl, gum = nested_data(data)
        if parser is not None and jsonl is not None:
            raise typer.BadParameter(f"--parser {parser} goes with a .conllu DATA: GENIA ({data}) has no trees")
        report = coverage_main(jsonl=jsonl, gum=gum, parser=parser)
    text = json.dumps(report, indent=2)
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(text, encoding="utf8")
    typer.echo(text)
