"""The whole `spacy project run all` workflow on a tiny corpus laid out like the
real data directory, with a few training steps and two seeds: every seed's
pipelines in their folder, trained with their seed, every table of the
report filled with mean ± sd over the two seeds, and no network needed.
The training split is jackknifed in two folds and one model (dgm+dep) is
trained on those trees too, as dgm+dep@jackknife. The shared tok2vec is
pretrained for one epoch and every entity model (not the parser) starts
from those weights."""

import json
import os
from pathlib import Path

import pytest
import spacy
from corpus_copies import TESTS, replicate_conllu, run_workflow, write_ewt
from spacy.util import load_config

SM = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"
# the pretrained arms read the real en_core_web_sm; where the data folder lacks it, they are left out (said at the end)
ARMS = (
    {"ner@pretrained", "dgm+dep@pretrained", "dgm+dep@pretrained-tok2vec"} if (SM / "config.cfg").is_file() else set()
)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    write_ewt(data, {"train": 16, "dev": 3, "test": 3})
    # the training trees as 16 documents (the same sentence ids), so that each jackknife fold has documents and
    # each fold's parser sees a label 30 times (spaCy's parser keeps such labels only; with none it finds no gold move)
    (data / "ud_ewt" / "r2.9" / "en_ewt-ud-train.conllu").write_text(
        replicate_conllu((TESTS / "data" / "tiny.conllu").read_text(), 16)
    )
    if ARMS:
        (data / "models").mkdir()
        (data / "models" / SM.name).symlink_to(SM)  # the workflow's default pretrained_pipeline
    return data


OWN = {
    "chain_crf",
    "chain_crf+dep",
    "perceptron",
    "perceptron+dep",
    "semi_crf",
    "semi_crf+dep",
    "dgm_s",
    "dgm_s+dep",
    "dgm",
    "dgm+dep",
    "ner",
}


