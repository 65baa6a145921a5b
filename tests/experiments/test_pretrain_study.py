"""The pretrained tok2vec in the DGM study, without training: `study train`
gives the weights to every entity model (each has a tok2vec component) and
not to the parser; which weights `--init-tok2vec` and `--pretrained` name,
and their errors; `python -m experiments pretrain --epochs 0`."""

import json
from pathlib import Path

import pytest
from spacy.util import load_config

from experiments.__main__ import app
from experiments.dgm import study as dgm_study
from experiments.dgm.models import MODELS, study_models
from experiments.pretrain.tok2vec import pretrained_weights, tok2vec_weights
from spacy_depner.cli.errors import run

ROOT = Path(__file__).parents[2]
OVERRIDE = "--paths.init_tok2vec"


def runs_of(init_tok2vec):
    chosen = study_models(["dgm+dep"], [model.name for model in MODELS])
    return dgm_study.training_runs(
        chosen, 1, Path("data"), Path("out"), ROOT / "configs", 4, 4, 0, Path("jk.conllu"), init_tok2vec
    )


def option_value(command, option):
    """The value after ``option`` in ``command``, or None without it; the option at most once."""
    assert command.count(option) <= 1
    return command[command.index(option) + 1] if option in command else None


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_every_study_model_has_the_tok2vec_component_the_weights_go_to(model):
    config = load_config(ROOT / "configs" / model.config)
    assert config["components"]["tok2vec"]["factory"] == "tok2vec"
    assert config["pretraining"]["component"] == "tok2vec"


def test_the_weights_reach_every_entity_model_and_not_the_parser():
    runs = runs_of(Path("pre/tok2vec.bin"))
    assert set(runs) == {"parser", "dgm+dep@jackknife"} | {model.name for model in MODELS}
    assert option_value(runs["parser"], OVERRIDE) is None
    for name in ("ner", "dgm", "dgm+dep", "chain_crf", "dgm+dep@jackknife"):
        assert option_value(runs[name], OVERRIDE) == "pre/tok2vec.bin", name
        assert option_value(runs[name], "--system.seed") == "1"
    assert option_value(runs["dgm+dep@jackknife"], "--paths.train_conllu") == "jk.conllu"
    assert all(OVERRIDE not in command for command in runs_of(None).values())


def write_manifest(folder: Path, record) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pretrain.json").write_text(json.dumps(record))
    return folder / "pretrain.json"


def test_which_weights_the_options_name(tmp_path):
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"\x80")
    assert tok2vec_weights(None, None) is None
    assert tok2vec_weights(weights, None) == weights
    with pytest.raises(ValueError, match="--init-tok2vec .*missing.bin: no such file"):
        tok2vec_weights(tmp_path / "missing.bin", None)
    manifest = write_manifest(tmp_path / "pre", {"epochs": 2, "weights": "tok2vec.bin"})
    with pytest.raises(ValueError, match="tok2vec.bin, which are missing"):
        pretrained_weights(manifest)
    (tmp_path / "pre" / "tok2vec.bin").write_bytes(b"\x80")
    assert tok2vec_weights(None, manifest) == tmp_path / "pre" / "tok2vec.bin"  # beside the manifest, wherever run from
    assert tok2vec_weights(None, write_manifest(tmp_path / "none", {"epochs": 0, "weights": None})) is None
    with pytest.raises(ValueError, match="give one of them"):
        tok2vec_weights(weights, manifest)
    with pytest.raises(ValueError, match="no such file; run `python -m experiments pretrain"):
        pretrained_weights(tmp_path / "absent" / "pretrain.json")
    with pytest.raises(ValueError, match='no "weights"'):
        pretrained_weights(write_manifest(tmp_path / "other", {"epochs": 2}))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        pretrained_weights(tmp_path / "bad.json")


def test_study_train_refuses_missing_weights_before_training(tmp_path, capsys):
    code = run(
        app,
        [
            "study",
            "train",
            "--data",
            str(tmp_path),
            "--output",
            str(tmp_path / "out"),
            "--configs",
            str(ROOT / "configs"),
            "--init-tok2vec",
            str(tmp_path / "missing.bin"),
        ],
        "python -m experiments",
    )
    assert code == 1 and "missing.bin: no such file" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_zero_epochs_pretrain_nothing_and_clear_an_earlier_run(tmp_path, capsys):
    output = tmp_path / "pretrain"
    for name in ("tok2vec.bin", "train_text.jsonl"):
        output.mkdir(exist_ok=True)
        (output / name).write_text("earlier run")
    code = run(
        app,
        [
            "pretrain",
            "--data",
            str(tmp_path / "no-data"),
            "--config",
            str(ROOT / "configs" / "dgm_ewt.cfg"),
            "--epochs",
            "0",
            "--output",
            str(output),
        ],
        "python -m experiments",
    )
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in output.iterdir()) == ["pretrain.json"]
    assert pretrained_weights(output / "pretrain.json") is None
