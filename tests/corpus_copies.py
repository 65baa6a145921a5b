"""Copies of the test fixtures laid out as a larger corpus, and of the
project's files in a temporary project, for the workflow tests."""
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

TESTS = Path(__file__).parent
ROOT = TESTS.parent


def replicate(text: str, copies: int) -> str:
    """The sentences of a CoNLL-U or IOB2 text ``copies`` times, with new sent_ids."""
    blocks = [b for b in text.strip().split("\n\n") if b.strip()]
    out = []
    for k in range(copies):
        for block in blocks:
            out.append(re.sub(r"# sent_id = (\S+)", lambda m: f"# sent_id = {m.group(1)}-{k}", block))
    return "\n\n".join(out) + "\n\n"


def replicate_conllu(text: str, copies: int) -> str:
    """The documents of a CoNLL-U text ``copies`` times, with new doc and sent ids."""
    out = []
    for k in range(copies):
        out.append(re.sub(r"# (newdoc id|sent_id) = (\S+)", lambda m: f"# {m.group(1)} = {m.group(2)}-{k}", text.strip()))
    return "\n\n".join(out) + "\n\n"


def write_ewt(data: Path, copies: Dict[str, int]) -> None:
    """tests/data/tiny.conllu and tiny.iob2, ``copies[split]`` times, as the
    EWT + UNER files of each split under DATA (ud_ewt/r2.9/, uner_ewt/)."""
    conllu = (TESTS / "data" / "tiny.conllu").read_text()
    iob2 = (TESTS / "data" / "tiny.iob2").read_text()
    (data / "ud_ewt" / "r2.9").mkdir(parents=True)
    (data / "uner_ewt").mkdir()
    for split, n in copies.items():
        (data / "ud_ewt" / "r2.9" / f"en_ewt-ud-{split}.conllu").write_text(replicate(conllu, n))
        name = "en_ewt-ud-train.legacy-2022-12.iob2" if split == "train" else f"en_ewt-ud-{split}.iob2"
        (data / "uner_ewt" / name).write_text(replicate(iob2, n))


def write_gum(data: Path, copies: Dict[str, int]) -> None:
    """tests/data/nested_gum.conllu, ``copies[split]`` times, as DATA/ud_gum/en_gum-ud-SPLIT.conllu."""
    gum = (TESTS / "data" / "nested_gum.conllu").read_text()
    (data / "ud_gum").mkdir()
    for split, n in copies.items():
        (data / "ud_gum" / f"en_gum-ud-{split}.conllu").write_text(replicate_conllu(gum, n))


def write_genia(data: Path, copies: Dict[str, int]) -> None:
    """tests/data/nested_genia.jsonl, ``copies[split]`` times, as DATA/genia/SPLIT.jsonl."""
    genia = (TESTS / "data" / "nested_genia.jsonl").read_text().strip() + "\n"
    (data / "genia").mkdir()
    for split, n in copies.items():
        (data / "genia" / f"{split}.jsonl").write_text(genia * n)


def run_workflow(tmp_path: Path, workflow: str, data: Path, *overrides: str):
    """``spacy project run WORKFLOW`` in a copy of the project (project.yml,
    configs/, experiments/) at TMP_PATH/project, on the data directory DATA,
    with the ``--vars.*`` OVERRIDES: the project folder and the finished process."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copytree(ROOT / "experiments", project / "experiments", ignore=shutil.ignore_patterns("__pycache__"))
    command = [sys.executable, "-m", "spacy", "project", "run", workflow, str(project), "--vars.data", str(data), *overrides]
    return project, subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=900)
