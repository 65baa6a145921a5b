"""Command line: ``python -m spacy_depner <command>``."""
import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="spacy-depner: structured NER for spaCy")

# Each command lives in its own module and registers itself on ``app``.
from . import bench, coverage, evaluate, nested_study, study, two_stage_study  # noqa: E402,F401
