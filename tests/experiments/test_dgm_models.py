"""The DGM study's models and their twins trained on jackknifed trees,
without training: which models read trees (checked against the configs),
the twins' names and `spacy train` overrides, the commands `study train
--jackknife` builds, the twins `evaluate` finds, and the report's section
built from hand-made per-seed results."""

from pathlib import Path

import numpy as np
import pytest
from spacy.util import load_config
from test_seeds import prf, table_rows

from experiments.dgm import report as dgm_report
from experiments.dgm import study as dgm_study
from experiments.dgm.models import MODELS, TREE_READERS, TWINS, gold_trained, model_names, study_models, twin_names
from experiments.kit.seeds import seed_folder

ROOT = Path(__file__).parents[2]
HAND_LISTED_TREE_READERS = ["chain_crf+dep", "perceptron+dep", "semi_crf+dep", "dgm_s", "dgm_s+dep", "dgm", "dgm+dep"]


def test_tree_readers_are_the_dgm_lattices_and_the_dependency_features():
    assert TREE_READERS == HAND_LISTED_TREE_READERS


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_the_tree_reading_rule_matches_the_configs(model):
    """A model reads trees iff its suggester is built from arcs or it has
    dependency features on; the shared tok2vec embeds no tree attribute."""
    config = load_config(ROOT / "configs" / model.config)
    assert not {"DEP", "HEAD"} & set(config["components"]["tok2vec"]["model"]["embed"]["attrs"])
    component = config["components"][model.component]
    suggester = component.get("suggester", {}).get("@misc")
    from_arcs = suggester in ("spacy_depner.dgm_suggester.v1", "spacy_depner.dgm_s_suggester.v1")
    features = "--components.{}.model.dependency_features".format(model.component) in model.overrides()
    assert component["model"].get("dependency_features", False) is False  # on only by the study's override
    assert model.reads_trees == (from_arcs or features)


def test_twins_are_named_and_trained_on_the_jackknifed_file():
    path = Path("jk/train.jackknife.conllu")
    models = study_models(twin_names("all"))
    names = [m.name for m in models]
    assert names[: len(MODELS)] == [m.name for m in MODELS]
    assert names[len(MODELS) :] == [f"{n}@jackknife" for n in HAND_LISTED_TREE_READERS]
    by_name = {m.name: m for m in models}
    for model in models:
        overrides = model.overrides(path)
        if model.name.endswith("@jackknife"):
            assert overrides == by_name[gold_trained(model.name)].overrides(path) + [
                "--paths.train_conllu",
                str(path),
                "--paths.train_iob2",
                "jk/train.jackknife.iob2",
            ]
            assert model.config == by_name[gold_trained(model.name)].config
        else:
            assert "--paths.train_conllu" not in overrides and "--paths.train_iob2" not in overrides
    with pytest.raises(ValueError, match="give their CoNLL-U file"):
        TWINS[0].overrides(None)


def test_twin_names_choose_and_refuse():
    assert twin_names("dgm+dep, chain_crf+dep") == ["chain_crf+dep", "dgm+dep"]  # the order of the study's models
    assert [m.name for m in study_models(["dgm+dep"])][len(MODELS) :] == ["dgm+dep@jackknife"]
    assert study_models(()) == MODELS
    with pytest.raises(ValueError, match="chain_crf reads no tree in training"):
        twin_names("dgm,chain_crf")
    with pytest.raises(ValueError, match="no model 'dgmm'"):
        twin_names("dgmm")
    with pytest.raises(ValueError, match="is empty"):
        twin_names(" , ")


def without(command, option):
    """The command without ``option`` and its value."""
    i = command.index(option)
    return command[:i] + command[i + 2 :]


def test_study_train_builds_the_twin_commands(tmp_path, monkeypatch):
    recorded = {}

    def fake_run_seeds(runs, output, jobs, **settings):
        recorded.update(runs=runs, settings=settings)
        return {}

    monkeypatch.setattr(dgm_study, "run_seeds", fake_run_seeds)
    jackknife = tmp_path / "train.jackknife.conllu"
    jackknife.write_text("")
    common = dict(
        data=tmp_path,
        output=tmp_path / "out",
        configs=tmp_path,
        steps=2,
        parser_steps=2,
        limit=0,
        jobs=1,
        seeds="0,1",
        models="all",
    )
    dgm_study.train(**common, jackknife=jackknife, jackknife_models="dgm_s,perceptron+dep")
    assert recorded["settings"]["jackknife"] == str(jackknife)
    for seed in (0, 1):
        runs = recorded["runs"][seed]
        assert set(runs) == {"parser"} | {m.name for m in MODELS} | {"perceptron+dep@jackknife", "dgm_s@jackknife"}
        twin = runs["dgm_s@jackknife"]
        assert twin[twin.index("--output") + 1] == str(seed_folder(tmp_path / "out", seed) / "dgm_s@jackknife")
        assert twin[twin.index("--paths.train_conllu") + 1] == str(jackknife)
        assert twin[twin.index("--system.seed") + 1] == str(seed)
        assert twin[twin.index("--paths.train_iob2") + 1] == str(jackknife.with_suffix(".iob2"))
        assert without(runs["dgm_s"], "--output") == without(
            without(without(twin, "--output"), "--paths.train_conllu"), "--paths.train_iob2"
        )
        assert all("--paths.train_conllu" not in command for name, command in runs.items() if "@" not in name)
    dgm_study.train(**common, jackknife=None, jackknife_models="all")
    assert (
        set(recorded["runs"][0]) == {"parser"} | {m.name for m in MODELS} and recorded["settings"]["jackknife"] is None
    )
    with pytest.raises(Exception, match="no such file"):
        dgm_study.train(**common, jackknife=tmp_path / "missing.conllu", jackknife_models="all")
    with pytest.raises(Exception, match="give those trees with --jackknife"):
        dgm_study.train(**common, jackknife=None, jackknife_models="dgm")
    common["models"] = "dgm+dep, ner"
    dgm_study.train(**common, jackknife=jackknife, jackknife_models="all")  # all: the chosen tree readers
    assert list(recorded["runs"][1]) == ["parser", "dgm+dep", "ner", "dgm+dep@jackknife"]
    with pytest.raises(ValueError, match="add dgm to --models too"):
        dgm_study.train(**common, jackknife=jackknife, jackknife_models="dgm,dgm+dep")


