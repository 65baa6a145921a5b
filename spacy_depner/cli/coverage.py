"""``python -m spacy_depner coverage``: how much of the gold entities each
lattice can represent, and how many candidate spans per token it has."""
import json
from pathlib import Path
from typing import Optional

import typer

from ..util.atomic_files import atomic_path
from ..evaluation.coverage import coverage_report
from ..evaluation.nested_coverage import coverage_main


def coverage(
    conllu: Optional[Path] = typer.Option(None, help="CoNLL-U file with the trees (flat entities, with --uner)"),
    uner: Optional[Path] = typer.Option(None, help="UNER IOB2 file with the entities of the same sentences"),
    jsonl: Optional[Path] = typer.Option(None, help="GENIA JSON-lines file (nested mentions)"),
    gum: Optional[Path] = typer.Option(None, help="UD English-GUM CoNLL-U file (nested mentions in Entity=)"),
    parser: Optional[Path] = typer.Option(None, help="Parser pipeline whose trees replace the gold ones (with --conllu or --gum)"),
    output: Optional[Path] = typer.Option(None, help="Also write the JSON to this file"),
) -> None:
    """Print JSON. With --conllu and --uner: sentences, tokens, entities,
    coverage (percent) and spans_per_token of the semi-Markov (L=8), DGM-S
    and DGM lattices (gold trees, or a parser's). With --jsonl or --gum:
    coverage of the nested mentions by the flat, nested and quadratic search
    spaces (and DGM valid spans of GUM's trees)."""
    if (conllu is None) != (uner is None):
        raise typer.BadParameter("--conllu and --uner go together")
    if sum(x is not None for x in (conllu, jsonl, gum)) != 1:
        raise typer.BadParameter("give one of: --conllu with --uner, --jsonl, --gum")
    if parser is not None and jsonl is not None:
        raise typer.BadParameter(f"--parser {parser} goes with --conllu or --gum: GENIA ({jsonl}) has no trees")
    report = coverage_report(conllu, uner, parser=parser) if conllu else coverage_main(jsonl=jsonl, gum=gum, parser=parser)
    text = json.dumps(report, indent=2)
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(text, encoding="utf8")
    typer.echo(text)
