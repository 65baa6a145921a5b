"""The rows of the conformance table (test_conformance.py): one small
pipeline per registered entity component, the two-stage pipeline, a
component listening to a shared ``tok2vec``, ``dgm_ner`` on en_core_web_sm's
sourced parser and tok2vec as the own-data recipe builds it, and as the bar
spaCy's own ``ner`` (listening to a ``tok2vec``) and ``spancat``; each
trained a few steps on the tiny corpus (seed 0) and saved to a folder.

Also the canonical dump of a Doc that "the same output" compares (its
entities, every span group and the group's scores), and, run as a script,
``nlp.pipe(n_process=2)`` under a start method for the multiprocessing
checks: ``python conformance_rows.py METHOD OUT.json FOLDER...``."""

import json
import multiprocessing
import sys
from pathlib import Path
from typing import Callable, NamedTuple, Optional

import numpy as np

# Texts the checks run: every label of the tiny corpus, new words, a text with no entity.
TEXTS = [
    "John Smith visited New York",
    "Mary lives in Paris",
    "Lee Ann Womack won Single of the Year award",
    "Paris loves Mary Smith",
    "Ada met John Smith in London .",
    "nothing to see here",
    "Mary Smith lives in New York and John visited Paris",
]


class Row(NamedTuple):
    name: str  # the row's id
    factory: str  # the factory of the component under test
    component: str  # its name in the pipeline
    build: Callable[[Path], None]  # trains the pipeline and saves it to the folder
    listens: bool = False  # the component listens to a shared "tok2vec"
    ours: bool = True  # a spacy-depner component (else spaCy's own, the bar)


def dump(doc) -> dict:
    """The canonical dump of a Doc: ents and every span group as [start, end,
    label], with the group's attrs["scores"] as a list of floats (None: none)."""
    groups = {}
    for key, group in sorted(doc.spans.items()):
        scores = group.attrs.get("scores")
        groups[key] = {
            "spans": [[s.start, s.end, s.label_] for s in group],
            "scores": None if scores is None else [float(x) for x in np.asarray(scores).ravel()],
        }
    return {"ents": [[e.start, e.end, e.label_] for e in doc.ents], "spans": groups}


def assert_same(got, expected, scores: bool = True):
    """Dumps (lists of ``dump``) equal in structure, scores close; ``scores``
    False: the span groups' scores are not compared."""
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a["ents"] == b["ents"]
        assert sorted(a["spans"]) == sorted(b["spans"])
        for key in b["spans"]:
            assert a["spans"][key]["spans"] == b["spans"][key]["spans"], key
            if scores:
                assert (a["spans"][key]["scores"] is None) == (b["spans"][key]["scores"] is None), key
                if b["spans"][key]["scores"] is not None:
                    assert np.allclose(a["spans"][key]["scores"], b["spans"][key]["scores"], rtol=1e-5, atol=1e-6), key


def dumps(nlp, texts=TEXTS, **kwargs):
    return [dump(doc) for doc in nlp.pipe(texts, **kwargs)]


# --- building the rows -----------------------------------------------------------------------


def tiny_examples(nlp, key: Optional[str] = None):
    """The tiny corpus as Examples: gold in doc.ents, or in the span group ``key``."""
    from test_decoding_settings import nested_example
    from tiny_corpus import TINY, make_example

    examples = [make_example(nlp, *row) for row in TINY]
    if key is None:
        return examples
    return [
        nested_example(nlp, key, eg.reference.text.split(), [(e.start, e.end, e.label_) for e in eg.reference.ents])
        for eg in examples
    ]


def train_pipeline(components, make_examples, steps: int):
    """A blank English pipeline with ``components`` [(factory, config)] trained ``steps`` times (seed 0)."""
    import spacy
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    nlp = spacy.blank("en")
    for factory, config in components:
        nlp.add_pipe(factory, config=config)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    return nlp


def listener(width: int = 32) -> dict:
    return {"@architectures": "spacy.Tok2VecListener.v1", "width": width, "upstream": "*"}


def single(factory: str, steps: int = 20, key: Optional[str] = None):
    def build(folder: Path):
        from test_decoding_settings import CONFIGS

        train_pipeline([(factory, CONFIGS[factory])], lambda nlp: tiny_examples(nlp, key), steps).to_disk(folder)

    return build


def build_two_stage(folder: Path):
    """[chain_ner, first_stage_spans, second_stage]: the second stage trained on the gold entities as first stage."""
    from spacy.util import fix_random_seed
    from test_decoding_settings import CONFIGS
    from test_two_stage import example, second_stage_nlp
    from tiny_corpus import TINY

    nlp = train_pipeline([("chain_ner", CONFIGS["chain_ner"])], tiny_examples, 20)
    second = second_stage_nlp()
    fix_random_seed(0)
    golds = [[(e.start, e.end, e.label_) for e in eg.reference.ents] for eg in tiny_examples(second)]
    examples = [example(second, row[0], gold, gold) for row, gold in zip(TINY, golds)]
    optimizer = second.initialize(lambda: examples)
    for _ in range(20):
        second.update(examples, sgd=optimizer)
    nlp.add_pipe("first_stage_spans")
    nlp.add_pipe("chain_ner", name="second_stage", source=second)
    nlp.to_disk(folder)


