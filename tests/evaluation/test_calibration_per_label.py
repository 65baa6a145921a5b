"""``spacy_depner.evaluation.label_temperatures``: the per-label fit on tiny
trained dgm_ner and chain_ner models (the dev negative log-likelihood and F1
it reports, recomputed here from the written spans: the likelihood never
below, the F1 never above those of the one temperature; every decoding
counted), and what it relies on in ``calibration``: +inf for "nothing to
judge" in ``fit_temperature`` and ``decoded_nll_f1``."""

import math

import numpy as np
import pytest
from spacy.tokens import Doc
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example, train_component

import spacy_depner.evaluation.label_temperatures as label_module
from spacy_depner.evaluation.calibration import decoded_nll_f1, fit_component_temperature, fit_temperature
from spacy_depner.evaluation.label_temperatures import LABEL_SPREAD, fit_label_temperatures

CONFIGS = {
    "dgm_ner": {
        "suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 4},
        "model": {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": SMALL_TOK2VEC},
    },
    "chain_ner": {"model": {"@architectures": "spacy_depner.TagScorer.v1", "tok2vec": SMALL_TOK2VEC}},
}


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def tiny(request):
    """(component, its input Docs, their gold spans) of a model trained a
    few steps on the tiny corpus: far from certain of its spans."""
    name = request.param
    nlp, pipe, _, _ = train_component(name, CONFIGS[name], lambda nlp: [make_example(nlp, *row) for row in TINY], 2)
    docs = [Doc(nlp.vocab, words=words) for words, *_ in TINY]
    gold = [{(e.start, e.end, e.label_) for e in make_example(nlp, *row).reference.ents} for row in TINY]
    return pipe, docs, gold


def nll_f1_here(pipe, docs, gold, **settings):
    """The mean negative log-likelihood of the correctness of the spans the
    component writes with ``settings`` (threshold 0, MAP), and their F1,
    computed here."""
    saved = dict(pipe.settings)
    pipe.settings.update(threshold=0.0, decoding="map", probabilities=True, **settings)
    try:
        out = list(pipe.pipe([doc.copy() for doc in docs]))
    finally:
        pipe.settings.clear()
        pipe.settings.update(saved)
    losses, right = [], 0
    for doc, doc_gold in zip(out, gold):
        group = doc.spans[pipe.name]
        for span, p in zip(group, group.attrs["scores"] if len(group) else []):
            p = min(max(float(p), 1e-7), 1 - 1e-7)
            correct = (span.start, span.end, span.label_) in doc_gold
            right += correct
            losses.append(-math.log(p) if correct else -math.log1p(-p))
    return float(np.mean(losses)), 2 * right / (len(losses) + sum(len(g) for g in gold))


def test_the_per_label_fit_lowers_the_dev_nll_without_lowering_the_f1(tiny, monkeypatch):
    pipe, docs, gold = tiny
    temperature, _, _ = fit_component_temperature(pipe, docs, gold, pipe.name, pipe.name, "dev")
    decodings = []
    decode_all = type(pipe).pipe
    monkeypatch.setattr(
        type(pipe), "pipe", lambda self, stream, **kw: decodings.append(1) or decode_all(self, stream, **kw)
    )
    fit = fit_label_temperatures(pipe, docs, gold, pipe.name, pipe.name, temperature)
    monkeypatch.undo()
    found = fit["label_temperatures"]
    assert found and set(found) <= set(pipe.score_labels()) and temperature not in found.values()
    assert all(temperature / LABEL_SPREAD - 1e-3 <= t <= temperature * LABEL_SPREAD + 1e-3 for t in found.values())
    start = nll_f1_here(pipe, docs, gold, temperature=temperature)
    end = nll_f1_here(pipe, docs, gold, temperature=temperature, label_temperatures=found)
    assert (fit["start_nll"], fit["start_f"]) == (pytest.approx(start[0], rel=1e-5), pytest.approx(start[1]))
    assert (fit["nll"], fit["f"]) == (pytest.approx(end[0], rel=1e-5), pytest.approx(end[1]))
    assert fit["nll"] < fit["start_nll"]  # this model's probabilities are not all right by one temperature
    assert fit["f"] >= fit["start_f"]
    assert fit["decodings"] == len(decodings) and 1 <= fit["sweeps"] <= 2
    # each label and sweep is one 1-D search of 5 grid values and a golden-section search
    assert len(found) * 5 < fit["decodings"] <= 1 + 2 * len(found) * 25
    assert pipe.settings["label_temperatures"] == {} and pipe.settings["temperature"] == 1.0


def test_one_sweep_and_a_narrow_spread(tiny):
    pipe, docs, gold = tiny
    fit = fit_label_temperatures(pipe, docs, gold, pipe.name, pipe.name, 2.0, sweeps=1, spread=1.1)
    assert fit["sweeps"] == 1 and all(2.0 / 1.1 - 1e-3 <= t <= 2.2 + 1e-3 for t in fit["label_temperatures"].values())
    for sweeps, spread in ((0, 4.0), (1, 1.0), (True, 4.0)):
        with pytest.raises(ValueError, match="sweeps >= 1 and spread > 1"):
            fit_label_temperatures(pipe, docs, gold, pipe.name, pipe.name, 2.0, sweeps=sweeps, spread=spread)


def test_decoded_nll_is_inf_without_spans(tiny):
    pipe, docs, gold = tiny
    nothing = [Doc(docs[0].vocab, words=[]) for _ in docs]
    assert decoded_nll_f1(pipe, nothing, gold, pipe.name, pipe.name, temperature=1.0) == (math.inf, 0.0)
    nll, f = nll_f1_here(pipe, docs, gold)
    assert decoded_nll_f1(pipe, docs, gold, pipe.name, pipe.name, temperature=1.0) == (
        pytest.approx(nll, rel=1e-5),
        pytest.approx(f),
    )


def test_fit_temperature_never_prefers_a_temperature_with_nothing_to_judge():
    def nll_at(t):  # a minimum at 0.5, nothing predicted above 1
        return math.inf if t > 1.0 else (math.log(t) - math.log(0.5)) ** 2

    t, value, tried = fit_temperature(nll_at)
    assert t == pytest.approx(0.5, rel=1e-2) and math.isfinite(value)
    assert any(v == math.inf for _, v in tried)
    t, value, _ = fit_temperature(lambda t: math.inf, low=0.5, high=2.0)
    assert value == math.inf and t == pytest.approx(0.5)  # the first on ties
    with pytest.raises(ValueError, match="is -inf"):
        fit_temperature(lambda t: -math.inf)


def test_coordinate_descent_finds_a_known_optimum_within_the_f1_floor(monkeypatch):
    """A synthetic objective, separable in log T: the best temperatures are
    O 3, A 0.5, B 2, but the F1 falls when O's exceeds 1.5."""
    best = {"O": 3.0, "A": 0.5, "B": 2.0}

    def objective(pipe, docs, gold, key, name, temperature, label_temperatures=None):
        t = {label: (label_temperatures or {}).get(label, temperature) for label in best}
        nll = 0.1 + sum((math.log(t[label]) - math.log(best[label])) ** 2 for label in best)
        return nll, 0.5 if t["O"] <= 1.5 else 0.4

    class Pipe:
        def score_labels(self):
            return ["O", "A", "A", "B"]

    monkeypatch.setattr(label_module, "decoded_nll_f1", objective)
    fit = fit_label_temperatures(Pipe(), None, None, "key", "name", 1.0)
    found = fit["label_temperatures"]
    assert list(found) == ["O", "A", "B"] and fit["start_f"] == fit["f"] == 0.5
    assert found["A"] == pytest.approx(0.5, rel=0.02) and found["B"] == pytest.approx(2.0, rel=0.02)
    assert 1.2 < found["O"] <= 1.5  # as far towards 3 as the F1 allows
    assert fit["nll"] == pytest.approx(objective(None, None, None, "", "", 1.0, found)[0])
