"""The command line speaks one language: one-line summaries, PIPELINE for
every trained pipeline (a directory or a package), DATA told by suffix,
--iob2 for UNER entities, names that cannot be confused."""

import typer

from spacy_depner.cli.app import app

COMMANDS = typer.main.get_command(app).commands
PIPELINE_COMMANDS = {
    "apply",
    "apply-ray",
    "rank",
    "serve",
    "evaluate",
    "evaluate-nested",
    "find-threshold",
    "find-penalty",
    "calibrate",
    "calibration-report",
}


def arguments(command):
    return {param.name: param for param in command.params if param.param_type_name == "argument"}


def test_every_summary_fits_one_line_of_the_command_list():
    assert len(COMMANDS) == 17
    for name, command in COMMANDS.items():
        summary = command.get_short_help_str(limit=10_000)
        assert "\n" not in summary and 10 <= len(summary) <= 58, (name, summary)
        assert summary == command.help.splitlines()[0], name  # the docstring's first line, not a cut


def test_every_trained_pipeline_is_a_pipeline_argument_taking_a_name_or_a_path():
    for name in PIPELINE_COMMANDS:
        command = COMMANDS[name]
        first = command.params[0]
        assert first.param_type_name == "argument" and first.metavar == "PIPELINE", name
        assert first.bare_type() == "str", name  # a package name is no path
        parser = [p for p in command.params if p.name == "parser"]
        assert all(p.bare_type() == "str" for p in parser), name
    others = set(COMMANDS) - PIPELINE_COMMANDS
    assert others == {
        "coverage",
        "convert",
        "pretrain-text",
        "package",
        "first-stage-folds",
        "import-annotations",
        "compile",
    }
    assert not any(p.metavar == "PIPELINE" for name in others for p in COMMANDS[name].params)


def test_data_files_are_positional_and_uner_entities_are_iob2():
    for name, command in COMMANDS.items():
        options = {opt for param in command.params for opt in param.opts if opt.startswith("--")}
        assert not options & {"--uner", "--jsonl", "--gum", "--conllu", "--dev"}, name
    for name in (
        "evaluate",
        "evaluate-nested",
        "coverage",
        "find-threshold",
        "find-penalty",
        "calibrate",
        "calibration-report",
    ):
        assert "data" in arguments(COMMANDS[name]), name


def test_names_cannot_be_confused():
    names = sorted(COMMANDS)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not (a.startswith(b) or b.startswith(a)) or "-" in a + b, (a, b)
            assert edit_distance(a, b) > 3, (a, b)


def edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (x != y))
    return row[-1]
