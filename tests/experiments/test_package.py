"""``python -m experiments package``: of a study's seeds the best on dev is
packaged (through the library's packaging), its meta holding the study's
sources, the most restrictive of their licences and the accuracy over the
seeds (mean and sample sd)."""

import json

import pytest
from tiny_corpus import tiny_chain_ner
from typer.testing import CliRunner

from experiments.app import app
from experiments.packaging.pipelines import package_licence, pipeline_sources, seed_accuracy


def test_sources_licence_and_accuracy_of_both_layouts():
    config = '[paths]\ntrain = "${paths.data}/ud_gum/en_gum-ud-train.conllu"\n[initialize]\nvocab = "x/en_core_web_sm-3.8.0"\n'
    assert pipeline_sources(config) == ["ud_gum", "en_core_web_sm"]
    assert package_licence(["en_core_web_sm", "uner_ewt"]) == "CC BY-SA 4.0"
    assert package_licence(pipeline_sources(config)) == "CC BY-NC-SA 4.0"
    with pytest.raises(ValueError, match="--sources"):
        package_licence([])
    study = {"models": {"m": {"0": {"test_given": {"p": 0.5, "r": 0.5, "f": 0.5, "words": 3}, "words": 3}}}}
    nested = {"split": "dev", "models": {"m": {"0": {"p": 0.25, "r": 0.25, "f": 0.25}}, "other": {}}}
    assert seed_accuracy([study, nested], "m") == {
        "test_given": {"0": {"p": 0.5, "r": 0.5, "f": 0.5}},
        "dev": {"0": {"p": 0.25, "r": 0.25, "f": 0.25}},
    }


@pytest.mark.slow
def test_the_best_seed_is_packaged_with_the_accuracy_over_the_seeds(tmp_path):
    nlp, _ = tiny_chain_ner()
    models = tmp_path / "training"
    for seed in (0, 1):
        (models / f"seed_{seed}" / "tiny").mkdir(parents=True)
    nlp.meta["performance"] = {"ents_f": 1.0, "ents_p": 1.0, "ents_r": 1.0, "chain_ner_loss": 0.1}
    nlp.to_disk(models / "seed_1" / "tiny" / "model-best")
    nlp.meta["performance"] = {"ents_f": 0.5, "ents_p": 0.5, "ents_r": 0.5}  # seed 0: worse on dev, not packaged
    nlp.to_disk(models / "seed_0" / "tiny" / "model-best")
    evaluation = tmp_path / "evaluation.json"
    evaluation.write_text(
        json.dumps(
            {
                "seeds": [0, 1],
                "models": {
                    "tiny": {
                        "0": {"test_given": {"p": 0.6, "r": 0.8, "f": 0.7}},
                        "1": {"test_given": {"p": 1.0, "r": 0.8, "f": 0.9}},
                    }
                },
            }
        )
    )
    done = CliRunner().invoke(
        app,
        [
            "package",
            str(models),
            "--model",
            "tiny",
            "--name",
            "en_depner_tiny",
            "--version",
            "0.0.1",
            "--output",
            str(tmp_path / "packages"),
            "--evaluation",
            str(evaluation),
            "--evaluation",
            str(tmp_path / "none.json"),
            "--sources",
            "uner_ewt,ud_gum",
        ],
    )
    assert done.exit_code == 0, done.output
    assert (
        "of seed 1, the best on dev in training (score 1.0000) of seeds 0, 1" in done.output
        and "no " + str(tmp_path / "none.json") in done.output
    )
    meta = json.loads((tmp_path / "packages" / "en_depner_tiny-0.0.1" / "meta.json").read_text())
    assert meta["name"] == "depner_tiny" and any(req.startswith("spacy-depner>=") for req in meta["requirements"])
    assert [(s["license"], s["url"]) for s in meta["sources"]] == [
        ("CC BY-SA 4.0", "https://github.com/UniversalNER/UNER_English-EWT"),
        ("CC BY-NC-SA 4.0", "https://github.com/UniversalDependencies/UD_English-GUM"),
    ]
    assert meta["license"] == "CC BY-NC-SA 4.0" and "Non-commercial" in meta["description"]
    performance = meta["performance"]
    assert performance["test_given_f"] == pytest.approx(0.8) and performance["test_given_f_sd"] == pytest.approx(
        0.1414, abs=1e-4
    )
    assert (
        performance["ents_f"] == 1.0 and "chain_ner_loss" not in performance and performance["seeds"]["packaged"] == 1
    )
    assert "F1 80.00 ± 14.14" in meta["notes"] and "seed 1, the best on dev" in meta["notes"]
