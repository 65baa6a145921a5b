"""``python -m spacy_depner calibrate --per-label`` on the tiny parser +
dgm_ner pipeline, with dev data it did not see (UD + UNER files): the
temperatures per label saved and read back at load, the reported NLL
before, after one temperature and after per label against the
``calibration`` report of the saved pipelines, and a later ``calibrate``
without the flag keeping them where they score a higher F1 than the one
temperature, emptying them with --force."""

import json
from pathlib import Path

import pytest
import spacy

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run

DATA = Path(__file__).parents[1] / "data"
DEV = (DATA / "tiny.conllu", "--iob2", DATA / "tiny.iob2")


def run_ok(capsys, *args) -> dict:
    status = run(app, [str(a) for a in args], "python -m spacy_depner")
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


def reported_nll(capsys, pipeline: Path, tmp_path: Path) -> float:
    report = run_ok(
        capsys, "calibration-report", pipeline, DEV[0], "--iob2", DEV[2], "--output", tmp_path / "report.json"
    )
    return report["dgm_ner"]["per_file"][0]["nll"]


def test_calibrate_per_label_saves_them_and_the_nll_does_not_rise(capsys, pipeline, tmp_path):
    printed = run_ok(capsys, "calibrate", pipeline, *DEV, tmp_path / "per_label", "--per-label")
    labels = printed["label_temperatures"]
    loaded = spacy.load(tmp_path / "per_label")
    pipe = loaded.get_pipe("dgm_ner")
    assert labels and set(labels) <= {"O", *pipe.labels} and printed["before_label_temperatures"] == {}
    assert pipe.settings["label_temperatures"] == labels == loaded.config["components"]["dgm_ner"]["label_temperatures"]
    assert pipe.settings["temperature"] == printed["temperature"]
    before, after, per_label = printed["before"], printed["after"], printed["after_per_label"]
    assert per_label["nll"] <= after["nll"] <= before["nll"]
    assert per_label["f"] >= after["f"] == before["f"]  # the MAP spans move, their F1 does not fall
    assert per_label["nll"] == pytest.approx(printed["label_fit_nll"], rel=1e-6)
    assert printed["label_decodings"] > len(labels) * 5 and printed["decodings"] > 9
    for summary in (before, after, per_label):
        assert {"ece", "nll", "p", "r", "f", "spans"} <= set(summary) and "reliability" not in summary
    # the saved pipeline decodes with them: the calibration report finds the same NLL
    assert reported_nll(capsys, tmp_path / "per_label", tmp_path) == pytest.approx(per_label["nll"], rel=1e-5)

    kept = run_ok(capsys, "calibrate", tmp_path / "per_label", *DEV, tmp_path / "kept")
    assert kept["before"]["f"] == per_label["f"] > kept["after"]["f"] == after["f"] and kept["chosen"] == "before"
    assert spacy.load(tmp_path / "kept").get_pipe("dgm_ner").settings["label_temperatures"] == labels
    again = run_ok(capsys, "calibrate", tmp_path / "per_label", *DEV, tmp_path / "one", "--force")
    assert again["before_label_temperatures"] == labels and "label_temperatures" not in again
    assert again["before"]["nll"] == pytest.approx(per_label["nll"], rel=1e-5)
    assert again["temperature"] == printed["temperature"]  # fitted without the label temperatures
    one = spacy.load(tmp_path / "one")
    assert one.get_pipe("dgm_ner").settings["label_temperatures"] == {}
    assert reported_nll(capsys, tmp_path / "one", tmp_path) == pytest.approx(after["nll"], rel=1e-5)
