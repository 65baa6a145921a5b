"""The `spacy project run two_stage` workflow on tiny EWT + UNER and GUM
files laid out like the real data directory, with a few training steps: the
cross-validated first-stage entities, the evaluation and the report."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from corpus_copies import replicate, replicate_conllu

HERE = Path(__file__).parents[1]
ROOT = HERE.parent


@pytest.mark.slow
def test_project_run_two_stage_fills_the_report(tmp_path):
    data = tmp_path / "data"
    (data / "ud_ewt" / "r2.9").mkdir(parents=True)
    (data / "uner_ewt").mkdir()
    conllu = (HERE / "data" / "tiny.conllu").read_text()
    iob2 = (HERE / "data" / "tiny.iob2").read_text()
    (data / "ud_gum").mkdir()
    gum = (HERE / "data" / "nested_gum.conllu").read_text()
    for split, copies in (("train", 6), ("dev", 2), ("test", 2)):
        (data / "ud_ewt" / "r2.9" / f"en_ewt-ud-{split}.conllu").write_text(replicate(conllu, copies))
        name = "en_ewt-ud-train.legacy-2022-12.iob2" if split == "train" else f"en_ewt-ud-{split}.iob2"
        (data / "uner_ewt" / name).write_text(replicate(iob2, copies))
        (data / "ud_gum" / f"en_gum-ud-{split}.conllu").write_text(replicate_conllu(gum, copies))
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "project.yml", project)
    shutil.copytree(ROOT / "configs", project / "configs")
    shutil.copytree(ROOT / "experiments", project / "experiments", ignore=shutil.ignore_patterns("__pycache__"))
    command = [sys.executable, "-m", "spacy", "project", "run", "two_stage", str(project), "--vars.data", str(data),
               "--vars.two_stage_folds", "3", "--vars.two_stage_steps", "4"]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    records = [json.loads(line) for line in (project / "training" / "two_stage" / "first_stage_train.jsonl").read_text().splitlines()]
    assert [r["document"] for r in records] == list(range(6))
    result = json.loads((project / "metrics" / "two_stage" / "evaluation.json").read_text())
    assert result["documents"] == 2 and 0 < result["approximate_randomization"]["p_value"] <= 1
    assert result["time_ratio"] > 1.0
    report = (project / "metrics" / "two_stage" / "report.md").read_text()
    assert "approximate randomization" in report
    for corpus, documents in (("ewt", 2), ("gum", 4)):
        for split, counts in (("test", "training"), ("test", "training + test"), ("dev", "training")):
            assert f"| {corpus} | {split} | {documents} | {counts} |" in report
    gum_records = [json.loads(line) for line in (project / "training" / "two_stage_gum" / "first_stage_train.jsonl").read_text().splitlines()]
    assert [r["document"] for r in gum_records] == list(range(12))
    pipeline = spacy.load(project / "training" / "two_stage" / "pipeline")
    assert pipeline.pipe_names[-2:] == ["first_stage_spans", "second_stage"]
