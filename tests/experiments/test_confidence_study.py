"""``python -m experiments confidence`` on tiny pipelines trained here: a
pipeline with spaCy's ner, dgm_ner and chain_ner (dev: UD + UNER files the
pipeline did not see; test: its training corpus as a DocBin, or the dev
files), one with nested_ner and hypergraph_ner and one with spaCy's spancat
(GENIA files). The JSON holds every component and field, every choice lies
in its grid and is made on dev only, the fitted temperature minimises the
dev negative log-likelihood (checked by decoding here), and the report has
its rows. The temperatures per label are fitted after the one temperature
and chosen iff they lower the dev ECE; the other steps use the chosen ones."""

import json
from pathlib import Path

import numpy as np
import pytest
import spacy
import typer
from spacy.tokens import Doc, DocBin
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example, write_tiny_docbin

from experiments.confidence.study import DataFile, check_penalty_step, confidence, confidence_study, parse_models
from spacy_depner.cli.errors import run
from spacy_depner.evaluation import label_temperatures
from spacy_depner.evaluation.calibration import TEMPERATURE_RANGE
from spacy_depner.readers.genia import genia_examples, read_genia
from spacy_depner.readers.uner import corpus_examples, read_uner_corpus

DATA = Path(__file__).parents[1] / "data"
GENIA = DATA / "nested_genia.jsonl"
SUMMARY = {
    "spans",
    "correct",
    "gold",
    "mean_confidence",
    "accuracy",
    "ece",
    "ece_floor",
    "nll",
    "reliability",
    "p",
    "r",
    "f",
}
PENALTY_STEP = 0.25
UNER_DEV = DataFile(DATA / "tiny.conllu", DATA / "tiny.iob2")


def trained(tmp_path_factory, name: str, components, make_examples, steps: int) -> Path:
    """A blank English pipeline with ``components`` [(factory, config)]
    trained ``steps`` times on ``make_examples(nlp)`` (seed 0), saved."""
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    nlp = spacy.blank("en")
    for factory, config in components:
        nlp.add_pipe(factory, config=config)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp(name) / "model-best"
    nlp.to_disk(path)
    return path


def scorer(architecture: str) -> dict:
    return {"@architectures": architecture, "tok2vec": SMALL_TOK2VEC}


@pytest.fixture(scope="module")
def ewt_model(tmp_path_factory) -> Path:
    """spaCy's ner, dgm_ner over every span up to 4 words and chain_ner, trained on the tiny corpus, side by
    side: each replaces the entities of the one before (``overwrite_ents``), so that each is studied alone."""
    return trained(
        tmp_path_factory,
        "ewt",
        [
            ("ner", {}),
            (
                "dgm_ner",
                {
                    "suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 4},
                    "model": scorer("spacy_depner.SpanScorer.v1"),
                    "overwrite_ents": True,
                },
            ),
            ("chain_ner", {"model": scorer("spacy_depner.TagScorer.v1"), "overwrite_ents": True}),
        ],
        lambda nlp: [make_example(nlp, *row) for row in TINY],
        10,
    )


def genia_with_both_keys(nlp):
    """The GENIA fixture's Examples, the gold mentions in the span groups of nested_ner and hypergraph_ner."""
    examples = genia_examples(nlp.vocab, read_genia(GENIA), "nested_ner")
    for eg in examples:
        eg.reference.spans["hypergraph_ner"] = list(eg.reference.spans["nested_ner"])
    return examples


@pytest.fixture(scope="module")
def genia_models(tmp_path_factory):
    """A seed folder with a nested_ner + hypergraph_ner pipeline and a spancat pipeline, trained on the GENIA fixture."""
    nested = trained(
        tmp_path_factory,
        "nested",
        [
            ("nested_ner", {"model": scorer("spacy_depner.MentionScorer.v1")}),
            ("hypergraph_ner", {"model": scorer("spacy_depner.TokenScorer.v1")}),
        ],
        genia_with_both_keys,
        15,
    )
    spancat = trained(
        tmp_path_factory,
        "spancat",
        [
            (
                "spancat",
                {
                    "spans_key": "sc",
                    "threshold": 0.3,
                    "suggester": {"@misc": "spacy.ngram_suggester.v1", "sizes": [1, 2, 3]},
                },
            )
        ],
        lambda nlp: genia_examples(nlp.vocab, read_genia(GENIA), "sc"),
        15,
    )
    return nested, spancat


@pytest.fixture(scope="module")
def tiny_docbin(tmp_path_factory) -> Path:
    return write_tiny_docbin(tmp_path_factory.mktemp("data") / "tiny.spacy")


