"""``annotate`` killed part way (SIGKILL) and run again with the same
arguments writes the bytes of an uninterrupted run, JSONL and DocBin shards;
OUTPUT exists only complete; a partial left with other arguments is refused
with a clear error, or restarted with --force; a corrected input resumes
while the documents done are unchanged."""

import json
import signal
import subprocess
import sys
import time

import pytest
from spacy.tokens import DocBin
from test_apply import cli

from spacy_depner.inference import annotate_corpus
from spacy_depner.util.atomic_files import manifest_path, partial_path

DOCS = 1500  # about two seconds of annotation with the tiny pipeline
SHARDS = "shard-[0-9][0-9][0-9][0-9][0-9][0-9].spacy"  # complete shards, not their temporaries
JSONL_SHARDS = "shard-[0-9][0-9][0-9][0-9][0-9][0-9].jsonl"


def command(pipeline, corpus, output, *options):
    return [
        sys.executable,
        "-m",
        "spacy_depner",
        "apply",
        str(pipeline),
        str(corpus),
        str(output),
        "--n-process",
        "1",
        "--batch-size",
        "16",
        "--no-progress",
        *map(str, options),
    ]


def kill_when(process: subprocess.Popen, started, timeout: float = 60.0) -> None:
    """SIGKILL ``process`` as soon as ``started()`` holds, while it is still running."""
    deadline = time.monotonic() + timeout
    while not started():
        assert process.poll() is None, f"annotate ended before it was killed: {process.communicate()}"
        assert time.monotonic() < deadline, "annotate wrote nothing in time"
        time.sleep(0.02)
    assert process.poll() is None, "annotate ended before it was killed: use a bigger corpus"
    process.kill()
    assert process.wait() == -signal.SIGKILL


def rerun(args) -> dict:
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def lines_in(path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.fixture
def big_corpus(tmp_path, random_corpus):
    return random_corpus(tmp_path / "corpus.jsonl", DOCS, seed=1)


@pytest.mark.slow
def test_killed_two_process_jsonl_run_resumes_to_the_bytes_of_an_uninterrupted_run(pipeline, nlp, big_corpus, tmp_path):
    output = tmp_path / "out.jsonl"
    args = command(pipeline, big_corpus, output, "--n-process", 2, "--shard-size", 100)

    def done_shards():
        return sorted(partial_path(output).glob(JSONL_SHARDS)) if partial_path(output).is_dir() else []

    kill_when(
        subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), lambda: len(done_shards()) >= 3
    )
    time.sleep(0.5)  # the workers are killed with their parent, not before it: nothing more is written
    assert not output.exists() and manifest_path(output).exists()
    kept = done_shards()
    assert 3 <= len(kept) < DOCS // 100
    (partial_path(output) / "shard-000014.tmp-0123abcd.jsonl").write_text('{"text": "torn')  # torn by the kill
    # a document already done changed since: refused, naming the shard and the document
    first = int(kept[0].name[6:12])
    original = big_corpus.read_bytes()
    lines = original.split(b"\n")
    lines[first * 100 + 2] = lines[first * 100 + 2].replace(b'"text": "', b'"text": "changed ', 1)
    big_corpus.write_bytes(b"\n".join(lines))
    with pytest.raises(
        ValueError,
        match=rf"corpus.jsonl, from line {first * 100 + 1}: document 3 is not the one .*out.jsonl.partial holds .*"
        r"pass --force to start again",
    ):
        annotate_corpus(nlp, big_corpus, output, shard_size=100, progress=False)
    big_corpus.write_bytes(original)

    kept_docs = sum(lines_in(path) for path in kept)  # 100 each, 99 in shard 0 (it holds a blank line)
    summary = rerun(args)
    assert summary["docs_kept"] == kept_docs and summary["docs"] == DOCS - kept_docs
    assert not partial_path(output).exists() and not manifest_path(output).exists()
    annotate_corpus(nlp, big_corpus, tmp_path / "uninterrupted.jsonl", batch_size=64, progress=False)
    assert output.read_bytes() == (tmp_path / "uninterrupted.jsonl").read_bytes()
    ids = [json.loads(line)["meta"]["id"] for line in output.read_text(encoding="utf8").splitlines()]
    assert ids == list(range(DOCS))  # no record duplicated or missing


