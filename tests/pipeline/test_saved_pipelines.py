"""Pipelines saved by an earlier version (tests/data/saved_pipelines, written
by its make_saved_pipelines.py with spacy-depner 0.1.0) load and predict
what they predicted then: the same entities and span groups, the same
scores, with MAP and posterior decoding."""

from pathlib import Path

import numpy as np
import pytest
import spacy
import srsly
from test_decoding_settings import fresh_docs

SAVED = Path(__file__).parents[1] / "data" / "saved_pipelines"
# fixture folder -> its component
PIPELINES = {
    "dgm_ner": "dgm_ner",
    "dgm_ner+dep": "dgm_ner",
    "chain_ner": "chain_ner",
    "nested_ner": "nested_ner",
    "hypergraph_ner": "hypergraph_ner",
}


def predictions(nlp, name):
    """{decoding: [{"ents": [[start, end, label]], "spans": {key: [[start, end, label, score]]}}]} of fresh Docs."""
    pipe = nlp.get_pipe(name)
    result = {}
    for decoding in ("map", "posterior"):
        pipe.settings["decoding"] = decoding
        docs = list(nlp.pipe(fresh_docs(nlp, name)))
        result[decoding] = [
            {
                "ents": [[e.start, e.end, e.label_] for e in doc.ents],
                "spans": {
                    key: [
                        [s.start, s.end, s.label_, float(score)]
                        for s, score in zip(group, group.attrs.get("scores", [None] * len(group)))
                    ]
                    for key, group in sorted(doc.spans.items())
                },
            }
            for doc in docs
        ]
    pipe.settings["decoding"] = "map"
    return result


@pytest.mark.parametrize("folder", sorted(PIPELINES))
def test_a_pipeline_saved_before_loads_and_predicts_the_same(folder):
    expected = srsly.read_json(SAVED / "expected.json")[folder]
    nlp = spacy.load(SAVED / folder)
    got = predictions(nlp, PIPELINES[folder])
    assert any(doc["ents"] or any(doc["spans"].values()) for doc in expected["map"]), "the fixture predicts nothing"
    for decoding in ("map", "posterior"):
        for then, now in zip(expected[decoding], got[decoding], strict=True):
            assert now["ents"] == then["ents"]
            assert sorted(now["spans"]) == sorted(then["spans"])
            for key in then["spans"]:
                assert [s[:3] for s in now["spans"][key]] == [s[:3] for s in then["spans"][key]]
                assert np.allclose(
                    [s[3] for s in now["spans"][key]], [s[3] for s in then["spans"][key]], rtol=1e-5, atol=1e-6
                )