def test_model_names_choose_and_refuse():
    assert model_names("all") == [m.name for m in MODELS]
    assert model_names("ner, dgm+dep,chain_crf") == ["chain_crf", "dgm+dep", "ner"]  # the order of the study's models
    with pytest.raises(ValueError, match="--models: no model 'crf'"):
        model_names("crf")
    with pytest.raises(ValueError, match="--models is empty"):
        model_names(",")


def test_evaluate_finds_the_models_every_seed_holds(tmp_path):
    with pytest.raises(ValueError, match="no trained model of the study"):
        dgm_study.trained_models(tmp_path, [0])
    for seed in (0, 1):
        for name in ("ner", "dgm+dep", "dgm+dep@jackknife"):
            (seed_folder(tmp_path, seed) / name / "model-best").mkdir(parents=True)
    (seed_folder(tmp_path, 0) / "dgm@jackknife" / "model-best").mkdir(parents=True)
    (seed_folder(tmp_path, 1) / "dgm_s@jackknife").mkdir(parents=True)  # a training that never finished
    assert [m.name for m in dgm_study.trained_models(tmp_path, [1])] == ["dgm+dep", "ner", "dgm+dep@jackknife"]
    with pytest.raises(ValueError, match="dgm@jackknife is trained for seed 0 but not for seed 1"):
        dgm_study.trained_models(tmp_path, [0, 1])


def test_report_tables_of_a_study_trained_with_some_models():
    counts = np.tile([1, 0, 0], (20, 1)).tolist()
    models = {
        name: {
            "0": {f"{split}_{trees}": prf(0.6, counts) for split in ("dev", "test") for trees in ("given", "predicted")}
        }
        for name in ("ner", "dgm", "chain_crf+dep")
    }
    evaluation = {"seeds": [0], "models": models}
    text = dgm_report.prf_tables(evaluation)
    _, with_dep = table_rows(text.split("Table 3")[0], "Table 2")
    assert [row[:2] for row in with_dep] == [["given", "linear-chain CRF"], ["predicted", "linear-chain CRF"]]
    _, without_dep = table_rows(text, "Table 3")
    assert [row[1] for row in without_dep] == ["DGM", "spaCy ner (reference)"] * 2
    _, rows = table_rows(dgm_report.significance_table(evaluation, 10), "paired bootstrap")
    assert [row[:2] for row in rows] == [["dgm vs ner", "given"], ["dgm vs ner", "predicted"]]  # no semi_crf trained
    speed = {"seed": 0, "models": {"dgm": {"seconds_per_iteration": 2.0, "words_per_second": 10}}}
    header, rows = table_rows(dgm_report.speed_table(speed, {}), "seed 0 only")
    assert "ratio vs semi-CRF" not in header and "–" not in rows[0]  # no semi-CRF to compare with: no ratio column


def test_report_section_on_training_with_predicted_trees(tmp_path):
    right, wrong = np.tile([1, 0, 0], (20, 1)).tolist(), np.tile([0, 1, 1], (20, 1)).tolist()
    models = {}
    for name in [m.name for m in MODELS] + ["dgm+dep@jackknife"]:
        f = {"0": 0.5, "1": 0.7} if name == "dgm+dep@jackknife" else {"0": 0.6, "1": 0.6}
        models[name] = {
            s: {
                f"{split}_{trees}": prf(f[s], right if name == "dgm+dep@jackknife" else wrong)
                for split in ("dev", "test")
                for trees in ("given", "predicted")
            }
            for s in ("0", "1")
        }
    evaluation = {"seeds": [0, 1], "models": models}
    assert dgm_report.twins(evaluation) == ["dgm+dep@jackknife"]
    (tmp_path / "jackknife.json").write_text(
        '{"folds": 5, "steps": 30, "attachment_per_fold": '
        '{"0": {"uas": 0.8, "las": 0.7}, "1": {"uas": 0.9, "las": 0.8}}}'
    )
    text = dgm_report.jackknife_section(evaluation, {"jackknife": str(tmp_path / "train.jackknife.conllu")}, 100)
    assert "5 folds" in text and "85.00 / 75.00" in text  # fold means
    header, rows = table_rows(text, "(NAME@jackknife)")
    assert [row[:3] for row in rows] == [
        ["dgm+dep", "gold trees", "given"],
        ["dgm+dep", "jackknifed trees", "given"],
        ["dgm+dep", "gold trees", "predicted"],
        ["dgm+dep", "jackknifed trees", "predicted"],
    ]
    assert rows[3][header.index("test F")] == "60.00 ± 14.14" and rows[2][header.index("test F")] == "60.00 ± 0.00"
    header, rows = table_rows(text, "summarised as in (e)")
    assert [row[:2] for row in rows] == [
        ["dgm+dep@jackknife vs dgm+dep", "given"],
        ["dgm+dep@jackknife vs dgm+dep", "predicted"],
    ]
    assert rows[1][2:] == ["100.00 ± 0.00", "2/2", "< 0.001", "2/2"]  # the twin right everywhere, the other wrong
    assert "(f) Training" not in dgm_report.prf_tables(evaluation)
