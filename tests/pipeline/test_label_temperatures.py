"""``label_temperatures``, the temperature per label every entity component
has: the label of each score column, equal temperatures against the one
temperature, the written marginals against the structure modules on
scores divided here, the life through to_disk / spacy.load overrides, and
clear errors for bad keys and values; on the tiny trained models of
test_decoding_settings."""

import math

import numpy as np
import pytest
import spacy
from test_decoding_settings import (
    CONFIGS,
    NAMES,
    annotate,
    examples_of,
    fresh_docs,
    trained,  # noqa: F401  (the fixture: one tiny pipeline per component)
)
from thinc.api import Model


def spans_of(output):
    return [sorted(s[:3] for s in spans) for _, spans in output]


def written(nlp, name, **settings):
    """{(doc, start, end, label): attrs["scores"] value} of the fresh Docs with ``settings``."""
    return {(d, *s[:3]): s[3] for d, (_, spans) in enumerate(annotate(nlp, name, **settings)) for s in spans}


@pytest.mark.parametrize("name", NAMES)
def test_the_default_is_empty_in_the_config_and_the_settings(name):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(name)
    assert nlp.config["components"][name]["label_temperatures"] == {} == pipe.settings["label_temperatures"]


@pytest.mark.parametrize("name", NAMES)
def test_the_label_of_each_score_column(name, trained):
    pipe = trained(name).get_pipe(name)
    labels = list(pipe.labels)
    expected = {
        "dgm_ner": ["O", *labels],
        # BILOU: B-, I-, L-, U- of each label after the O tag
        "chain_ner": ["O", *[label for label in labels for _ in range(4)]],
        "nested_ner": labels,
        "hypergraph_ner": labels,
    }[name]
    assert pipe.score_labels() == expected
    if name == "chain_ner":
        assert len(expected) == pipe.n_tags


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("t", [0.5, 2.5])
def test_every_label_at_t_is_temperature_t(name, t, trained):
    nlp = trained(name)
    every = {label: t for label in nlp.get_pipe(name).score_labels()}
    one = annotate(nlp, name, temperature=t)
    assert annotate(nlp, name, temperature=t, label_temperatures=every) == one
    assert sum(len(spans) for _, spans in one) > 0 and one != annotate(nlp, name)


@pytest.mark.parametrize("name", NAMES)
def test_label_temperatures_divide_their_columns_and_temperature_the_rest(name, trained, monkeypatch):
    """Decoding with label temperatures is decoding at T = 1 the model's
    output with each column divided here by its label's temperature and
    every other part (transitions; hypergraph_ner's mention penalty) by
    ``temperature``."""
    nlp = trained(name)
    pipe = nlp.get_pipe(name)
    columns = pipe.score_labels()
    given = {columns[-1]: 3.0, columns[0]: 0.6}
    temperature = 1.7
    expected = annotate(nlp, name, temperature=temperature, label_temperatures=given)
    divisors = np.array([given.get(label, temperature) for label in columns], dtype=np.float32)
    model = pipe.model

    def divided(_, X, is_train):
        output = model.predict(X)
        scores, *rest = output if isinstance(output, tuple) else (output,)
        if name == "hypergraph_ner":  # (N, T * K) -> types on axis 1 of (N, T, K)
            scores = (scores.reshape(scores.shape[0], len(columns), -1) / divisors[None, :, None]).reshape(scores.shape)
        else:
            scores = scores / divisors[None, :]
        return ((scores, *(part / temperature for part in rest)) if isinstance(output, tuple) else scores), None

    monkeypatch.setattr(pipe, "model", Model("divided", divided, attrs=dict(model.attrs)))
    settings = {"temperature": 1.0, "label_temperatures": {}}
    if name == "hypergraph_ner":
        settings["mention_penalty"] = pipe.mention_penalty / temperature
    assert annotate(nlp, name, **settings) == expected


def by_hand(pipe, name, docs, divisors, temperature):
    """{(doc, start, end, label): marginal} of every span and label, from the
    component's structure on the model's scores divided here."""
    offsets = np.cumsum([0] + [len(doc) for doc in docs])
    labels = pipe.labels
    batch = pipe.read(docs)
    layout = pipe.layout(batch)
    raw = pipe.structure_scores(pipe.model.predict(pipe.model_input(batch)))
    options = pipe.structure_options()
    if name == "hypergraph_ner":
        scores = np.asarray(raw, dtype=np.float64) / divisors[None, :, None]
        options["mention_penalty"] = pipe.mention_penalty / temperature
        starts, columns = np.nonzero(np.ones(scores.shape[:2], dtype=bool))
        spans = np.stack([starts, starts], axis=1)  # the start probability: the end is not part of the key
        values = pipe.structure.marginals(scores, layout, **options).starts(np.stack([starts, starts, columns], axis=1))
    else:
        if isinstance(raw, tuple):
            scores = (
                np.asarray(raw[0], dtype=np.float64) / divisors,
                np.asarray(raw[1], dtype=np.float64) / temperature,
            )
        else:
            scores = np.asarray(raw, dtype=np.float64) / divisors
        mentions, values = pipe.structure.marginals(scores, layout, **options).mentions(-1.0)
        spans, columns = mentions[:, :2], mentions[:, 2]
    doc_of = np.searchsorted(offsets, spans[:, 0], side="right") - 1
    return {
        (int(d), int(a - offsets[d]), int(b - offsets[d] + 1), labels[int(k)]): float(v)
        for d, (a, b), k, v in zip(doc_of, spans, columns, values)
    }


