"""The pretrained-first-stage study's configs: which models read the seed's
trained first stage, and in which unit, follows from each own-data config
(its ``paths.trained_ner``, its ``trained_ner`` component), and the per-seed
overrides point at the files ``crossval`` writes for that unit."""

from pathlib import Path

import pytest
import typer

from experiments.two_stage.pretrained import MODELS, model_overrides, study_config, trained_stage_file

CONFIGS = Path(__file__).parents[2] / "configs"


def overrides_of(output: Path, name: str, seed: int = 0):
    return model_overrides(output, name, study_config(CONFIGS, name, "en_core_web_sm"), seed)


@pytest.fixture
def trained_output(tmp_path):
    """An OUTPUT whose seed 0 has ner_sourced_sentences and crossval's records in both units."""
    (tmp_path / "seed_0" / "ner_sourced_sentences" / "model-best").mkdir(parents=True)
    for split in ("train", "dev"):
        for by_sentence in (False, True):
            trained_stage_file(tmp_path, 0, split, by_sentence).write_text("", encoding="utf8")
    return tmp_path


@pytest.mark.parametrize("name", ["ner", "ner_sourced", "ner_sourced_sentences", "two_stage", "two_stage_loo"])
def test_models_without_a_trained_first_stage_take_no_overrides(trained_output, name):
    assert overrides_of(trained_output, name) == []
    assert study_config(CONFIGS, name, "en_core_web_sm")["corpora"]["train"].get("first_stage") is None


@pytest.mark.parametrize(
    "name, records",
    [
        ("two_stage_stacked", "trained_stage_{}.jsonl"),
        ("two_stage_stacked_loo", "trained_stage_{}.jsonl"),
        ("two_stage_sentences", "trained_stage_{}_sentences.jsonl"),
        ("two_stage_shared", "trained_stage_{}_sentences.jsonl"),
        ("two_stage_sentences_shared_window", "trained_stage_{}_sentences.jsonl"),
        ("two_stage_shared_window", "trained_stage_{}_sentences.jsonl"),
    ],
)
def test_models_over_the_trained_first_stage_read_its_records_in_their_unit(trained_output, name, records):
    overrides = dict(zip(*[iter(overrides_of(trained_output, name))] * 2))
    seed = trained_output / "seed_0"
    assert overrides == {
        "--paths.trained_stage_train": str(seed / records.format("train")),
        "--paths.trained_stage_dev": str(seed / records.format("dev")),
        "--paths.trained_ner": str(seed / "ner_sourced_sentences" / "model-best"),
    }
    corpus = study_config(CONFIGS, name, "en_core_web_sm")["corpora"]["train"]
    assert corpus["first_stage"] == "${paths.trained_stage_train}" and corpus["spans_key"] == "trained_stage"


def test_a_missing_trained_first_stage_names_the_command_that_makes_it(tmp_path):
    with pytest.raises(typer.BadParameter, match="pretrained-first-stage crossval --seeds 0"):
        overrides_of(tmp_path, "two_stage_sentences_shared_window")


def test_every_study_model_has_an_own_data_config():
    assert all((CONFIGS / "own_data" / config).is_file() for config in MODELS.values())
