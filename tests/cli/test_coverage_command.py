"""``python -m spacy_depner coverage`` on the hand-made fixture, figures derived by hand."""

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parents[1] / "data"


def test_coverage_json():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy_depner",
            "coverage",
            str(DATA / "tiny.conllu"),
            "--iob2",
            str(DATA / "tiny.iob2"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout)
    assert (report["sentences"], report["tokens"], report["entities"]) == (3, 17, 5)
    # "Lake Tahoe": Lake and Tahoe both hang from "Visit", so the path is not increasing
    assert report["coverage"] == {"semi_markov_L8": 100.0, "dgm_s": 80.0, "dgm": 80.0}
    # semi-Markov: 21 + 36 + 6 spans; DGM-S: 17 words + 14 arcs; DGM: 13 + 21 + 5 valid spans
    expected = {"semi_markov_L8": 63 / 17, "dgm_s": 31 / 17, "dgm": 39 / 17}
    assert report["spans_per_token"] == {k: round(v, 3) for k, v in expected.items()}


def run_coverage(capsys, *args):
    """``python -m spacy_depner coverage ARGS`` in this process (the entry
    point's own run, as ``test_coverage_json`` runs it in a child):
    (exit status, stdout, stderr)."""
    from spacy_depner.cli.app import app
    from spacy_depner.cli.errors import run

    capsys.readouterr()
    code = run(app, ["coverage", *args], "python -m spacy_depner")
    out, err = capsys.readouterr()
    return code, out, err


def test_nested_coverage_json(capsys):
    """The hand-counted maxima of the nested fixtures (see test_nested_readers)."""
    code, out, _ = run_coverage(capsys, str(DATA / "nested_genia.jsonl"))
    assert code == 0
    assert json.loads(out)["kept"] == {"flat": 8, "nested": 12, "quadratic": 11}
    code, out, _ = run_coverage(capsys, str(DATA / "nested_gum.conllu"))
    assert code == 0
    assert json.loads(out)["kept"] == {"flat": 6, "nested": 10, "quadratic": 9, "dgm": 9}


def test_coverage_data_is_told_by_suffix(capsys, tmp_path):
    code, _, err = run_coverage(capsys, str(tmp_path / "corpus.txt"))
    assert code != 0 and "'.txt'" in err and ".jsonl" in err and ".conllu" in err
    code, _, err = run_coverage(capsys, str(DATA / "nested_genia.jsonl"), "--iob2", str(DATA / "tiny.iob2"))
    assert code != 0 and "--iob2 goes with a .conllu DATA" in err
