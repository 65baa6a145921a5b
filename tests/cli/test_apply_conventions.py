"""``apply`` takes the options of ``spacy apply`` under their names and short
flags (``apply-ray`` those that apply to it): --code/-c, --text-key/-tk,
--force/-F, --gpu-id/-g, --batch-size/-b, --n-process/-n."""

import json

import typer
from spacy.cli import app as spacy_app
from spacy.tokens import DocBin
from test_apply import cli, read_jsonl

from spacy_depner.cli.app import app

OURS = typer.main.get_command(app).commands


def option_names(command) -> set:
    return {name for param in command.params if param.param_type_name == "option" for name in param.opts}


def test_apply_has_every_option_of_spacy_apply():
    theirs = option_names(typer.main.get_command(spacy_app).commands["apply"]) - {"--help"}
    assert {
        "--code",
        "-c",
        "--text-key",
        "-tk",
        "--force",
        "-F",
        "--gpu-id",
        "-g",
        "--batch-size",
        "-b",
        "--n-process",
        "-n",
    } <= theirs  # what this test stands on
    assert theirs <= option_names(OURS["apply"])
    assert {"--code", "-c", "--text-key", "-tk", "--force", "-F", "--batch-size", "-b"} <= option_names(
        OURS["apply-ray"]
    )
    assert "--overwrite" in option_names(OURS["apply"])  # the earlier name still works


def test_text_key_reads_the_text_from_another_key(pipeline, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps({"id": i, "body": text})
            for i, text in enumerate(["John Smith visited Paris", "Mary lives in Paris"])
        )
        + "\n",
        encoding="utf8",
    )
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "-tk", "body", "-b", "1", "-n", "1", "--no-progress")
    assert done.exit_code == 0, done.exception
    records = read_jsonl(tmp_path / "out.jsonl")
    assert [r["text"] for r in records] == ["John Smith visited Paris", "Mary lives in Paris"]
    assert [r["meta"] for r in records] == [{"id": 0}, {"id": 1}]
    done = cli("apply", pipeline, corpus, tmp_path / "default.jsonl", "--no-progress")
    assert 'no "text" key' in str(done.exception) and "--text-key" in str(done.exception)


def test_code_is_imported_before_the_pipeline_loads(pipeline, corpus, tmp_path):
    marker = tmp_path / "imported"
    code = tmp_path / "functions.py"
    code.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('yes')\n", encoding="utf8")
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "-c", code, "-g", "-1", "--no-progress")
    assert done.exit_code == 0, done.exception
    assert marker.read_text() == "yes"
    done = cli("apply", pipeline, corpus, tmp_path / "other.jsonl", "--code", tmp_path / "missing.py", "--no-progress")
    assert "--code" in str(done.exception) and "missing.py" in str(done.exception)


def test_force_replaces_an_existing_output(pipeline, corpus, tmp_path):
    (tmp_path / "out.jsonl").write_text("old\n")
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "--no-progress")
    assert "exists: pass --force" in str(done.exception)
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "-F", "--no-progress")
    assert done.exit_code == 0 and len(read_jsonl(tmp_path / "out.jsonl")) == 37


def test_apply_ray_imports_code_before_anything_else(pipeline, corpus, tmp_path):
    """--code is imported first, here (and in each actor, test_apply_ray),
    before INPUT is checked; a missing file is named. Ray is never started."""
    marker = tmp_path / "imported"
    code = tmp_path / "functions.py"
    code.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('yes')\n", encoding="utf8")
    docbin = tmp_path / "docs.spacy"  # refused before Ray starts, after --code
    DocBin().to_disk(docbin)
    done = cli("apply-ray", pipeline, docbin, tmp_path / "out.jsonl", "-c", code, "--no-progress")
    assert "reads a .txt or .jsonl file" in str(done.exception) and marker.read_text() == "yes"
    done = cli("apply-ray", pipeline, corpus, tmp_path / "other.jsonl", "--code", tmp_path / "missing.py")
    assert done.exit_code != 0 and "--code" in str(done.exception) and "missing.py" in str(done.exception)