@pytest.mark.parametrize("name", NAMES)
def test_written_marginals_are_the_structure_marginals_of_the_scores_divided_by_hand(name, trained):
    nlp = trained(name)
    pipe = nlp.get_pipe(name)
    columns = pipe.score_labels()
    label = pipe.labels[0]
    temperature, given = 1.5, {label: 0.4}
    divisors = np.array([given.get(column, temperature) for column in columns])
    expected = by_hand(pipe, name, fresh_docs(nlp, name), divisors, temperature)
    got = written(nlp, name, temperature=temperature, label_temperatures=given)
    one = written(nlp, name, temperature=temperature)
    assert got and any(key[3] == label for key in got)
    for (d, start, end, span_label), score in got.items():
        key = (d, start, start + 1, span_label) if name == "hypergraph_ner" else (d, start, end, span_label)
        assert score == pytest.approx(expected[key], rel=1e-5, abs=1e-6)
    changed = [key for key in got.keys() & one.keys() if key[3] == label and abs(got[key] - one[key]) > 1e-4]
    assert changed, "the label's temperature moved none of its marginals"


@pytest.mark.parametrize("name", NAMES)
def test_label_temperatures_survive_to_disk_and_are_overridden_at_load(name, trained, tmp_path):
    nlp = trained(name)
    first, last = nlp.get_pipe(name).score_labels()[0], nlp.get_pipe(name).labels[-1]
    nlp.get_pipe_config(name)["label_temperatures"] = {last: 2.0}
    nlp.get_pipe(name).settings["label_temperatures"] = {last: 2.0}
    try:
        expected = annotate(nlp, name)
        nlp.to_disk(tmp_path / "model")
    finally:  # the trained fixture stays as it was
        nlp.get_pipe_config(name)["label_temperatures"] = {}
        nlp.get_pipe(name).settings["label_temperatures"] = {}
    loaded = spacy.load(tmp_path / "model")
    assert loaded.config["components"][name]["label_temperatures"] == {last: 2.0}
    assert loaded.get_pipe(name).settings["label_temperatures"] == {last: 2.0}
    assert annotate(loaded, name) == expected != annotate(nlp, name)
    # an override at load is merged with the saved values, key by key (spaCy's config overrides)
    reloaded = spacy.load(tmp_path / "model", config={"components": {name: {"label_temperatures": {first: 0.5}}}})
    assert reloaded.get_pipe(name).settings["label_temperatures"] == {last: 2.0, first: 0.5}
    assert annotate(reloaded, name) == annotate(nlp, name, label_temperatures={last: 2.0, first: 0.5})
    back = spacy.load(tmp_path / "model", config={"components": {name: {"label_temperatures": {last: 1.0}}}})
    assert annotate(back, name) == annotate(nlp, name)
    with pytest.raises(ValueError, match="label_temperatures\\['NOPE'\\]"):
        spacy.load(tmp_path / "model", config={"components": {name: {"label_temperatures": {"NOPE": 1.0}}}})


BAD_VALUES = [
    {"PER": 0.0},
    {"PER": -1.0},
    {"PER": float("nan")},
    {"PER": float("inf")},
    {"PER": "hot"},
    {"PER": True},
    {"PER": None},
    {3: 1.0},
    ["PER", 2.0],
    2.0,
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("value", BAD_VALUES, ids=repr)
def test_bad_values_are_refused_naming_the_component(name, value):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(name)
    attempts = [lambda: type(pipe)(nlp.vocab, pipe.model, name, label_temperatures=value)]
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, float) and math.isfinite(v) for k, v in value.items()
    ):  # spaCy's config checks the others itself
        attempts.append(lambda: spacy.blank("en").add_pipe(name, config={"label_temperatures": value}))
    for attempt in attempts:
        with pytest.raises(ValueError, match="label_temperatures") as raised:
            attempt()
        assert f"'{name}'" in str(raised.value)
        assert ("> 0" in str(raised.value)) == isinstance(value, dict)


@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_key_is_refused_at_initialize_and_at_prediction(name, trained):
    """The key names no label of the scores: "O" has no column in nested_ner
    and hypergraph_ner, and chain_ner's keys are labels, not tags."""
    unknown = {"dgm_ner": "MISSING", "chain_ner": "B-PER", "nested_ner": "O", "hypergraph_ner": "O"}[name]
    nlp = trained(name)
    pipe = nlp.get_pipe(name)
    allowed = sorted(set(pipe.score_labels()))
    pipe.settings["label_temperatures"] = {unknown: 2.0}
    try:
        with pytest.raises(ValueError) as raised:
            list(nlp.pipe(fresh_docs(nlp, name)))
    finally:
        pipe.settings["label_temperatures"] = {}
    message = str(raised.value)
    assert f"'{name}'" in message and repr(unknown) in message and str(allowed) in message
    fresh = spacy.blank("en")
    fresh.add_pipe(name, config={**CONFIGS[name], "label_temperatures": {unknown: 2.0}})
    examples = examples_of(name)(fresh)
    with pytest.raises(ValueError, match=f"label_temperatures\\[{unknown!r}\\]"):
        fresh.initialize(lambda: examples)
    if name in ("dgm_ner", "chain_ner"):
        assert pipe.settings["label_temperatures"] == {} and annotate(nlp, name, label_temperatures={"O": 2.0})
