"""``pretrained-first-stage tune-decoding`` on a tiny trained candidate: the
input's MAP decoding is kept when it scores higher on dev than every
posterior penalty tried (the choice recorded), and candidates that were
not trained are skipped with a line unless named."""

import json
import shutil
from pathlib import Path

import pytest
import spacy
from cli.conftest import train_tiny_pipeline
from typer.testing import CliRunner

from experiments.two_stage.pretrained import pretrained_first_stage
from experiments.two_stage.pretrained_scores import POSTERIOR, TRAINED_CANDIDATES

DATA = Path(__file__).parents[1] / "data"
TRAINED = TRAINED_CANDIDATES[0]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """(data, models): tiny.conllu + tiny.iob2 as EWT dev, one candidate trained for seed 0."""
    root = tmp_path_factory.mktemp("study")
    (root / "data" / "ud_ewt" / "r2.9").mkdir(parents=True)
    (root / "data" / "uner_ewt").mkdir()
    shutil.copy(DATA / "tiny.conllu", root / "data" / "ud_ewt" / "r2.9" / "en_ewt-ud-dev.conllu")
    shutil.copy(DATA / "tiny.iob2", root / "data" / "uner_ewt" / "en_ewt-ud-dev.iob2")
    (root / "models" / "seed_0" / TRAINED).mkdir(parents=True)
    train_tiny_pipeline(root / "models" / "seed_0" / TRAINED / "model-best")
    return root / "data", root / "models"


def tune(data: Path, models: Path, *options: str):
    arguments = ["tune-decoding", "--data", str(data), "--models", str(models), "--seeds", "0", *options]
    return CliRunner().invoke(pretrained_first_stage, arguments)


def test_tune_decoding_keeps_map_when_it_scores_higher_and_skips_the_untrained(study):
    data, models = study
    done = tune(data, models, "--step", "1.0")  # penalties 0 and 1 only: both below MAP on tiny dev
    assert done.exit_code == 0, done.output
    record = json.loads((models / "seed_0" / "tuned_decoding.json").read_text())
    assert set(record) == {TRAINED}
    assert record[TRAINED]["chosen"] == "before" and record[TRAINED]["before_decoding"] == "map"
    assert record[TRAINED]["before_f"] > record[TRAINED]["tuned_f"]
    saved = spacy.load(models / "seed_0" / (TRAINED + POSTERIOR) / "model-best")
    assert saved.get_pipe("dgm_ner").settings["decoding"] == "map"
    for name in TRAINED_CANDIDATES[1:]:
        assert f"seed 0 {name}: not trained" in done.output
        assert not (models / "seed_0" / (name + POSTERIOR)).exists()
    named = tune(data, models, "--models-trained", TRAINED_CANDIDATES[1])
    assert named.exit_code != 0 and "not trained" in named.output and "E052" not in named.output