@pytest.mark.slow
def test_killed_shard_run_resumes_to_the_bytes_of_an_uninterrupted_run(pipeline, nlp, big_corpus, tmp_path):
    output = tmp_path / "shards"
    args = command(pipeline, big_corpus, output, "--shard-size", 200)
    shards = partial_path(output)
    kill_when(
        subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        lambda: shards.is_dir() and len(list(shards.glob(SHARDS))) >= 2,
    )
    assert not output.exists()
    time.sleep(0.5)
    kept = sorted(shards.glob(SHARDS))
    (shards / "shard-000009.tmp-0123abcd.spacy").write_bytes(b"half a shard")  # a shard torn by the kill
    with pytest.raises(ValueError, match="shards.partial was left by a run with other shard_size"):
        annotate_corpus(nlp, big_corpus, output, shard_size=100, progress=False)

    kept_docs = sum(len(DocBin().from_disk(path)) for path in kept)  # 200 each, 199 in shard 0 (a blank line)
    summary = rerun(args)
    assert summary["docs_kept"] == kept_docs and summary["docs"] == DOCS - kept_docs
    annotate_corpus(nlp, big_corpus, tmp_path / "uninterrupted", shard_size=200, batch_size=64, progress=False)
    names = sorted(p.name for p in (tmp_path / "uninterrupted").iterdir())
    assert names == [f"shard-{i:06d}.spacy" for i in range(-(-DOCS // 200))]
    assert sorted(p.name for p in output.iterdir()) == names
    assert all((output / name).read_bytes() == (tmp_path / "uninterrupted" / name).read_bytes() for name in names)
    assert not shards.exists() and not manifest_path(output).exists()


def bad_line_corpus(tmp_path, records):
    """A corpus of 20 records whose line 11 is not JSON, and its 20 good lines."""
    good = [json.dumps({"text": text}) for text, _ in records[:20]]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(good[:10] + ["{bad"] + good[10:]) + "\n", encoding="utf8")
    return corpus, good


def test_a_corrected_input_resumes_after_the_documents_done(nlp, records, tmp_path):
    """A bad line stops the run after the shards before it; once the line
    is fixed, the run resumes after the 8 documents done: the bytes of a
    clean run, and no partial left."""
    corpus, good = bad_line_corpus(tmp_path, records)
    options = dict(batch_size=4, shard_size=4, progress=False)
    with pytest.raises(ValueError, match="corpus.jsonl:11: not valid JSON"):
        annotate_corpus(nlp, corpus, tmp_path / "out.jsonl", **options)
    with pytest.raises(ValueError, match="corpus.jsonl:11"):  # resumed after the 8 records kept
        annotate_corpus(nlp, corpus, tmp_path / "out.jsonl", **options)
    assert sum(lines_in(path) for path in partial_path(tmp_path / "out.jsonl").iterdir()) == 8
    corpus.write_text("\n".join(good) + "\n", encoding="utf8")
    summary = annotate_corpus(nlp, corpus, tmp_path / "out.jsonl", **options)
    assert summary["docs_kept"] == 8 and summary["docs"] == 12
    assert not partial_path(tmp_path / "out.jsonl").exists()
    annotate_corpus(nlp, corpus, tmp_path / "clean.jsonl", progress=False)
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "clean.jsonl").read_bytes()


@pytest.mark.parametrize("output", ["out.jsonl", "shards"])
def test_a_changed_document_done_is_refused_and_force_restarts(pipeline, records, tmp_path, output):
    """An input whose documents done changed, or another input, is refused
    with how to go on; --force (spacy apply's name) restarts."""
    corpus, good = bad_line_corpus(tmp_path, records)
    output = tmp_path / output
    options = ["--batch-size", "4", "--no-progress", "--shard-size", "4"]
    done = cli("apply", pipeline, corpus, output, *options)
    assert "corpus.jsonl:11" in str(done.exception)
    corpus.write_text("\n".join([json.dumps({"text": "another first document"})] + good[1:]) + "\n", encoding="utf8")
    done = cli("apply", pipeline, corpus, output, *options)
    assert isinstance(done.exception, ValueError)
    assert "document 1 is not the one" in str(done.exception) and "pass --force to start again" in str(done.exception)
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(good) + "\n", encoding="utf8")
    done = cli("apply", pipeline, other, output, *options)
    assert "left by a run with other input" in str(done.exception) and "--force" in str(done.exception)
    done = cli("apply", pipeline, corpus, output, *options, "-F")
    assert done.exit_code == 0, done.exception
    assert json.loads(done.output)["docs_kept"] == 0 and json.loads(done.output)["docs"] == 20


def test_a_jsonl_partial_of_another_shard_size_is_refused(nlp, records, tmp_path):
    """Its shards hold other lines than this run's would: resuming would mix them."""
    corpus, _ = bad_line_corpus(tmp_path, records)
    with pytest.raises(ValueError, match="corpus.jsonl:11"):
        annotate_corpus(nlp, corpus, tmp_path / "out.jsonl", shard_size=4, progress=False)
    with pytest.raises(ValueError, match="out.jsonl.partial was left by a run with other shard_size"):
        annotate_corpus(nlp, corpus, tmp_path / "out.jsonl", shard_size=5, progress=False)
