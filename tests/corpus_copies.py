"""Copies of the test fixtures laid out as a larger corpus, and of the
project's files in a temporary project, for the workflow tests."""

import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
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
        out.append(
            re.sub(r"# (newdoc id|sent_id) = (\S+)", lambda m: f"# {m.group(1)} = {m.group(2)}-{k}", text.strip())
        )
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


GENIA_FIXTURE_SENTENCES = 5  # in tests/data/genia_3.02_fixture.xml


def write_genia_tarball(path: Path, xml: bytes, member: str = "GENIA_term_3.02/GENIAcorpus3.02.xml") -> Path:
    """A gzipped tar laid out as GENIAcorpus3.02.tgz: a LICENSE, then the XML as MEMBER."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, data in (
            ("GENIA_term_3.02/LICENSE", b"GENIA Project License for Annotated Corpora\n"),
            (member, xml),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def write_genia(data: Path, copies: Dict[str, int]) -> str:
    """The articles of tests/data/genia_3.02_fixture.xml, ``copies[split]``
    times per split in the order given (new MEDLINE ids for every copy), as
    the release tarball DATA/genia/source/GENIAcorpus3.02.tgz; the split sizes
    that give those copies (``--vars.genia_split``), e.g. "30,10,10"."""
    xml = (TESTS / "data" / "genia_3.02_fixture.xml").read_text(encoding="utf8")
    head, articles, tail = xml.partition("<article>")[0], re.findall(r"<article>.*?</article>", xml, re.S), "\n</set>\n"
    total = sum(copies.values())
    body = "\n".join(
        re.sub(r"<bibliomisc>(.*?)</bibliomisc>", lambda m: f"<bibliomisc>{m.group(1)}-{k}</bibliomisc>", article)
        for k in range(total)
        for article in articles
    )
    write_genia_tarball(data / "genia" / "source" / "GENIAcorpus3.02.tgz", (head + body + tail).encode("utf8"))
    return ",".join(str(GENIA_FIXTURE_SENTENCES * n) for n in copies.values())


def write_genia_abstracts(data: Path, copies: Dict[str, int]) -> int:
    """The sentences of tests/data/genia_3.02_fixture.jsonl (two abstracts),
    ``copies[split]`` times per split with new doc_ids and sent_ids for every
    copy, as DATA/genia/SPLIT.jsonl (the prepared files of the data folder);
    the number of abstracts per copy."""
    records = [json.loads(line) for line in (TESTS / "data" / "genia_3.02_fixture.jsonl").read_text().splitlines()]
    (data / "genia").mkdir(parents=True, exist_ok=True)
    for split, n in copies.items():
        lines = [
            json.dumps({**r, "doc_id": f"{r['doc_id']}-{split}{k}", "sent_id": f"{r['sent_id']}-{split}{k}"})
            for k in range(n)
            for r in records
        ]
        (data / "genia" / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf8")
    return len({r["doc_id"] for r in records})


def run_workflow(tmp_path: Path, workflow: str, data: Path, *overrides: str):
    """``spacy project run WORKFLOW`` in a copy of the project (project.yml,
    configs/, experiments/) at TMP_PATH/project, on the data directory DATA,
    with the ``--vars.*`` OVERRIDES: the project folder and the finished process."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copytree(ROOT / "experiments", project / "experiments", ignore=shutil.ignore_patterns("__pycache__"))
    command = [
        sys.executable,
        "-m",
        "spacy",
        "project",
        "run",
        workflow,
        str(project),
        "--vars.data",
        str(data),
        *overrides,
    ]
    return project, subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=900)
