"""The `spacy project run nested` workflow on tiny GENIA and GUM files laid out
like the real data directory (GENIA as the 3.02 release tarball only, which the
workflow's first step converts to corpus/genia), with a few training steps
and one seed, 1 (not the default first seed: every step finds it):
every table of metrics/nested/report.md is filled, from files the workflow
wrote, and nothing is written into the data directory."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_copies import TESTS, run_workflow, write_genia, write_gum

SM = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"
HAS_SM = (SM / "config.cfg").is_file()  # without it, the models on its parser's trees are left out (said at the end)
PRETRAINED_ARMS = {
    "gum_quadratic_dgm@pretrained",
    "gum_quadratic_dgm+dep@pretrained",
    "gum_hypergraph_heads+dep@pretrained",
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    copies = {"train": 6, "dev": 2, "test": 2}
    split = write_genia(data, copies)
    write_gum(data, copies)
    if HAS_SM:
        (data / "models").mkdir()
        (data / "models" / SM.name).symlink_to(SM)  # the workflow's default pretrained_pipeline
    return data, split


@pytest.mark.slow
@pytest.mark.extra("project")  # the GENIA configs' BiLSTM encoder needs torch
def test_project_run_nested_fills_every_table(data_dir, tmp_path):
    data, split = data_dir
    before = sorted(data.rglob("*"))
    project, done = run_workflow(
        tmp_path,
        "nested",
        data,
        "--vars.nested_steps",
        "4",
        "--vars.gum_parser_steps",
        "4",
        "--vars.nested_max_n",
        "20",
        "--vars.types_tokens",
        "2000",
        "--vars.genia_split",
        split,
        "--vars.seeds",
        "1",
        "--vars.penalty_step",
        "0.1",
        *([] if HAS_SM else ["--vars.nested_models", "all"]),
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(data.rglob("*")) == before
    fixture = (TESTS / "data" / "genia_3.02_fixture.jsonl").read_text(encoding="utf8").splitlines()
    train = (project / "corpus" / "genia" / "train.jsonl").read_text(encoding="utf8").splitlines()
    assert split == "30,10,10" and len(train) == 30
    assert [json.loads(line)["tokens"] for line in train[:5]] == [json.loads(line)["tokens"] for line in fixture]
    genia_coverage = json.loads((project / "metrics" / "nested" / "coverage_genia_test.json").read_text())
    assert genia_coverage["mentions"] == 2 * 13  # the 13 mentions of the fixture's 5 sentences, twice
    metrics = project / "metrics" / "nested"
    evaluated = json.loads((metrics / "evaluation.json").read_text())
    assert evaluated["seeds"] == [1] and all(set(by_seed) == {"1"} for by_seed in evaluated["models"].values())
    evaluation = {key: by_seed["1"] for key, by_seed in evaluated["models"].items()}
    expected = {
        f"{c}_{m}"
        for c in ("genia", "gum")
        for m in ("semi_markov", "cyk", "quadratic", "spancat", "hypergraph", "hypergraph@tuned")
    }
    arms = PRETRAINED_ARMS | {"gum_hypergraph_heads+dep@pretrained@tuned"} if HAS_SM else set()
    assert set(evaluation) == expected | arms | {
        "gum_quadratic_dgm",
        "gum_quadratic_dgm@predicted",
        "gum_hypergraph_heads",
        "gum_hypergraph_heads@tuned",
    }
    assert 0.0 <= evaluation["gum_hypergraph_heads"]["head_f"] <= evaluation["gum_hypergraph_heads"]["f"]
    assert "head_f" not in evaluation["gum_hypergraph"]
    tuned = json.loads((project / "training" / "nested" / "tuned_penalties.json").read_text())
    assert set(tuned) == {"genia_hypergraph", "gum_hypergraph", "gum_hypergraph_heads"} | (
        {"gum_hypergraph_heads+dep@pretrained"} if HAS_SM else set()
    )
    assert all(
        set(by_seed) == {"1"} and by_seed["1"]["tuned_f"] >= by_seed["1"]["before_f"] for by_seed in tuned.values()
    )
    assert (project / "training" / "nested" / "seed_1" / "gum_hypergraph" / "model-tuned" / "config.cfg").is_file()
    assert not (project / "training" / "nested" / "seed_0").exists()
    for result in evaluation.values():
        assert 0.0 <= result["f"] <= 1.0 and result["words_per_second"] > 0
    assert evaluation["gum_quadratic_dgm"]["trees"] == "given"
    predicted = evaluation["gum_quadratic_dgm@predicted"]
    assert predicted["trees"] == "predicted" and 0.0 <= predicted["parser"]["uas"] <= 1.0
    coverage = json.loads((metrics / "coverage_gum_test.json").read_text())
    fixture = json.loads(
        subprocess.run(
            [sys.executable, "-m", "spacy_depner", "coverage", str(TESTS / "data" / "nested_gum.conllu")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert coverage["coverage"] == fixture["coverage"] and coverage["mentions"] == 2 * fixture["mentions"]
    report = (metrics / "report.md").read_text()
    assert "One training seed (1)." in report and "words/s (seed 1)" in report
    on_dev = json.loads((metrics / "evaluation_dev.json").read_text())
    assert on_dev["split"] == "dev" and set(on_dev["models"]) == set(evaluation)
    results = report.split("P/R/F on test", 1)[1]
    assert "| dev F | test P | test R | test F |" in results
    for heading in ("Table 5", "P/R/F on test", "DGM valid spans of the trees", "Nested MAP decoding", "Table 3"):
        assert heading in report
    assert "non-commercial" in report
    assert (metrics / "decode.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if not HAS_SM:
        pytest.skip(
            f"the models on a pretrained parser's trees were not run: no en_core_web_sm at {SM} (set DEPNER_DATA)"
        )
    for name in PRETRAINED_ARMS:
        assert evaluation[name]["trees"] == "the pipeline's parser"
    assert "the pretrained pipeline's parser" in report.split("DGM valid spans of the trees")[1]
