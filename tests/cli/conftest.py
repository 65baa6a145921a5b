"""Fixtures of the annotate tests: a tiny trained pipeline saved to disk,
and JSONL corpora of random records."""

import json
import random
from pathlib import Path

import pytest
import spacy
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example

WORDS = sorted({word for words, *_ in TINY for word in words} | {"Zoë", "Müller", "visited", "in", "."})


def train_tiny_pipeline(path: Path, steps: int = 30) -> Path:
    """A parser and a dgm_ner on its trees (the DGM lattice needs them),
    trained ``steps`` times on the tiny corpus (seed 0) and saved to ``path``."""
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "parser",
        config={
            "min_action_freq": 1,
            "model": {
                "@architectures": "spacy.TransitionBasedParser.v2",
                "state_type": "parser",
                "extra_state_tokens": False,
                "hidden_width": 32,
                "maxout_pieces": 2,
                "use_upper": True,
                "tok2vec": SMALL_TOK2VEC,
            },
        },
    )
    nlp.add_pipe(
        "dgm_ner", config={"model": {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": SMALL_TOK2VEC}}
    )
    examples = [make_example(nlp, *row, trees=False) for row in TINY]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer, annotates=["parser"])
    nlp.to_disk(path)
    return path


def random_records(n: int, seed: int = 0):
    """``n`` (text, meta) pairs of random words (some empty texts), meta with nested values."""
    rng = random.Random(seed)
    return [
        (" ".join(rng.choices(WORDS, k=rng.choice([0, 1, 5, 12, 30]))), {"id": i, "source": ["web", i % 3]})
        for i in range(n)
    ]


def write_jsonl(path: Path, records) -> Path:
    """One ``{"id", "text", "source"}`` line per record (the text key in the middle), and one blank line."""
    lines = [
        json.dumps({"id": meta["id"], "text": text, "source": meta["source"]}, ensure_ascii=False)
        for text, meta in records
    ]
    path.write_text("\n".join(lines[:3] + [""] + lines[3:]) + "\n", encoding="utf8")
    return path


@pytest.fixture(scope="session")
def pipeline(tmp_path_factory):
    return train_tiny_pipeline(tmp_path_factory.mktemp("annotate") / "pipeline")


@pytest.fixture(scope="session")
def nlp(pipeline):
    return spacy.load(pipeline)


@pytest.fixture(scope="session")
def records():
    return random_records(37)


@pytest.fixture
def corpus(tmp_path, records):
    return write_jsonl(tmp_path / "corpus.jsonl", records)


@pytest.fixture
def random_corpus():
    """A function (path, n, seed) writing ``n`` random records to a JSONL corpus at ``path``."""
    return lambda path, n, seed=0: write_jsonl(path, random_records(n, seed))
