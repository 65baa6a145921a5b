"""`spacy train`'s table (spaCy's console logger, which cuts a column name
longer than 13 characters to its first 10 and "...") tells every score
column apart: the nested components' default score weights and every
training config's score weights have distinct headers, and the short span
score names carry the same values as the long ones that `spacy evaluate`
and the studies read."""

import io
import os
from pathlib import Path

import pytest
import spacy
from spacy.training import Example
from spacy.training.loggers import console_logger
from spacy.util import load_config, load_model_from_config

import spacy_depner  # noqa: F401  (registers the factories)
from spacy_depner.pipeline.score_names import log_keys

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
PRETRAINED = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"


def table_header(nlp):
    """The header row of spaCy's console logger for NLP, as `spacy train` writes it."""
    out = io.StringIO()
    console_logger(progress_bar=None)(nlp, out, io.StringIO())
    return out.getvalue().splitlines()[0].split()


def score_headers(nlp):
    columns = table_header(nlp)
    return columns[
        columns.index("#") + 1 + sum(1 for name, pipe in nlp.pipeline if getattr(pipe, "is_trainable", False)) * 2 : -1
    ]


@pytest.mark.parametrize("factory", ["nested_ner", "hypergraph_ner", "dgm_ner", "chain_ner"])
def test_default_score_columns_differ(factory):
    nlp = spacy.blank("en")
    nlp.add_pipe(factory)
    headers = score_headers(nlp)
    assert len(headers) >= 3 and len(set(headers)) == len(headers), headers
    if factory in ("nested_ner", "hypergraph_ner"):
        assert {h[0] for h in headers} == {"P", "R", "F"}


@pytest.mark.parametrize(
    "path", sorted(CONFIGS.glob("*.cfg")) + sorted(CONFIGS.glob("own_data/*.cfg")), ids=lambda p: p.name
)
def test_every_configs_score_columns_differ(path):
    overrides = {}
    if "own_data" in path.name:  # the own-data configs source components from a pretrained pipeline
        if "[components.parser]" in path.read_text() and not (PRETRAINED / "config.cfg").is_file():
            pytest.skip(f"no pretrained pipeline at {PRETRAINED}")
        overrides["paths.pretrained"] = str(PRETRAINED) if (PRETRAINED / "config.cfg").is_file() else None
        if "trained_ner =" in path.read_text():  # a ner trained on the user's labels: any pipeline with a ner
            overrides["paths.trained_ner"] = overrides["paths.pretrained"]
    config = load_config(path, overrides=overrides)
    weights = {k: v for k, v in config["training"]["score_weights"].items() if v is not None}
    if not weights:
        pytest.skip("no score weights of its own")
    nlp = load_model_from_config(config, auto_fill=True, validate=False)
    headers = score_headers(nlp)
    assert len(set(headers)) == len(headers), headers


def test_short_span_scores_are_the_long_ones():
    nlp = spacy.blank("en")
    nested = nlp.add_pipe("nested_ner")
    doc = nlp.make_doc("John Smith visited New York")
    reference = doc.copy()
    reference.spans["nested_ner"] = [reference.char_span(0, 10, "PER"), reference.char_span(19, 27, "LOC")]
    predicted = doc.copy()
    predicted.spans["nested_ner"] = [predicted.char_span(0, 10, "PER")]
    scores = nested.score([Example(predicted, reference)])
    for long, short in log_keys("nested_ner").items():
        assert scores[short] == scores[long]
    assert (scores["p_nested_ner"], scores["r_nested_ner"]) == (1.0, 0.5)
