"""The command-line page, from the typer app's own click commands: their help,
usage lines and parameters, never re-typed."""

from typing import Iterator, List

import typer

PROGRAM = "python -m spacy_depner"


def _cell(text: object) -> str:
    """Text safe inside a Markdown table cell."""
    return _inline(text).replace("|", "\\|")


def _inline(text: object) -> str:
    """Text on one line, safe as Markdown: no HTML tags, no emphasis."""
    return " ".join(str(text).split()).replace("<", "&lt;").replace("*", "\\*")


def _commands(group, ctx) -> Iterator[tuple]:
    """(command, its context) for every command below ``group``, depth first."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub_ctx = command.context_class(command, info_name=name, parent=ctx)
        if hasattr(command, "list_commands"):
            yield from _commands(command, sub_ctx)
        else:
            yield command, sub_ctx


def _param_row(param, ctx) -> str:
    if param.param_type_name == "argument":  # as the usage line names it
        names = f"`{param.metavar or param.name.upper()}`"
    else:
        names = ", ".join(f"`{name}`" for name in param.opts + param.secondary_opts)
    if hasattr(param, "display_type"):  # typer's parameters
        kind = param.display_type(ctx)
    else:
        kind = param.make_metavar(ctx) if param.param_type_name != "option" or not param.is_flag else "flag"
    if param.required:
        default = "required"
    elif param.default is None or param.default == ():
        default = ""
    else:
        default = f"`{param.default}`"
    return f"| {names} | `{kind}` | {default} | {_cell(param.help or '')} |"


def _help_paragraphs(help_text: str) -> List[str]:
    """The command's help text as Markdown paragraphs (click's \\b and \\f markers honoured)."""
    help_text = help_text.split("\f")[0]
    return [_inline(p.replace("\b", "")) for p in help_text.split("\n\n") if p.strip()]


def cli_markdown() -> str:
    from spacy_depner.cli.app import app

    root = typer.main.get_command(app)
    root_ctx = root.context_class(root, info_name=PROGRAM)
    lines = [
        "# Command line",
        "",
        '!!! note "Generated"',
        f"    This page is generated at build time from the help of `{PROGRAM}` itself "
        "(`docs/hooks/cli_page.py`): do not edit it by hand. "
        f"`{PROGRAM} COMMAND --help` prints the same.",
        "",
        f"`{PROGRAM} --help`: {_cell(root.help or '')}",
        "",
    ]
    commands = list(_commands(root, root_ctx))
    lines += ["| command | what it does |", "|---|---|"]
    for command, ctx in commands:
        path = ctx.command_path.removeprefix(PROGRAM).strip()
        lines.append(f"| [`{path}`](#{path.replace(' ', '-')}) | {_cell(command.get_short_help_str(limit=200))} |")
    for command, ctx in commands:
        path = ctx.command_path.removeprefix(PROGRAM).strip()
        lines += [
            "",
            f"## {path} {{#{path.replace(' ', '-')}}}",
            "",
            "```text",
            command.get_usage(ctx).strip(),
            "```",
            "",
        ]
        lines += [p + "\n" for p in _help_paragraphs(command.help or "")]
        params = [p for p in command.get_params(ctx) if not p.hidden and p.name != "help"]
        if params:
            lines += ["| argument / option | type | default | help |", "|---|---|---|---|"]
            lines += [_param_row(p, ctx) for p in params]
    return "\n".join(lines) + "\n"
