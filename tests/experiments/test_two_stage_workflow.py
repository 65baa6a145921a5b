"""The `spacy project run two_stage` workflow on tiny EWT + UNER, GUM and
GENIA files laid out like the real data directory, with a few training steps and
two seeds: each seed's cross-validated first-stage entities and second
stage in its folder, the evaluation per seed and the report over the seeds."""

import json

import pytest
import spacy
from corpus_copies import run_workflow, write_ewt, write_genia_abstracts, write_gum
from spacy.util import load_config


@pytest.mark.slow
def test_project_run_two_stage_fills_the_report(tmp_path):
    data = tmp_path / "data"
    copies = {"train": 6, "dev": 2, "test": 2}
    write_ewt(data, copies)
    write_gum(data, copies)
    abstracts = write_genia_abstracts(data, copies)
    project, done = run_workflow(
        tmp_path,
        "two_stage",
        data,
        *("--vars.two_stage_folds", "2", "--vars.two_stage_steps", "4", "--vars.seeds", "0,1"),
        # one GENIA step: first-stage errors for the consistency section to count
        *("--vars.two_stage_genia_folds", "3", "--vars.two_stage_genia_steps", "1"),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    folds = {"two_stage": 2, "two_stage_gum": 2, "two_stage_genia": 3}
    for folder, documents in (("two_stage", 6), ("two_stage_gum", 12), ("two_stage_genia", 6 * abstracts)):
        trained = project / "training" / folder
        assert json.loads((trained / "crossval_seconds.json").read_text())["seeds"] == [0, 1]
        for seed in (0, 1):
            records = [
                json.loads(line)
                for line in (trained / f"seed_{seed}" / "first_stage_train.jsonl").read_text().splitlines()
            ]
            assert [r["document"] for r in records] == list(range(documents))
            assert {p.name for p in (trained / f"seed_{seed}" / "logs").iterdir()} == {
                "first.log",
                "second.log",
                *(f"fold{f}.log" for f in range(folds[folder])),
                *(["second_soft.log"] if folder == "two_stage_genia" else []),
            }
            pipeline = spacy.load(trained / f"seed_{seed}" / "pipeline")
            assert pipeline.pipe_names[-2:] == ["first_stage_spans", "second_stage"]
            assert (
                load_config(trained / f"seed_{seed}" / "second" / "model-best" / "config.cfg", interpolate=True)[
                    "training"
                ]["seed"]
                == seed
            )
        assert set(json.loads((trained / "second_seconds.json").read_text())["seconds"]) == {"0", "1"}
    result = json.loads((project / "metrics" / "two_stage" / "evaluation.json").read_text())
    assert result["documents"] == 2 and result["seeds"] == [0, 1]
    assert (
        set(result["first_stage"]) == set(result["two_stage"]) == set(result["approximate_randomization"]) == {"0", "1"}
    )
    assert all(0 < test["p_value"] <= 1 for test in result["approximate_randomization"].values())
    assert result["speed"]["seed"] == 0 and result["speed"]["time_ratio"] > 1.0
    report = (project / "metrics" / "two_stage" / "report.md").read_text()
    assert "approximate randomization" in report and "over 2 training seeds (0, 1)" in report
    for corpus, documents in (("ewt", 2), ("gum", 4)):
        for split, counts in (("test", "training"), ("test", "training + test"), ("dev", "training")):
            row = next(
                line
                for line in report.splitlines()
                if line.startswith(f"| {corpus} | {split} | {documents} | {counts} | hard | 0, 1 |")
            )
            assert row.count(" ± ") == 7  # P/R/F of both stages and their difference
    genia = (project / "metrics" / "two_stage_genia" / "report.md").read_text()
    assert genia.startswith("# Two-stage non-local consistency (Krishnan & Manning 2006): GENIA abstracts")
    for split in ("test", "dev"):
        for votes in ("hard", "soft"):
            start = f"| genia | {split} | {2 * abstracts} | training | {votes} | 0, 1 |"
            row = next(line for line in genia.splitlines() if line.startswith(start))
            assert row.count(" ± ") == 7
    records = (project / "training" / "two_stage_genia" / "seed_0" / "first_stage_train.jsonl").read_text()
    assert all(json.loads(line)["votes"] for line in records.splitlines())  # chain_ner: soft votes in every record
    soft = spacy.load(project / "training" / "two_stage_genia" / "seed_0" / "pipeline_second_soft")
    assert soft.get_pipe_config("first_stage_spans")["votes_from"] == "chain_ner"
    assert "| genia | test | 0, 1 |" in genia  # the consistency section
