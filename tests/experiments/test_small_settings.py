"""The small settings of every workflow, as docs/studies/workflows.md gives
them, reach every step: a dry run of each (spaCy's ``project run --dry``)
names every command, and each command that trains, reads the training split
or samples uses the small value, not the workflow's default."""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import srsly

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "studies" / "workflows.md"
# options whose value a small setting must reach, by the var that gives it
BOUNDED = {
    "--steps": (
        "steps",
        "parser_steps",
        "nested_steps",
        "two_stage_steps",
        "two_stage_genia_steps",
        "transformer_steps",
        "partial_steps",
        "active_learning_steps",
        "active_learning_genia_steps",
        "first_stage_fold_steps",
    ),
    "--parser-steps": ("parser_steps", "gum_parser_steps"),
    "--limit": ("limit",),
    "--folds": ("jackknife_folds", "two_stage_folds", "two_stage_genia_folds", "first_stage_folds"),
    "--step": ("penalty_step", "active_learning_genia_round"),
}
READS_TRAINING_SPLIT = ("jackknife-trees", "study train", "nested-study train", "two-stage crossval", "two-stage train")


def small_settings():
    """(workflow, its vars) of each command in a "Small settings" section of the page."""
    text = PAGE.read_text(encoding="utf8")
    found = []
    for block in re.findall(r"### Small settings\n\n```bash\n(.*?)```", text, re.S):
        words = shlex.split(block.replace("\\\n", " "))
        assert words[:5] == ["python", "-m", "spacy", "project", "run"], block
        found.append((words[5], dict(zip(words[7::2], words[8::2]))))
    return found


def test_every_workflow_has_small_settings_and_a_timing():
    project = srsly.read_yaml(ROOT / "project.yml")
    assert sorted(workflow for workflow, _ in small_settings()) == sorted(project["workflows"])
    sections = re.split(r"\n### Small settings\n", PAGE.read_text(encoding="utf8"))[1:]
    for section in sections:
        timing = re.search(r"^Timing: (.+)$", section, re.M)
        assert timing and re.search(r"\d+ min", timing.group(1)) and "quiet" in timing.group(1), section[:300]


def dry_run(workflow: str, settings: dict, folder: Path):
    shutil.copy(ROOT / "project.yml", folder / "project.yml")
    args = [a for key, value in settings.items() for a in (key, value)]
    done = subprocess.run(
        [sys.executable, "-m", "spacy", "project", "run", workflow, str(folder), "--dry", *args],
        capture_output=True,
        text=True,
        cwd=folder,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [
        shlex.split(line.split("Running command: ", 1)[1])
        for line in done.stdout.splitlines()
        if "Running command: " in line
    ]


@pytest.mark.slow
@pytest.mark.parametrize("workflow,settings", small_settings(), ids=[w for w, _ in small_settings()])
def test_small_settings_reach_every_step(workflow, settings, tmp_path):
    project = srsly.read_yaml(ROOT / "project.yml")
    names = {command["name"] for command in project["commands"]}
    commands = dry_run(workflow, settings, tmp_path)
    assert len(commands) >= len(project["workflows"][workflow]) and all(
        step in names for step in project["workflows"][workflow]
    )
    small = {key.removeprefix("--vars."): value for key, value in settings.items()}
    for words in commands:
        line = " ".join(words)
        for option, variables in BOUNDED.items():
            if option in words:
                value = words[words.index(option) + 1]
                given = [small[v] for v in variables if v in small]
                assert given and value in given, (option, value, line)
        if "--seeds" in words and "seeds" in small:
            assert words[words.index("--seeds") + 1] == small["seeds"], line
        if any(f"experiments {name}" in line for name in READS_TRAINING_SPLIT):
            assert "--limit" in words, line  # the training split is cut to the small limit
