"""How a command ends: a user error (bad input, a wrong path or option) is
one line on stderr and exit status 1; a bug keeps its traceback; a warning
is one line. Set
``SPACY_DEPNER_TRACEBACK=1`` to see the traceback of a user error too."""

import os
import sys
import warnings
from typing import List, Optional

import click
import typer

# What the library raises for bad input (a ValueError naming the cause and
# the fix) and what the system raises for a missing or unreadable file.
USER_ERRORS = (ValueError, OSError)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) as one space."""
    return " ".join(str(text).split())


def describe(error: BaseException) -> str:
    """The cause and the fix of a user error, in one line."""
    if isinstance(error, OSError) and error.filename is not None:
        reason = error.strerror or type(error).__name__
        return f"{reason}: {error.filename} (check the path)"
    return one_line(error) or type(error).__name__


def run(app, args: Optional[List[str]] = None, prog_name: Optional[str] = None) -> int:
    """Run the typer ``app`` on ``args`` (default: the command line) and
    return its exit status: 0, or 1 with one line on stderr for a user
    error (a bad option value, a missing argument, a wrong path, bad input)."""
    try:
        app(args=args, prog_name=prog_name, standalone_mode=False)
    except (click.exceptions.Exit, typer.Exit) as stop:
        return stop.exit_code
    except (click.Abort, typer.Abort):
        click.echo("Aborted.", err=True)
        return 1
    except Exception as error:
        if type(error).__name__ == "NoArgsIsHelpError":
            click.echo(error.format_message(), err=True)
            return 0
        if hasattr(error, "format_message") and hasattr(
            error, "exit_code"
        ):  # click's (or typer's own click's) usage errors
            context = getattr(error, "ctx", None)
            hint = f" (see: {context.command_path} --help)" if context is not None else ""
            click.echo(f"error: {one_line(error.format_message())}{hint}", err=True)
            return 1
        if not isinstance(error, USER_ERRORS) or os.environ.get("SPACY_DEPNER_TRACEBACK"):
            raise
        click.echo(f"error: {describe(error)}", err=True)
        return 1
    return 0


def main(app, prog_name: str) -> None:
    """``sys.exit`` with the status of ``run(app)``; warnings one line each."""
    warnings.formatwarning = lambda message, *_, **__: f"warning: {one_line(message)}\n"
    sys.exit(run(app, prog_name=prog_name))
