"""The confidence settings every entity component shares (``temperature``,
``threshold``, ``decoding``, ``posterior_penalty``): defaults in the config,
clear errors for bad values, what each does to the output, and their life
through to_disk / spacy.load overrides, on tiny trained models of dgm_ner,
chain_ner, nested_ner and hypergraph_ner."""

import math
import os

import numpy as np
import pytest
import spacy
import srsly
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import Model
from tiny_corpus import SMALL_TOK2VEC, TINY, input_doc, make_example, train_component

# words, mentions (start, end exclusive, label): nested, and overlapping of two types
NESTED = [
    ("the University of Paris hospital".split(), [(1, 4, "ORG"), (3, 4, "LOC"), (0, 5, "FAC")]),
    ("Mary saw the Bank of England".split(), [(0, 1, "PER"), (3, 6, "ORG"), (5, 6, "LOC")]),
    ("New York Times Square".split(), [(0, 2, "LOC"), (0, 3, "ORG"), (1, 4, "FAC")]),
    ("Paris is big".split(), [(0, 1, "LOC")]),
]
FLAT = ("dgm_ner", "chain_ner")
NAMES = ("dgm_ner", "chain_ner", "nested_ner", "hypergraph_ner")
CONFIGS = {
    "dgm_ner": {
        "suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 4},
        "model": {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": SMALL_TOK2VEC},
    },
    "chain_ner": {"model": {"@architectures": "spacy_depner.TagScorer.v1", "tok2vec": SMALL_TOK2VEC}},
    "nested_ner": {
        "ents": "outermost",
        "model": {"@architectures": "spacy_depner.MentionScorer.v1", "tok2vec": SMALL_TOK2VEC},
    },
    "hypergraph_ner": {
        "ents": "outermost",
        "mention_penalty": 0.3,
        "model": {"@architectures": "spacy_depner.TokenScorer.v1", "hidden_width": 32, "tok2vec": SMALL_TOK2VEC},
    },
}
DEFAULTS = {"temperature": 1.0, "threshold": 0.0, "decoding": "map", "posterior_penalty": 0.5}


def nested_example(nlp, name, words, found):
    reference = Doc(nlp.vocab, words=words)
    reference.spans[name] = [Span(reference, s, e, label=label) for s, e, label in found]
    return Example(Doc(nlp.vocab, words=words), reference)


def examples_of(name):
    if name in FLAT:
        return lambda nlp: [make_example(nlp, *row) for row in TINY]
    return lambda nlp: [nested_example(nlp, name, *row) for row in NESTED]


def fresh_docs(nlp, name):
    if name in FLAT:
        return [input_doc(nlp, words, heads, deps) for words, heads, deps, _ in TINY]
    return [Doc(nlp.vocab, words=words) for words, _ in NESTED]


@pytest.fixture(scope="module")
def trained():
    """One tiny pipeline per component, trained once (a few steps: the model
    is far from certain, so the marginals are spread)."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = train_component(name, CONFIGS[name], examples_of(name), 8)[0]
        return cache[name]

    return get


def annotate(nlp, name, **settings):
    """(doc.ents, the span group as (start, end, label, score)) of each fresh
    Doc, with the component's settings changed to ``settings`` meanwhile."""
    pipe = nlp.get_pipe(name)
    before = dict(pipe.settings)
    pipe.settings.update(settings)
    try:
        docs = list(nlp.pipe(fresh_docs(nlp, name)))
    finally:
        pipe.settings.clear()
        pipe.settings.update(before)
    out = []
    for doc in docs:
        group = doc.spans[name]
        scores = group.attrs.get("scores")
        spans = [(s.start, s.end, s.label_, None if scores is None else float(scores[i])) for i, s in enumerate(group)]
        out.append(([(e.start, e.end, e.label_) for e in doc.ents], spans))
    return out


def span_set(output):
    return [sorted(s[:3] for s in spans) for _, spans in output]


@pytest.mark.parametrize("name", NAMES)
def test_defaults_are_in_the_config_and_the_settings(name):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(name)
    for key, value in DEFAULTS.items():
        assert nlp.config["components"][name][key] == value
        assert pipe.settings[key] == value


BAD = [
    ("temperature", 0.0, "must be > 0"),
    ("temperature", -1.0, "must be > 0"),
    ("temperature", float("nan"), "finite"),
    ("temperature", float("inf"), "finite"),
    ("temperature", "hot", "finite"),
    ("temperature", True, "finite"),
    ("threshold", -0.1, r"\[0, 1\]"),
    ("threshold", 1.5, r"\[0, 1\]"),
    ("threshold", float("nan"), "finite"),
    ("decoding", "mbr", "posterior"),
    ("decoding", None, "posterior"),
    ("posterior_penalty", -0.5, ">= 0"),
    ("posterior_penalty", float("inf"), "finite"),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("key,value,problem", BAD)
def test_bad_values_are_refused_naming_component_setting_and_value(name, key, value, problem):
    """Through the config (JSON values) and through the component's class
    (spaCy's config refuses NaN and inf itself)."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe(name)
    attempts = [lambda: type(pipe)(nlp.vocab, pipe.model, name, **{key: value})]
    if isinstance(value, str) and key == "decoding" or isinstance(value, float) and math.isfinite(value):
        attempts.append(lambda: spacy.blank("en").add_pipe(name, config={key: value}))
    for attempt in attempts:
        with pytest.raises(ValueError, match=problem) as raised:
            attempt()
        message = str(raised.value)
        assert f"'{name}'" in message and key in message and repr(value) in message


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_value_set_on_a_live_component_is_refused_at_prediction(name, trained):
    nlp = trained(name)
    pipe = nlp.get_pipe(name)
    pipe.settings["temperature"] = 0.0
    try:
        with pytest.raises(ValueError, match="temperature = 0.0"):
            list(nlp.pipe(fresh_docs(nlp, name)))
    finally:
        pipe.settings["temperature"] = 1.0


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("temperature", [1.0, 0.5, 3.0])
def test_temperature_divides_every_score_the_model_returns(name, temperature, trained, monkeypatch):
    """Decoding at temperature T is decoding at 1 the model's output divided
    by T (with hypergraph_ner's mention penalty, which is part of the scores):
    T = 1 is exactly the output of the model as it is."""
    nlp = trained(name)
    pipe = nlp.get_pipe(name)
    expected = annotate(nlp, name, temperature=temperature)
    model = pipe.model

    def divided(_, X, is_train):
        output = model.predict(X)
        return (
            tuple(part / temperature for part in output) if isinstance(output, tuple) else output / temperature
        ), None

    monkeypatch.setattr(pipe, "model", Model("divided", divided, attrs=dict(model.attrs)))
    settings = {"temperature": 1.0}
    if name == "hypergraph_ner":
        settings["mention_penalty"] = pipe.mention_penalty / temperature
    assert annotate(nlp, name, **settings) == expected


@pytest.mark.parametrize("name", NAMES)
def test_map_spans_do_not_change_with_temperature_but_marginals_sharpen(name, trained):
    nlp = trained(name)
    outputs = {t: annotate(nlp, name, temperature=t) for t in (0.2, 1.0, 5.0)}
    assert span_set(outputs[0.2]) == span_set(outputs[1.0]) == span_set(outputs[5.0])
    assert (
        [ents for ents, _ in outputs[0.2]] == [ents for ents, _ in outputs[1.0]] == [ents for ents, _ in outputs[5.0]]
    )
    mean = {t: np.mean([s[3] for _, spans in out for s in spans]) for t, out in outputs.items()}
    assert sum(len(spans) for _, spans in outputs[1.0]) > 0
    assert mean[0.2] > mean[1.0] > mean[5.0]
    lowest = min(s[3] for _, spans in outputs[0.2] for s in spans)
    assert lowest > max(s[3] for _, spans in outputs[5.0] for s in spans) or mean[0.2] > 0.9


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("written", [True, False])
def test_threshold_drops_exactly_the_spans_below_it(name, written, trained):
    nlp = trained(name)
    everything = annotate(nlp, name)
    probabilities = sorted(s[3] for _, spans in everything for s in spans)
    assert len(set(probabilities)) >= 3, probabilities
    threshold = float(np.float32(probabilities[len(probabilities) // 2]))  # a score itself: >= keeps it
    kept = annotate(nlp, name, threshold=threshold, probabilities=written)
    assert any(s[3] < threshold for _, spans in everything for s in spans)
    for (_, all_spans), (ents, spans) in zip(everything, kept):
        expected = [s for s in all_spans if s[3] >= threshold]
        assert [s[:3] for s in spans] == [s[:3] for s in expected]
        assert [s[3] for s in spans] == ([s[3] for s in expected] if written else [None] * len(expected))
        if name in FLAT:
            assert ents == [s[:3] for s in expected]
        else:  # the flat view of the kept mentions
            assert set(ents) <= {s[:3] for s in expected}
            assert not expected or ents
    assert annotate(nlp, name, threshold=0.0) == everything
    assert all(spans == [] for _, spans in annotate(nlp, name, threshold=1.0)) or max(probabilities) == 1.0


@pytest.mark.parametrize("name", NAMES)
def test_settings_survive_to_disk_and_are_overridden_at_load(name, trained, tmp_path):
    nlp = trained(name)
    given = {"temperature": 2.5, "threshold": 0.25, "decoding": "posterior", "posterior_penalty": 0.4}
    for key, value in given.items():
        nlp.get_pipe_config(name)[key] = value
        nlp.get_pipe(name).settings[key] = value
    expected = annotate(nlp, name)
    nlp.to_disk(tmp_path / "model")
    for key in given:  # the trained fixture stays as it was
        nlp.get_pipe_config(name)[key] = DEFAULTS[key]
        nlp.get_pipe(name).settings[key] = DEFAULTS[key]
    loaded = spacy.load(tmp_path / "model")
    for key, value in given.items():
        assert loaded.config["components"][name][key] == value == loaded.get_pipe(name).settings[key]
    assert annotate(loaded, name) == expected
    override = {"temperature": 0.5, "threshold": 0.0, "decoding": "map", "posterior_penalty": 0.0}
    reloaded = spacy.load(tmp_path / "model", config={"components": {name: override}})
    for key, value in override.items():
        assert reloaded.config["components"][name][key] == value == reloaded.get_pipe(name).settings[key]
    assert span_set(annotate(reloaded, name)) == span_set(annotate(nlp, name))
    with pytest.raises(ValueError, match="threshold"):
        spacy.load(tmp_path / "model", config={"components": {name: {"threshold": 2.0}}})


# ---------------------------------------------------------------------------
# Posterior decoding
# ---------------------------------------------------------------------------


def all_flat_marginals(nlp, name, docs):
    """{(doc index, start, end, label): marginal} of every span the flat
    component's model can predict, from its own structure (dgm_ner: the
    lattice's marginals; chain_ner: every entity of the chain)."""
    pipe = nlp.get_pipe(name)
    labels = pipe.labels
    offsets = np.cumsum([0] + [len(doc) for doc in docs])
    batch = pipe.read(docs)
    scores = pipe.structure_scores(pipe.model.predict(pipe.model_input(batch)))
    mentions, values = pipe.structure.marginals(scores, pipe.layout(batch), **pipe.structure_options()).mentions(-1.0)
    spans, columns = mentions[:, :2], mentions[:, 2]
    doc_of = np.searchsorted(offsets, spans[:, 0], side="right") - 1
    return {
        (int(d), int(a - offsets[d]), int(b - offsets[d] + 1), labels[int(k)]): float(v)
        for d, (a, b), k, v in zip(doc_of, spans, columns, values)
    }


@pytest.mark.parametrize("name", FLAT)
def test_posterior_one_half_on_flat_models_predicts_exactly_the_spans_above_one_half(name, trained):
    """Overlapping spans of a flat model exclude each other, so at most one
    of them is above 1/2: posterior decoding with penalty 1/2 predicts
    exactly the spans whose marginal exceeds 1/2, and writes their marginals."""
    nlp = trained(name)
    docs = fresh_docs(nlp, name)
    marginals = all_flat_marginals(nlp, name, docs)
    likely = {key: value for key, value in marginals.items() if value > 0.5}
    assert likely and len(likely) < len(marginals)
    output = annotate(nlp, name, decoding="posterior", posterior_penalty=0.5)
    predicted = {(d, *s[:3]): s[3] for d, (_, spans) in enumerate(output) for s in spans}
    assert set(predicted) == set(likely)
    for key, score in predicted.items():
        assert score == pytest.approx(likely[key], rel=1e-6)  # float32 in attrs["scores"]
    assert [ents for ents, _ in output] == [[s[:3] for s in spans] for _, spans in output]


@pytest.mark.parametrize("name", NAMES)
def test_posterior_penalty_trades_recall_for_precision(name, trained):
    """A higher penalty predicts fewer spans, each with a marginal above it."""
    nlp = trained(name)
    counts = []
    for penalty in (0.0, 0.5, 0.999):
        output = annotate(nlp, name, decoding="posterior", posterior_penalty=penalty)
        counts.append(sum(len(spans) for _, spans in output))
        if name != "hypergraph_ner":  # its attrs["scores"] is the probability of a mention start
            assert all(s[3] > penalty - 1e-6 for _, spans in output for s in spans)
    assert counts[0] >= counts[1] >= counts[2] and counts[0] > counts[2]


def test_hypergraph_posterior_decoding_needs_a_model_without_heads():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match='heads = true and decoding = "posterior"'):
        nlp.add_pipe("hypergraph_ner", config={"heads": True, "decoding": "posterior"})


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_trained_tiny_model_decodes_posterior_and_scores_with_nlp_evaluate(name):
    nlp, pipe, examples, _ = train_component(name, {**CONFIGS[name], "decoding": "posterior"}, examples_of(name), 40)
    assert pipe.settings["decoding"] == "posterior"
    key = "ents_f" if name in FLAT else f"spans_{name}_f"
    posterior = nlp.evaluate(examples)[key]
    pipe.settings["decoding"] = "map"
    map_f = nlp.evaluate(examples)[key]
    pipe.settings["decoding"] = "posterior"
    # it learnt the corpus (nested_ner's quadratic space cannot hold the crossing pair of NESTED[2])
    assert posterior == map_f == (1.0 if name != "nested_ner" else pytest.approx(18 / 19))
    for doc in nlp.pipe(fresh_docs(nlp, name)):
        spans = doc.spans[name]
        assert len(spans) and np.all(spans.attrs["scores"] > (0.5 if name != "hypergraph_ner" else 0.0))


@pytest.mark.slow
def test_spacy_train_with_posterior_decoding_in_the_config(tmp_path):
    """The own-data recipe (configs/own_data/own_data_nested.cfg) with decoding =
    "posterior" and a threshold: spacy train scores its dev set with them,
    and the trained pipeline keeps them."""
    from pathlib import Path

    from spacy.cli.train import train
    from spacy.tokens import DocBin

    from spacy_depner.readers.genia import genia_examples, read_genia

    root = Path(__file__).parents[2]
    pretrained = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"
    if not (pretrained / "config.cfg").is_file():  # the own-data configs take its tokenizer and vocab
        pytest.skip(f"no en_core_web_sm at {pretrained} (set DEPNER_DATA to the data folder that has models/)")
    nlp = spacy.blank("en")
    docs = [
        eg.reference
        for eg in genia_examples(nlp.vocab, read_genia(root / "tests/data/nested_genia.jsonl"), "nested_ner")
    ]
    DocBin(docs=docs).to_disk(tmp_path / "mentions.spacy")
    data = str(tmp_path / "mentions.spacy")
    train(
        root / "configs" / "own_data" / "own_data_nested.cfg",
        tmp_path / "out",
        overrides={
            "paths.train": data,
            "paths.dev": data,
            "paths.pretrained": str(pretrained),
            "training.max_steps": 30,
            "training.eval_frequency": 15,
            "components.nested_ner.decoding": "posterior",
            "components.nested_ner.posterior_penalty": 0.4,
            "components.nested_ner.threshold": 0.45,
        },
    )
    trained = spacy.load(tmp_path / "out" / "model-last")
    settings = trained.get_pipe("nested_ner").settings
    assert (settings["decoding"], settings["posterior_penalty"], settings["threshold"]) == ("posterior", 0.4, 0.45)
    meta = srsly.read_json(tmp_path / "out" / "model-last" / "meta.json")
    assert 0.0 <= meta["performance"]["f_nested_ner"] <= 1.0
    doc = trained("Both human T cells and mouse B cells were used.")
    assert np.all(doc.spans["nested_ner"].attrs["scores"] >= 0.45)
