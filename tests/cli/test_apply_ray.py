"""``apply-ray``: the same JSONL bytes as ``apply`` from a pool of Ray
actors on a local two-CPU cluster, and its errors."""

import pytest
from spacy.tokens import DocBin
from test_apply import cli

from spacy_depner.inference import annotate_corpus, ray_annotate

pytest.importorskip("ray.data")  # the ray extra is ray[data]: Ray without its data extra skips too
ray = pytest.importorskip("ray")


def test_ray_refuses_what_it_cannot_do_before_starting(pipeline, corpus, tmp_path):
    running = ray.is_initialized()
    DocBin().to_disk(tmp_path / "docs.spacy")
    with pytest.raises(ValueError, match="reads a .txt or .jsonl file.*use `python -m spacy_depner apply`"):
        ray_annotate(pipeline, tmp_path / "docs.spacy", tmp_path / "out.jsonl")
    with pytest.raises(ValueError, match="writes a .jsonl file"):
        ray_annotate(pipeline, corpus, tmp_path / "shards")
    with pytest.raises(ValueError, match="neither a directory nor an installed package"):
        ray_annotate(tmp_path / "missing", corpus, tmp_path / "out.jsonl")
    (tmp_path / "out.jsonl").write_text("old\n")
    with pytest.raises(ValueError, match="exists: pass --force"):
        ray_annotate(pipeline, corpus, tmp_path / "out.jsonl")
    with pytest.raises(ValueError, match="actors=0"):
        ray_annotate(pipeline, corpus, tmp_path / "new.jsonl", actors=0)
    assert ray.is_initialized() == running  # refused before starting Ray


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ray_writes_the_bytes_of_annotate(local_ray, pipeline, nlp, corpus, tmp_path):
    annotate_corpus(nlp, corpus, tmp_path / "annotate.jsonl", batch_size=4, progress=False)
    (tmp_path / "corpus.txt").write_text("John Smith visited Paris\n\nZoë lives in Paris\n", encoding="utf8")
    annotate_corpus(nlp, tmp_path / "corpus.txt", tmp_path / "annotate_text.jsonl", progress=False)
    # several actors, shards and batches, and sizes that do not divide the corpus
    options = dict(actors=2, batch_size=4, shard_size=7, progress=False)
    summary = ray_annotate(pipeline, corpus, tmp_path / "ray.jsonl", **options)
    assert summary["docs"] == 37 and summary["words"] > 0 and summary["docs_kept"] == 0
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "annotate.jsonl").read_bytes()
    done = cli(
        "apply-ray", pipeline, tmp_path / "corpus.txt", tmp_path / "ray_text.jsonl", "--actors", 1, "--no-progress"
    )
    assert done.exit_code == 0, done.output
    assert (tmp_path / "ray_text.jsonl").read_bytes() == (tmp_path / "annotate_text.jsonl").read_bytes()
    assert ray.is_initialized()  # the command leaves a Ray instance it did not start running


@pytest.mark.slow
def test_ray_resumes_from_the_shards_done(local_ray, pipeline, nlp, corpus, tmp_path):
    """A run stopped by a bad line keeps the shards done; fixed, it writes the bytes of apply."""
    good = corpus.read_text(encoding="utf8")
    lines = good.splitlines(keepends=True)
    corpus.write_text("".join(lines[:20] + ["{bad\n"] + lines[21:]), encoding="utf8")
    options = dict(actors=1, batch_size=4, shard_size=5, progress=False)
    with pytest.raises(ValueError, match="corpus.jsonl:21: not valid JSON"):
        ray_annotate(pipeline, corpus, tmp_path / "ray.jsonl", **options)
    assert len(list((tmp_path / "ray.jsonl.partial").glob("shard-*.jsonl"))) >= 4
    corpus.write_text(good, encoding="utf8")
    summary = ray_annotate(pipeline, corpus, tmp_path / "ray.jsonl", **options)
    assert summary["docs_kept"] >= 19 and summary["docs_kept"] + summary["docs"] == 37
    annotate_corpus(nlp, corpus, tmp_path / "annotate.jsonl", progress=False)
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "annotate.jsonl").read_bytes()


@pytest.mark.slow
def test_ray_errors_name_file_and_line(local_ray, pipeline, tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"text": "a"}\n{"text": "b"}\n{"body": "c"}\n', encoding="utf8")
    with pytest.raises(ValueError, match=r"corpus.jsonl:3: no \"text\" key") as raised:
        ray_annotate(pipeline, tmp_path / "corpus.jsonl", tmp_path / "out.jsonl", actors=1, progress=False)
    assert "\n" not in str(raised.value)  # without Ray's retry notes


@pytest.mark.slow
def test_ray_actors_import_code_before_loading(local_ray, pipeline, corpus, tmp_path):
    """--code runs in every actor before its pipeline loads: each process
    that imports it appends its id to a file."""
    imported = tmp_path / "imported"
    code = tmp_path / "functions.py"
    code.write_text(
        f"import os\nwith open({str(imported)!r}, 'a') as f:\n    f.write(str(os.getpid()) + '\\n')\n",
        encoding="utf8",
    )
    done = cli("apply-ray", pipeline, corpus, tmp_path / "out.jsonl", "-c", code, "--actors", "2", "--no-progress")
    assert done.exit_code == 0, done.output
    pids = set(imported.read_text().split())
    assert len(pids) == 3  # this process and the two actors
