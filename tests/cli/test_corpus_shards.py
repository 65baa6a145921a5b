"""The machinery of corpus runs: input shards read by each process itself
(their records are exactly the input's, at any block size, line ending or
blank line), and the worker pool (every shard run once, progress summed,
one thread per worker, a worker's error or death raised in the parent)."""

import json
import os
import random

import pytest
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from spacy_depner.inference import input_shards
from spacy_depner.inference.corpus import read_input
from spacy_depner.inference.input_shards import ShardReader, plan_shards, shard_records
from spacy_depner.inference.shard_pool import run_shards


def random_lines(rng: random.Random, n: int, kind: str) -> bytes:
    lines = []
    for i in range(n):
        text = " ".join(rng.choices(["a", "bé", "c\u2028d", "x" * rng.randrange(1, 40)], k=rng.randrange(0, 6)))
        if kind == "jsonl":
            text = "" if rng.random() < 0.1 else json.dumps({"text": text, "id": i}, ensure_ascii=False)
        lines.append(text.encode("utf8") + (b"\r\n" if rng.random() < 0.2 else b"\n"))
    data = b"".join(lines)
    return data[:-1] if data and rng.random() < 0.5 else data  # the last line without its newline, sometimes


@pytest.mark.parametrize("kind", ["txt", "jsonl"])
def test_line_shards_hold_exactly_the_inputs_records_at_any_block_size(tmp_path, monkeypatch, kind):
    rng = random.Random(0)
    for trial in range(60):
        path = tmp_path / f"corpus{trial}.{kind}"
        n = rng.randrange(0, 30)
        path.write_bytes(random_lines(rng, n, kind))
        monkeypatch.setattr(input_shards, "BLOCK", rng.randrange(1, 64))
        shard_size = rng.randrange(1, 8)
        shards = plan_shards(path, shard_size)
        data = path.read_bytes()
        count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)  # lines as a binary file reads them
        assert len(shards) == -(-count // shard_size)
        assert [s.first_line for s in shards] == [1 + i * shard_size for i in range(len(shards))]
        assert b"".join(path.read_bytes()[s.start : s.end] for s in shards) == path.read_bytes()
        assert list(shard_records(shards, Vocab())) == list(read_input(path, Vocab()))


def test_a_bad_line_is_named_by_its_line_in_the_file(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"text": str(i)}) + "\n" for i in range(10)) + "{bad\n", encoding="utf8")
    shard = plan_shards(path, 3)[-1]
    assert shard.first_line == 10
    with pytest.raises(ValueError, match=r"corpus.jsonl:11: not valid JSON"):
        list(ShardReader().records(shard, Vocab()))


def test_docbin_shards_hold_exactly_the_files_docs(tmp_path):
    vocab = Vocab()
    (tmp_path / "docs").mkdir()
    texts = []
    for number, count in enumerate([7, 0, 3]):
        docs = [Doc(vocab, words=[f"w{number}", str(i)]) for i in range(count)]
        for i, doc in enumerate(docs):
            doc.user_data["meta"] = {"i": i}
        texts += [doc.text for doc in docs]
        DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "docs" / f"{number}.spacy")
    shards = plan_shards(tmp_path / "docs", 3)
    assert [(s.start, s.end) for s in shards] == [(0, 3), (3, 6), (6, 7), (0, 3)]
    records = list(shard_records(shards, vocab))
    assert [doc.text for doc, _ in records] == texts
    assert [meta for _, meta in records] == [{"i": i} for i in range(7)] + [{"i": i} for i in range(3)]


class WriteJob:
    """Writes each shard's index and this process's BLAS thread limit to a file; fails or dies on request."""

    def __init__(self, folder, fail=None, die=None):
        self.folder, self.fail, self.die = folder, fail, die

    def run(self, shard, report):
        from threadpoolctl import threadpool_info

        if shard.index == self.fail:
            raise ValueError(f"{shard.path}:{shard.first_line}: bad line")
        if shard.index == self.die:
            os._exit(3)
        threads = max((pool["num_threads"] for pool in threadpool_info()), default=1)
        (self.folder / f"{shard.index}.json").write_text(json.dumps({"pid": os.getpid(), "threads": threads}))
        report(shard.end - shard.start, 1)


@pytest.fixture
def lines(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("".join(f"line {i}\n" for i in range(20)))
    return plan_shards(path, 2)


@pytest.mark.parametrize("n_process", [1, 2, 3])
def test_every_shard_left_runs_once_and_progress_adds_up(tmp_path, lines, n_process):
    progress = []
    pending = [i for i in range(10) if i != 4]
    run_shards(WriteJob(tmp_path), lines, pending, n_process, lambda docs, words: progress.append((docs, words)))
    done = sorted(int(p.stem) for p in tmp_path.glob("*.json"))
    assert done == pending
    assert sum(docs for docs, _ in progress) == sum(lines[i].end - lines[i].start for i in pending)
    workers = {json.loads(p.read_text())["pid"] for p in tmp_path.glob("*.json")}
    if n_process == 1:
        assert workers == {os.getpid()}
    else:
        assert os.getpid() not in workers and 1 <= len(workers) <= n_process
        assert all(json.loads(p.read_text())["threads"] == 1 for p in tmp_path.glob("*.json"))


def test_a_workers_error_is_raised_as_it_was_and_a_dead_worker_is_named(tmp_path, lines):
    with pytest.raises(ValueError, match=r"corpus.txt:11: bad line"):
        run_shards(WriteJob(tmp_path, fail=5), lines, range(10), 2, lambda docs, words: None)
    with pytest.raises(RuntimeError, match=r"worker process .* ended \(exit code 3\).*rerun to continue"):
        run_shards(WriteJob(tmp_path, die=5), lines, range(10), 2, lambda docs, words: None)