def study(models, dev: DataFile, test: DataFile, output: Path) -> dict:
    result = confidence_study(models, dev, test, output, penalty_step=PENALTY_STEP, threshold_step=0.05)
    assert json.loads((output / "confidence.json").read_text()) == json.loads(json.dumps(result))
    return result


@pytest.fixture(scope="module")
def ewt_runs(ewt_model, tiny_docbin, tmp_path_factory):
    """The study of the EWT-like pipeline with UD + UNER files as dev, and two test files: the DocBin, and dev."""
    root = tmp_path_factory.mktemp("ewt_runs")
    return [
        (study({"ewt": ewt_model}, UNER_DEV, test, root / name), root / name)
        for name, test in (("docbin", DataFile(tiny_docbin)), ("uner", UNER_DEV))
    ]


def in_grid(value: float, low: float, high: float, step: float) -> bool:
    return low - 1e-9 <= value <= high + 1e-9 and abs(value / step - round(value / step)) < 1e-6


@pytest.mark.slow
def test_every_component_and_field_and_the_choices_in_their_grids(ewt_runs):
    result, output = ewt_runs[0]
    components = result["models"]["ewt"]["components"]
    assert list(components) == ["ner", "dgm_ner", "chain_ner"]
    assert components["ner"]["probabilities"] is None and "no span probabilities" in components["ner"]["reason"]
    for name in ("dgm_ner", "chain_ner"):
        entry = components[name]
        assert entry["kind"] == "ours" and entry["factory"] == name
        fit = entry["calibration"]
        assert TEMPERATURE_RANGE[0] <= fit["temperature"] <= TEMPERATURE_RANGE[1] and fit["decodings"] > 9
        assert set(fit["label_temperatures"]) <= {"O", "PER", "MISC", "LOC"}
        assert fit["temperature"] not in fit["label_temperatures"].values()
        assert fit["label_fit_nll"] <= fit["fit_nll"] + 1e-6 and fit["label_decodings"] > 4 * 5
        assert fit["label_fit_nll"] == pytest.approx(fit["dev"]["per_label"]["nll"], rel=1e-6)
        # the choice: per label iff it lowers the dev ECE
        assert (fit["chosen"] == "per_label") == (fit["dev"]["per_label"]["ece"] < fit["dev"]["after"]["ece"])
        chosen = "per_label" if fit["chosen"] == "per_label" else "after"
        for split in ("dev", "test"):
            for when in ("before", "after", "per_label"):
                assert set(fit[split][when]) >= SUMMARY and 0.0 <= fit[split][when]["ece"] <= 1.0
            # the MAP spans do not move with one temperature
            assert fit[split]["before"]["spans"] == fit[split]["after"]["spans"] > 0
            assert entry["map"][split]["f"] == pytest.approx(fit[split][chosen]["f"])
        # the threshold is tuned on the spans at the chosen temperatures: threshold 0 keeps them all
        assert entry["threshold"]["curve"][0]["f"] == pytest.approx(fit["dev"][chosen]["f"])
        assert fit["dev"]["before"]["gold"] == 5  # tiny.iob2's entities (as the calibration command counts them)
        threshold, posterior = entry["threshold"], entry["posterior"]
        assert in_grid(threshold["threshold"], 0.0, 1.0, 0.05)
        assert threshold["dev"]["f"] == max(point["f"] for point in threshold["curve"]) >= entry["map"]["dev"]["f"]
        assert in_grid(posterior["posterior_penalty"], PENALTY_STEP, 1 - PENALTY_STEP, PENALTY_STEP)
        assert [p["posterior_penalty"] for p in posterior["curve"]] == [0.25, 0.5, 0.75]
        assert posterior["dev"]["f"] == max(point["f"] for point in posterior["curve"])
        for scores in (threshold["dev"], threshold["test"], posterior["dev"], posterior["test"]):
            assert set(scores) >= {"p", "r", "f"} and all(0.0 <= scores[k] <= 1.0 for k in "prf")
        for png in ("test-before", "test-after", "test-per-label", "threshold"):
            assert (output / "png" / f"ewt-{name}-{png}.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_the_test_file_changes_no_choice(ewt_runs):
    (first, _), (second, _) = ewt_runs
    for name in ("dgm_ner", "chain_ner"):
        a, b = (run["models"]["ewt"]["components"][name] for run in (first, second))
        assert a["calibration"]["test"]["after"]["gold"] != b["calibration"]["test"]["after"]["gold"]  # other test data
        assert a["calibration"]["temperature"] == b["calibration"]["temperature"]
        assert a["calibration"]["label_temperatures"] == b["calibration"]["label_temperatures"]
        assert a["calibration"]["chosen"] == b["calibration"]["chosen"]
        assert a["threshold"]["threshold"] == b["threshold"]["threshold"]
        assert a["posterior"]["posterior_penalty"] == b["posterior"]["posterior_penalty"]
        assert a["calibration"]["dev"] == b["calibration"]["dev"] and a["posterior"]["dev"] == b["posterior"]["dev"]


def dev_nll(model: Path, name: str, temperature: float) -> float:
    """The mean negative log-likelihood of the correctness of the MAP spans of
    ``name`` on the words of the UNER dev files at ``temperature``, computed here."""
    nlp = spacy.load(
        model,
        config={
            "components": {
                name: {"temperature": temperature, "threshold": 0.0, "decoding": "map", "probabilities": True}
            }
        },
    )
    losses = []
    for reference in [eg.reference for eg in corpus_examples(nlp.vocab, read_uner_corpus(*UNER_DEV), "given")]:
        doc = nlp(Doc(nlp.vocab, words=[t.text for t in reference]))
        gold = {(e.start, e.end, e.label_) for e in reference.ents}
        group = doc.spans[nlp.get_pipe(name).spans_key]
        for span, p in zip(group, group.attrs["scores"] if len(group) else []):
            p = min(max(float(p), 1e-7), 1 - 1e-7)
            losses.append(-np.log(p) if (span.start, span.end, span.label_) in gold else -np.log1p(-p))
    return float(np.mean(losses))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dgm_ner", "chain_ner"])
def test_the_fitted_temperature_minimises_the_dev_nll(ewt_runs, ewt_model, name):
    fit = ewt_runs[0][0]["models"]["ewt"]["components"][name]["calibration"]
    fitted = fit["temperature"]
    assert not fit["at_bound"]  # the model, trained on other sentences, is not sure of every dev span
    at_fitted = dev_nll(ewt_model, name, fitted)
    assert at_fitted == pytest.approx(fit["dev"]["after"]["nll"], rel=1e-4)
    assert at_fitted < dev_nll(ewt_model, name, 1.0) == pytest.approx(fit["dev"]["before"]["nll"], rel=1e-4)
    for other in (fitted * 1.1, fitted / 1.1):
        assert at_fitted < dev_nll(ewt_model, name, other)


@pytest.mark.slow
def test_report_rows(ewt_runs):
    result, output = ewt_runs[0]
    text = (output / "report.md").read_text()
    calibration, decoding = text.split("## Calibration")[1].split("## Decoding")
    for name in ("dgm_ner", "chain_ner"):
        fit = result["models"]["ewt"]["components"][name]["calibration"]
        row = [line for line in calibration.splitlines() if line.startswith(f"| ewt | {name} |")]
        labels = ", ".join(f"{label} {t:.3g}" for label, t in fit["label_temperatures"].items()) or "= T"
        eces = " | ".join(
            f"{fit[split][when]['ece']:.3f}" for split in ("dev", "test") for when in ("before", "after", "per_label")
        )
        chosen = "per label" if fit["chosen"] == "per_label" else "one T"
        floor = fit["test"]["per_label" if fit["chosen"] == "per_label" else "after"]["ece_floor"]
        assert row == [f"| ewt | {name} | {fit['temperature']:.4g} | {labels} | {eces} | {chosen} | {floor:.3f} |"]
        row = [line for line in decoding.splitlines() if line.startswith(f"| ewt | {name} |")]
        assert len(row) == 1 and row[0].count("|") == 17
        entry = result["models"]["ewt"]["components"][name]
        assert (
            f" {100 * entry['map']['test']['f']:.2f} |" in row[0]
            and f" {entry['threshold']['threshold']:g} |" in row[0]
        )
    assert "No span probabilities: ewt/ner (ner)." in calibration


@pytest.mark.slow
def test_command_on_genia_with_spancat_beside(genia_models, tmp_path):
    nested, spancat = genia_models
    test = tmp_path / "test.jsonl"
    test.write_text("".join(GENIA.read_text().splitlines(keepends=True)[:2]))
    # the two pipelines as training seed folders: {seed} is the first of --seeds
    for model, path in (("nested", nested), ("spancat", spancat)):
        (tmp_path / "seed_1" / model).mkdir(parents=True)
        path.rename(tmp_path / "seed_1" / model / "model-best")
    app = typer.Typer()
    app.command()(confidence)
    output = tmp_path / "out"
    status = run(
        app,
        [
            "--model",
            f"nested={tmp_path}/seed_{{seed}}/nested/model-best",
            "--model",
            f"spancat={tmp_path}/seed_{{seed}}/spancat/model-best",
            "--seeds",
            "2,1",
            "--dev",
            str(GENIA),
            "--test",
            str(test),
            "--output",
            str(output),
            "--penalty-step",
            "0.25",
        ],
    )
    assert status == 0
    result = json.loads((output / "confidence.json").read_text())
    assert result["seed"] == 1 and set(result["models"]) == {"nested", "spancat"}
    components = result["models"]["nested"]["components"]
    assert list(components) == ["nested_ner", "hypergraph_ner"]
    for entry in components.values():
        assert entry["kind"] == "ours" and entry["calibration"]["test"]["before"]["gold"] == 10  # mentions of lines 1-2
        assert in_grid(entry["posterior"]["posterior_penalty"], 0.25, 0.75, 0.25)
    own = result["models"]["spancat"]["components"]["spancat"]
    assert own["kind"] == "spancat" and own["temperature"] is None and own["span_group"] == "sc"
    assert set(own["dev"]) >= SUMMARY and own["dev"]["gold"] == 14
    report = (output / "report.md").read_text()
    assert (
        f"| spancat | spancat (own scores) | – | – | {own['dev']['ece']:.3f} | – | – | {own['test']['ece']:.3f} | – | – "
        f"| – | {own['test']['ece_floor']:.3f} |"
    ) in report
    assert "| nested | hypergraph_ner |" in report.split("## Decoding")[1]


def test_bad_options_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="give NAME=PIPELINE"):
        parse_models(["training/dgm"], 0)
    with pytest.raises(ValueError, match="is not a saved pipeline"):
        parse_models([f"dgm={tmp_path}/seed_{{seed}}/dgm"], 0)
    (tmp_path / "config.cfg").write_text("")
    with pytest.raises(ValueError, match="given twice"):
        parse_models([f"a={tmp_path}", f"a={tmp_path}"], 0)
    assert parse_models([f"a={tmp_path}"], 3) == {"a": tmp_path}
    for step in (0.0, 0.6, -1):
        with pytest.raises(ValueError, match="--penalty-step"):
            check_penalty_step(step)
    with pytest.raises(ValueError, match="unknown data file kind"):
        confidence_study({"a": tmp_path}, DataFile(tmp_path / "dev.txt"), DataFile(GENIA), tmp_path / "out")