def build_listener(folder: Path):
    from test_decoding_settings import CONFIGS
    from tiny_corpus import SMALL_TOK2VEC

    nested = {**CONFIGS["nested_ner"], "model": {**CONFIGS["nested_ner"]["model"], "tok2vec": listener()}}
    train_pipeline(
        [("tok2vec", {"model": SMALL_TOK2VEC}), ("nested_ner", nested)],
        lambda nlp: tiny_examples(nlp, "nested_ner"),
        20,
    ).to_disk(folder)


def build_ner(folder: Path):
    from tiny_corpus import SMALL_TOK2VEC

    model = {
        "@architectures": "spacy.TransitionBasedParser.v2",
        "state_type": "ner",
        "extra_state_tokens": False,
        "hidden_width": 32,
        "maxout_pieces": 2,
        "use_upper": True,
        "nO": None,
        "tok2vec": listener(),
    }
    train_pipeline([("tok2vec", {"model": SMALL_TOK2VEC}), ("ner", {"model": model})], tiny_examples, 20).to_disk(
        folder
    )


def build_sentence_ner(folder: Path):
    """[sentencizer, sentence_ner]: the ner of ``build_ner`` (listening to a tok2vec) run one sentence at a time."""
    import spacy

    source = folder.parent / f"{folder.name}_source"
    build_ner(source)
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("sentence_ner", config={"pipeline": str(source)})
    nlp.initialize()
    nlp.to_disk(folder)


def build_spancat(folder: Path):
    from tiny_corpus import SMALL_TOK2VEC

    model = {
        "@architectures": "spacy.SpanCategorizer.v1",
        "tok2vec": SMALL_TOK2VEC,
        "reducer": {"@layers": "spacy.mean_max_reducer.v1", "hidden_size": 32},
        "scorer": {"@layers": "spacy.LinearLogistic.v1", "nO": None, "nI": None},
    }
    train_pipeline(
        [("spancat", {"spans_key": "sc", "model": model})], lambda nlp: tiny_examples(nlp, "sc"), 40
    ).to_disk(folder)


def build_own_data(folder: Path):
    """configs/own_data/own_data_dgm.cfg on en_core_web_sm with ``spacy train``, a few steps on the tiny corpus."""
    from spacy.cli.train import train
    from test_own_data_recipe import ROOT, SM, training_overrides
    from tiny_corpus import write_tiny_docbin

    data = str(write_tiny_docbin(folder.parent / f"{folder.name}.spacy"))
    train(
        ROOT / "configs" / "own_data" / "own_data_dgm.cfg",
        folder.parent / f"{folder.name}_training",
        overrides={
            "paths.train": data,
            "paths.dev": data,
            "paths.pretrained": str(SM),
            **training_overrides(folder.parent / f"{folder.name}.jsonl", 12, 12),
        },
    )
    (folder.parent / f"{folder.name}_training" / "model-last").rename(folder)


ROWS = [
    Row("chain_ner", "chain_ner", "chain_ner", single("chain_ner")),
    Row("dgm_ner", "dgm_ner", "dgm_ner", single("dgm_ner")),
    Row("nested_ner", "nested_ner", "nested_ner", single("nested_ner", key="nested_ner")),
    Row("hypergraph_ner", "hypergraph_ner", "hypergraph_ner", single("hypergraph_ner", key="hypergraph_ner")),
    Row("two_stage", "chain_ner", "second_stage", build_two_stage),
    Row("nested_ner_listener", "nested_ner", "nested_ner", build_listener, listens=True),
    Row("own_data_dgm", "dgm_ner", "dgm_ner", build_own_data, listens=True),
    Row("sentence_ner", "sentence_ner", "sentence_ner", build_sentence_ner),
    Row("spacy_ner", "ner", "ner", build_ner, listens=True, ours=False),
    Row("spacy_spancat", "spancat", "spancat", build_spancat, ours=False),
]
BY_NAME = {row.name: row for row in ROWS}


def pipe_in_processes(method: str, folders) -> dict:
    """{folder: the dumps of TEXTS by nlp.pipe(n_process=2), or the error as text}."""
    import spacy

    multiprocessing.set_start_method(method, force=True)
    out = {}
    for folder in folders:
        try:
            out[folder] = dumps(spacy.load(folder), n_process=2, batch_size=2)
        except Exception as error:  # reported to the test, which fails on it
            out[folder] = f"{type(error).__name__}: {error}"
    return out


if __name__ == "__main__":
    method, output, *paths = sys.argv[1:]
    Path(output).write_text(json.dumps(pipe_in_processes(method, paths)))
