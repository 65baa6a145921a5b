"""The `spacy project run two_stage` workflow on tiny EWT + UNER and GUM
files laid out like the real data directory, with a few training steps: the
cross-validated first-stage entities, the evaluation and the report."""
import json

import pytest
import spacy

from corpus_copies import run_workflow, write_ewt, write_gum


@pytest.mark.slow
def test_project_run_two_stage_fills_the_report(tmp_path):
    data = tmp_path / "data"
    copies = {"train": 6, "dev": 2, "test": 2}
    write_ewt(data, copies)
    write_gum(data, copies)
    project, done = run_workflow(tmp_path, "two_stage", data, "--vars.two_stage_folds", "3", "--vars.two_stage_steps", "4")
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