@pytest.mark.slow
def test_a_component_without_dev_spans_keeps_t_1_and_says_why(tmp_path):
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("chain_ner", config={"model": scorer("spacy_depner.TagScorer.v1")})
    examples = [make_example(nlp, words, heads, deps, ["O"] * len(words)) for words, heads, deps, _ in TINY]
    pipe.initialize(lambda: examples, nlp=nlp, labels=["PER", "LOC"])
    optimizer = nlp.create_optimizer()
    for _ in range(20):
        nlp.update(examples, sgd=optimizer)  # taught that there is no entity
    nlp.to_disk(tmp_path / "model")
    DocBin(docs=[eg.reference for eg in examples]).to_disk(tmp_path / "dev.spacy")
    dev = DataFile(tmp_path / "dev.spacy")
    result = study({"none": tmp_path / "model"}, dev, dev, tmp_path / "out")
    entry = result["models"]["none"]["components"]["chain_ner"]
    fit = entry["calibration"]
    assert fit["dev"]["before"]["spans"] == 0 and fit["dev"]["before"]["nll"] is None
    assert fit["temperature"] is None and "predicts no span on dev" in fit["reason"]
    assert fit["label_temperatures"] is None and "per_label" not in fit["dev"] and fit["chosen"] == "one"
    assert entry["map"]["dev"]["f"] == entry["threshold"]["dev"]["f"] == 0.0
    report = (tmp_path / "out" / "report.md").read_text()
    # the temperature columns hold no value (no model of this report has one) and are left out; the line says why
    assert (
        "| none | chain_ner | 0.000 |" in report
        and "No temperature fitted (no span predicted on dev): none/chain_ner." in report
    )


@pytest.mark.slow
def test_per_label_temperatures_that_do_not_lower_the_dev_ece_are_not_chosen(
    ewt_model, tiny_docbin, tmp_path, monkeypatch
):
    """Temperatures per label all equal to the one temperature: the same
    probabilities, so the same dev ECE, and a tie keeps the one temperature."""

    def the_one(pipe, docs, gold, key, name, temperature, **kwargs):
        return {
            "label_temperatures": {label: temperature for label in dict.fromkeys(pipe.score_labels())},
            "nll": None,
            "start_nll": None,
            "sweeps": 0,
            "decodings": 0,
        }

    monkeypatch.setattr(label_temperatures, "fit_label_temperatures", the_one)
    result = study({"ewt": ewt_model}, UNER_DEV, DataFile(tiny_docbin), tmp_path / "out")
    for name in ("dgm_ner", "chain_ner"):
        fit = result["models"]["ewt"]["components"][name]["calibration"]
        for split in ("dev", "test"):
            assert {k: v for k, v in fit[split]["per_label"].items() if k != "png"} == {
                k: v for k, v in fit[split]["after"].items() if k != "png"
            }
        assert fit["chosen"] == "one"