@pytest.mark.slow
def test_project_run_all_fills_every_table(data_dir, tmp_path):
    project, done = run_workflow(
        tmp_path,
        "all",
        data_dir,
        "--vars.steps",
        "4",
        "--vars.parser_steps",
        "4",
        "--vars.bootstrap_samples",
        "50",
        "--vars.speed_sample",
        "20",
        "--vars.seeds",
        "0,1",
        "--vars.jackknife_folds",
        "2",
        "--vars.jackknife_models",
        "dgm+dep",
        "--vars.models",
        ",".join(sorted(OWN | ARMS)),
        "--vars.pretrain_epochs",
        "1",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    names = OWN | ARMS
    twin = "dgm+dep@jackknife"
    trained = project / "training" / "study"
    jackknifed = trained / "jackknife" / "train.jackknife.conllu"
    pretrained = json.loads((project / "training" / "pretrain" / "pretrain.json").read_text())
    assert (pretrained["epochs"], pretrained["sentences"], pretrained["weights"]) == (1, 48, "tok2vec.bin")
    weights_file = "training/pretrain/tok2vec.bin"
    assert json.loads((trained / "jackknife" / "jackknife.json").read_text())["folds"] == 2
    for seed in (0, 1):
        assert {p.name for p in (trained / f"seed_{seed}").iterdir()} == names | {twin, "parser", "logs"}
        assert {p.name for p in (trained / f"seed_{seed}" / "logs").iterdir()} == {
            f"{n}.log" for n in names | {twin, "parser"}
        }
        config = load_config(trained / f"seed_{seed}" / "dgm" / "model-best" / "config.cfg", interpolate=True)
        assert config["training"]["seed"] == seed
        assert config["paths"]["init_tok2vec"] == weights_file and config["pretraining"]["component"] == "tok2vec"
        parser = load_config(trained / f"seed_{seed}" / "parser" / "model-best" / "config.cfg", interpolate=True)
        assert parser["paths"]["init_tok2vec"] is None
        configs = {
            name: load_config(trained / f"seed_{seed}" / name / "model-best" / "config.cfg", interpolate=True)
            for name in ("dgm+dep", twin)
        }
        assert configs[twin]["paths"]["train_conllu"] == "training/study/jackknife/train.jackknife.conllu"
        assert configs["dgm+dep"]["paths"]["train_conllu"] == str(
            data_dir / "ud_ewt" / "r2.9" / "en_ewt-ud-train.conllu"
        )
        assert configs[twin]["components"]["dgm_ner"] == configs["dgm+dep"]["components"]["dgm_ner"]
    # the seed changes the initial weights of dgm_ner (its tok2vec starts from the pretrained ones), so the trained ones differ
    weights = [
        spacy.load(trained / f"seed_{seed}" / "dgm" / "model-best").get_pipe("dgm_ner").model.to_bytes()
        for seed in (0, 1)
    ]
    assert weights[0] != weights[1]
    seconds = json.loads((trained / "train_seconds.json").read_text())
    assert seconds["init_tok2vec"] == weights_file
    assert seconds["seeds"] == [0, 1] and set(seconds["seconds"]["1"]) == names | {twin, "parser"}
    assert seconds["jackknife"] == "training/study/jackknife/train.jackknife.conllu" and jackknifed.exists()
    report = (project / "metrics" / "study" / "report.md").read_text()
    for heading in (
        "(a) P/R/F",
        "(b) Coverage",
        "(c) Candidate spans",
        "(d) Speed",
        "(e) Significance",
        "(f) Training on predicted trees",
    ):
        assert heading in report
    assert "over 2 training seeds (0, 1)" in report and "the pipelines of seed 0 only" in report
    table_2 = report.split("Table 2")[1].split("###")[0]
    rows = [line for line in table_2.splitlines() if line.startswith("| given") or line.startswith("| predicted")]
    assert len(rows) == 10 and all(line.count(" ± ") == 6 for line in rows)  # P/R/F on dev and test
    section_f = report.split("(f) Training on predicted trees")[1]
    assert "2 folds of documents" in section_f
    rows = [line for line in section_f.splitlines() if line.startswith("| dgm+dep |")]
    assert [line.split(" | ")[1:3] for line in rows] == [
        ["gold trees", "given"],
        ["jackknifed trees", "given"],
        ["gold trees", "predicted"],
        ["jackknifed trees", "predicted"],
    ]
    assert all(line.count(" ± ") == 6 for line in rows)
    assert [line.split(" | ")[1] for line in section_f.splitlines() if line.startswith(f"| {twin} vs dgm+dep")] == [
        "given",
        "predicted",
    ]
    assert (project / "metrics" / "study" / "speed.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    evaluation = json.loads((project / "metrics" / "study" / "evaluation.json").read_text())
    assert evaluation["seeds"] == [0, 1] and set(evaluation["models"]) == names | {twin}
    assert set(evaluation["parser"]) == {"0", "1"} and set(evaluation["parser"]["1"]) == {"dev", "test"}
    for name, by_seed in evaluation["models"].items():
        assert set(by_seed) == {"0", "1"}
        for scores in by_seed.values():
            kinds = (
                {"dev_pretrained", "test_pretrained"}
                if name in ARMS
                else {"dev_given", "dev_predicted", "test_given", "test_predicted"}
            )
            assert set(scores) == kinds
            assert all(0.0 <= s["f"] <= 1.0 for s in scores.values())  # fractions
    # models that read no tree score the same with the parser's trees as with the gold ones
    for name in ("chain_crf", "perceptron", "semi_crf", "ner"):
        for seed in ("0", "1"):
            scores = evaluation["models"][name][seed]
            for split in ("dev", "test"):
                assert scores[f"{split}_given"]["sentence_counts"] == scores[f"{split}_predicted"]["sentence_counts"]
    speed = json.loads((project / "metrics" / "study" / "speed.json").read_text())
    assert speed["seed"] == 0 and set(speed["models"]) == names  # the twin is the same model: not timed
    coverage = json.loads((project / "metrics" / "study" / "coverage.json").read_text())
    assert coverage["dev"]["gold"]["sentences"] == 9
    assert coverage["dev"]["gold"]["coverage"]["semi_markov_L8"] == 100.0
    assert set(coverage["dev"]["predicted"]) == {"0", "1"}
    assert coverage["dev"]["predicted"]["1"]["coverage"]["semi_markov_L8"] == 100.0  # the lattice reads no tree
    if not ARMS:
        pytest.skip(f"the pretrained arms were not run: no en_core_web_sm at {SM} (set DEPNER_DATA)")
    assert coverage["dev"]["pretrained"]["coverage"]["semi_markov_L8"] == 100.0
    assert set(evaluation["pretrained_ner"]) >= {"dev", "test", "mapping"}
    opening = report.split("## Where users have it")[1].split("## (a)")[0]
    assert "| dgm+dep@pretrained vs ner@pretrained | pretrained parser |" in opening
    for name in ARMS:
        assert f"| {name} |" in opening
        config = load_config(trained / "seed_0" / name / "model-best" / "config.cfg", interpolate=True)
        assert (
            config["paths"]["pretrained"] == str(data_dir / "models" / SM.name)
            and config["nlp"]["pipeline"][0] == "parser"
        )
        assert config["training"]["frozen_components"] == ["parser"] == config["training"]["annotating_components"]
