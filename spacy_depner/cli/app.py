"""The typer app of ``python -m spacy_depner``: it imports each command
module and registers its commands (the command modules never import this one)."""
import typer

from .. import __version__

from . import annotate, calibrate, convert, coverage, evaluate, pretrain_text, rank, tune

app = typer.Typer(add_completion=False, no_args_is_help=True, help="spacy-depner: structured NER for spaCy")


def print_version(value: bool) -> None:
    if value:
        typer.echo(f"spacy-depner {__version__}")
        raise typer.Exit()


@app.callback()
def options(version: bool = typer.Option(False, "--version", callback=print_version, is_eager=True,
                                         help="Print the version and exit")) -> None:
    """spacy-depner: structured NER for spaCy"""

app.command("evaluate")(evaluate.evaluate)
app.command("evaluate-nested")(evaluate.evaluate_nested)
app.command("coverage")(coverage.coverage)
app.command("convert")(convert.convert)
app.command("pretrain-text")(pretrain_text.pretrain_text)
app.command("tune-penalty")(tune.tune_penalty)
app.command("tune-threshold")(tune.tune_threshold)
app.command("calibration")(calibrate.calibration)
app.command("calibrate")(calibrate.calibrate)
app.command("annotate")(annotate.annotate)
app.command("annotate-ray")(annotate.annotate_ray)
app.command("rank")(rank.rank)
