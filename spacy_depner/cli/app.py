"""The typer app of ``python -m spacy_depner``: it imports each command
module and registers its commands (the command modules never import this one)."""

import typer

from .. import __version__
from . import (
    apply,
    calibrate,
    compile_kernels,
    convert,
    coverage,
    evaluate,
    first_stage_folds,
    import_annotations,
    package,
    pretrain_text,
    rank,
    serve,
    tune,
)

app = typer.Typer(
    add_completion=False, no_args_is_help=True, rich_markup_mode=None, help="spacy-depner: structured NER for spaCy"
)


def print_version(value: bool) -> None:
    if value:
        typer.echo(f"spacy-depner {__version__}")
        raise typer.Exit()


@app.callback()
def options(
    version: bool = typer.Option(
        False, "--version", callback=print_version, is_eager=True, help="Print the version and exit"
    ),
) -> None:
    """spacy-depner: structured NER for spaCy"""


def command(name: str, function, **settings) -> None:
    """Register ``function`` as the command ``name``, its summary the first line of its docstring."""
    app.command(name, short_help=function.__doc__.strip().splitlines()[0], **settings)(function)


COMMANDS = (
    ("apply", apply.apply),
    ("apply-ray", apply.apply_ray),
    ("rank", rank.rank),
    ("evaluate", evaluate.evaluate),
    ("evaluate-nested", evaluate.evaluate_nested),
    ("find-threshold", tune.find_threshold),
    ("find-penalty", tune.find_penalty),
    ("calibrate", calibrate.calibrate),
    ("calibration-report", calibrate.calibration_report),
    ("coverage", coverage.coverage),
    ("convert", convert.convert),
    ("import-annotations", import_annotations.import_annotations),
    ("pretrain-text", pretrain_text.pretrain_text),
    ("package", package.package),
    ("serve", serve.serve),
    ("compile", compile_kernels.compile_kernels),
)
for name, function in COMMANDS:
    command(name, function)
command("first-stage-folds", first_stage_folds.first_stage_folds, context_settings=first_stage_folds.OVERRIDES)
