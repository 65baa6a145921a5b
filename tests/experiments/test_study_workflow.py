"""The whole `spacy project run all` workflow on a tiny corpus laid out like the
real data directory, with a few training steps: every table of the report is
filled, and no network is needed."""
import json

import pytest

from corpus_copies import run_workflow, write_ewt


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    write_ewt(data, {"train": 8, "dev": 3, "test": 3})
    return data


@pytest.mark.slow
def test_project_run_all_fills_every_table(data_dir, tmp_path):
    project, done = run_workflow(tmp_path, "all", data_dir, "--vars.steps", "4", "--vars.parser_steps", "4",
                                 "--vars.bootstrap_samples", "50", "--vars.speed_sample", "20")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = (project / "metrics" / "study" / "report.md").read_text()
    for heading in ("(a) P/R/F", "(b) Coverage", "(c) Candidate spans", "(d) Speed", "(e) Significance"):
        assert heading in report
    assert (project / "metrics" / "study" / "speed.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    evaluation = json.loads((project / "metrics" / "study" / "evaluation.json").read_text())
    assert set(evaluation["models"]) == {"chain_crf", "chain_crf+dep", "perceptron", "perceptron+dep", "semi_crf",
                                         "semi_crf+dep", "dgm_s", "dgm_s+dep", "dgm", "dgm+dep", "ner"}
    for scores in evaluation["models"].values():
        assert set(scores) == {"dev_given", "dev_predicted", "test_given", "test_predicted"}
        assert all(0.0 <= s["f"] <= 1.0 for s in scores.values())  # fractions
    # models that read no tree score the same with the parser's trees as with the gold ones
    for name in ("chain_crf", "perceptron", "semi_crf", "ner"):
        for split in ("dev", "test"):
            scores = evaluation["models"][name]
            assert scores[f"{split}_given"]["sentence_counts"] == scores[f"{split}_predicted"]["sentence_counts"]
    coverage = json.loads((project / "metrics" / "study" / "coverage.json").read_text())
    assert coverage["dev"]["gold"]["sentences"] == 9
    assert coverage["dev"]["gold"]["coverage"]["semi_markov_L8"] == 100.0
