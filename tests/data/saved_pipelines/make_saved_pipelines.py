"""Writes the saved-pipeline fixtures of tests/pipeline/test_saved_pipelines.py:
one tiny trained pipeline per component (and dgm_ner with the DGM lattice and
dependency features), saved with spacy-depner 0.1.0 as of 2026-11-25, and what
each predicted then (expected.json). Run once, from the repository root:
``python tests/data/saved_pipelines/make_saved_pipelines.py``; the committed
folders are what later versions must still load and predict identically."""

import sys
from pathlib import Path

import srsly

HERE = Path(__file__).parent
sys.path[:0] = [str(HERE.parents[1]), str(HERE.parents[1] / "pipeline")]

from test_decoding_settings import CONFIGS, examples_of  # noqa: E402
from test_saved_pipelines import PIPELINES, predictions  # noqa: E402
from tiny_corpus import SMALL_TOK2VEC, train_component  # noqa: E402

TOK2VEC = {**SMALL_TOK2VEC, "embed_size": 64, "width": 16}  # small files
VARIANTS = {name: {**config, "model": {**config["model"], "tok2vec": TOK2VEC}} for name, config in CONFIGS.items()}
VARIANTS["dgm_ner+dep"] = {
    "suggester": {"@misc": "spacy_depner.dgm_suggester.v1", "max_length": None},
    "model": {"@architectures": "spacy_depner.SpanScorer.v1", "dependency_features": True, "tok2vec": TOK2VEC},
}


def main() -> None:
    expected = {}
    for folder, name in PIPELINES.items():
        nlp = train_component(name, VARIANTS[folder], examples_of(name), 8)[0]
        nlp.to_disk(HERE / folder)
        expected[folder] = predictions(nlp, name)
    srsly.write_json(HERE / "expected.json", expected)


if __name__ == "__main__":
    main()
