"""Every output folder of project.yml's commands and of the README's commands
exists before a command writes there: in a fresh clone only the folders that
``directories`` lists are made (by ``spacy project run``, top level only); the
project's own writers (``python -m experiments``, ``python -m spacy_depner``)
make their folders (tests/test_atomic_files.py), as ``spacy train`` does;
``spacy evaluate --output`` does not, so a ``mkdir -p`` comes first."""

import re
import shlex
from pathlib import Path

import srsly

ROOT = Path(__file__).resolve().parents[1]
# commands that make their output's folders: the project's writers, and `spacy train` (mkdir(parents=True))
MAKERS = (("-m", "experiments"), ("-m", "spacy_depner"), ("spacy", "train"))


def unmade_outputs(lines):
    """The lines of ``lines`` with an ``--output`` whose command does not make
    its folder (not one of MAKERS) and whose folder no earlier ``mkdir -p`` makes."""
    made, missing = set(), []
    for line in lines:
        try:
            words = shlex.split(line, comments=True)
        except ValueError:  # a quotation that goes on over lines (python -c "...")
            words = line.split("#", 1)[0].split()
        if words[:2] == ["mkdir", "-p"]:
            made.update(Path(w) for w in words[2:])
        if "--output" not in words or any(tuple(words[i : i + 2]) in MAKERS for i in range(len(words))):
            continue
        folder = Path(words[words.index("--output") + 1]).parent
        if folder != Path(".") and folder not in made:
            missing.append(line)
    return missing


def test_project_commands_write_into_made_folders():
    project = srsly.read_yaml(ROOT / "project.yml")
    directories = set(project["directories"])
    for command in project["commands"]:
        assert not unmade_outputs(command["script"]), command["name"]
        for output in command.get("outputs", []):
            top = Path(output).parts[0]
            assert top in directories or top.startswith("${"), (command["name"], output)


def test_readme_commands_write_into_made_folders():
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf8"), re.S)
    assert any("spacy evaluate" in block for block in blocks)
    for block in blocks:
        assert not unmade_outputs(block.replace("\\\n", " ").splitlines())
