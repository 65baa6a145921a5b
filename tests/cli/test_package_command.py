"""``python -m spacy_depner package``: a tiny trained pipeline, packaged with
``spacy package``, installs into a folder with pip (offline), loads by name
in a fresh process (its components found through spacy-depner's entry
points) and predicts what it learned; its meta has the requirement on
spacy-depner, the dev scores training weighed and the P/R/F of the
evaluations given."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tiny_corpus import tiny_chain_ner

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run
from spacy_depner.workflows.packaging import evaluation_scores, licences_text

ROOT = Path(__file__).resolve().parents[2]
LOAD = """
import json, sys, spacy
nlp = spacy.load("en_depner_tiny")
doc = nlp("Mary lives in Paris")
print(json.dumps({"ents": [[e.text, e.label_] for e in doc.ents], "meta": nlp.meta,
                  "spacy_depner": sys.modules["spacy_depner"].__file__}))
"""


def test_an_evaluation_without_prf_or_split_is_one_line_naming_the_fix(tmp_path, capsys):
    with pytest.raises(ValueError, match="no f: give the JSON that `python -m spacy_depner evaluate --output`"):
        evaluation_scores({"p": 0.5, "r": 0.5}, "--evaluation x.json")
    assert evaluation_scores({"p": 1, "r": 0.5, "f": 0.75, "words": 3}, "x") == {"p": 1.0, "r": 0.5, "f": 0.75}
    (tmp_path / "model").mkdir()
    assert (
        run(
            app, ["package", str(tmp_path / "model"), str(tmp_path / "out"), "--name", "x", "--evaluation", "test.json"]
        )
        == 1
    )
    assert "--evaluation test.json: give SPLIT=FILE" in capsys.readouterr().err
    assert run(app, ["package", str(tmp_path / "model"), str(tmp_path / "out"), "--name", "x"]) == 1
    assert "is not a saved pipeline (no meta.json and config.cfg)" in capsys.readouterr().err


def test_the_licence_file_lists_every_source_and_says_non_commercial():
    meta = {
        "lang": "en",
        "name": "x",
        "version": "1",
        "license": "CC BY-NC-SA 4.0",
        "sources": [{"name": "GUM", "license": "CC BY-NC-SA 4.0", "author": "Zeldes", "url": "https://gum"}],
    }
    text = licences_text(meta)
    assert "en_x 1: licence CC BY-NC-SA 4.0, the most restrictive" in text and "Non-commercial" in text
    assert "- GUM: CC BY-NC-SA 4.0; Zeldes; https://gum" in text
    assert "Non-commercial" not in licences_text({**meta, "license": "MIT", "sources": []})


@pytest.mark.slow
def test_packaged_pipeline_installs_and_loads_by_name(tmp_path):
    nlp, learned = tiny_chain_ner()
    nlp.meta["performance"] = {"ents_f": 1.0, "ents_p": 1.0, "ents_r": 1.0, "chain_ner_loss": 0.1}
    nlp.meta["license"] = "CC BY-SA 4.0"
    nlp.to_disk(tmp_path / "model-best")
    evaluation = tmp_path / "test.json"
    evaluation.write_text(json.dumps({"p": 0.6, "r": 0.8, "f": 0.7, "words": 4}))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy_depner",
            "package",
            str(tmp_path / "model-best"),
            str(tmp_path / "packages"),
            "--name",
            "depner_tiny",
            "--version",
            "0.0.1",
            "--evaluation",
            f"test={evaluation}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "en_depner_tiny 0.0.1: licence CC BY-SA 4.0" in done.stdout
    sdist = tmp_path / "packages" / "en_depner_tiny-0.0.1" / "dist" / "en_depner_tiny-0.0.1.tar.gz"
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(sdist),
        ],
        check=True,
        capture_output=True,
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]))
    loaded = subprocess.run([sys.executable, "-c", LOAD], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr
    result = json.loads(loaded.stdout.strip().splitlines()[-1])
    assert result["ents"] == learned
    assert Path(result["spacy_depner"]).parent.parent == ROOT  # the components of this checkout
    meta = result["meta"]
    assert (
        meta["name"] == "depner_tiny"
        and meta["version"] == "0.0.1"
        and set(meta["labels"]["chain_ner"]) == {"LOC", "MISC", "PER"}
    )
    assert any(req.startswith("spacy-depner>=") for req in meta["requirements"])
    performance = meta["performance"]
    assert performance["test_f"] == pytest.approx(0.7) and performance["test_p"] == pytest.approx(0.6)
    assert performance["ents_f"] == 1.0 and "chain_ner_loss" not in performance
    assert meta["license"] == "CC BY-SA 4.0" and "F1 70.00, P 60.00, R 80.00" in meta["notes"]
