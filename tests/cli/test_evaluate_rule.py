"""One scoring rule across the evaluators: ``evaluate`` (CoNLL-U + IOB2 or a
DocBin) and ``evaluate-nested`` agree with spaCy's ``nlp.evaluate`` /
``spacy evaluate``, labels outside PER/ORG/LOC included, and say which
labels and which tokens they score."""

import json
from pathlib import Path

import pytest
import spacy
import typer
from spacy.cli.evaluate import evaluate as spacy_evaluate
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run

DATA = Path(__file__).parents[1] / "data"

# (words, IOB2 tags): OTH is a label outside PER/ORG/LOC, in the gold and predicted.
SENTENCES = [
    ("John Smith visited New York .".split(), ["B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O"]),
    ("Acme Corp hosted the Oscars .".split(), ["B-ORG", "I-ORG", "O", "O", "B-OTH", "O"]),
    ("Mary met the Beatles .".split(), ["B-PER", "O", "O", "B-OTH", "O"]),
]
# Right: John Smith, Mary (PER), Oscars, Beatles (OTH); wrong: York (LOC), Acme (OTH).
PATTERNS = [
    ("PER", "John Smith"),
    ("PER", "Mary"),
    ("LOC", "York"),
    ("OTH", "Oscars"),
    ("OTH", "Beatles"),
    ("OTH", "Acme"),
]


def conllu_text(sentences) -> str:
    """CoNLL-U of the sentences: a chain of heads, each word on the next."""
    blocks = []
    for n, (words, _) in enumerate(sentences, 1):
        lines = [f"# sent_id = s{n}"] + [
            f"{i}\t{w}\t{w}\t_\t_\t_\t{0 if i == 1 else i - 1}\t{'root' if i == 1 else 'dep'}\t_\t_"
            for i, w in enumerate(words, 1)
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n\n"


def iob2_text(sentences) -> str:
    return (
        "\n\n".join(
            f"# sent_id = s{n}\n" + "\n".join(f"{i}\t{w}\t{t}" for i, (w, t) in enumerate(zip(words, tags), 1))
            for n, (words, tags) in enumerate(sentences, 1)
        )
        + "\n"
    )


@pytest.fixture(scope="module")
def ruler_pipeline(tmp_path_factory) -> Path:
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": label, "pattern": text} for label, text in PATTERNS])
    path = tmp_path_factory.mktemp("ruler") / "pipeline"
    nlp.to_disk(path)
    return path


def command_json(capsys, *args) -> dict:
    assert run(app, list(map(str, args)), "python -m spacy_depner") == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def spacy_scores(pipeline: Path) -> dict:
    nlp = spacy.load(pipeline)
    examples = [
        Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=tags)) for words, tags in SENTENCES
    ]
    return nlp.evaluate(examples)


def test_evaluate_scores_every_label_as_nlp_evaluate(capsys, tmp_path, ruler_pipeline):
    (tmp_path / "data.conllu").write_text(conllu_text(SENTENCES), encoding="utf8")
    (tmp_path / "data.iob2").write_text(iob2_text(SENTENCES), encoding="utf8")
    ours = command_json(capsys, "evaluate", ruler_pipeline, tmp_path / "data.conllu", "--iob2", tmp_path / "data.iob2")
    theirs = spacy_scores(ruler_pipeline)
    # 4 right of 6 predicted, 4 found of 6 gold (counted by hand)
    assert (theirs["ents_p"], theirs["ents_r"], theirs["ents_f"]) == pytest.approx((4 / 6, 4 / 6, 4 / 6))
    assert (ours["p"], ours["r"], ours["f"]) == pytest.approx((theirs["ents_p"], theirs["ents_r"], theirs["ents_f"]))
    assert set(ours["per_type"]) == set(theirs["ents_per_type"]) == {"PER", "ORG", "LOC", "OTH"}
    for label, scores in theirs["ents_per_type"].items():
        assert ours["per_type"][label] == pytest.approx(scores), label
    assert ours["labels"] == ["LOC", "ORG", "OTH", "PER"] and "data's own" in ours["tokens"]


def test_evaluate_reads_a_docbin_as_its_conllu(capsys, tmp_path, ruler_pipeline):
    vocab = spacy.blank("en").vocab
    DocBin(docs=[Doc(vocab, words=words, ents=tags) for words, tags in SENTENCES]).to_disk(tmp_path / "data.spacy")
    ours = command_json(capsys, "evaluate", ruler_pipeline, tmp_path / "data.spacy")
    theirs = spacy_evaluate(str(ruler_pipeline), tmp_path / "data.spacy", gold_preproc=True)
    assert (ours["p"], ours["r"], ours["f"]) == pytest.approx((theirs["ents_p"], theirs["ents_r"], theirs["ents_f"]))
    assert ours["f"] == pytest.approx(4 / 6)
    one = command_json(capsys, "evaluate", ruler_pipeline, tmp_path / "data.spacy", "--limit", "1")
    assert one["r"] == pytest.approx(1 / 2) and one["labels"] == ["LOC", "PER"]  # John Smith right, New York not


def test_a_conllu_without_iob2_says_what_to_give(capsys, tmp_path, ruler_pipeline):
    (tmp_path / "data.conllu").write_text(conllu_text(SENTENCES), encoding="utf8")
    assert run(app, ["evaluate", str(ruler_pipeline), str(tmp_path / "data.conllu")], "python -m spacy_depner") == 1
    line = capsys.readouterr().err.strip()
    assert "--iob2 FILE" in line and "evaluate-nested" in line and "Missing option" not in line


@pytest.fixture(scope="module")
def span_ruler_pipeline(tmp_path_factory) -> Path:
    """Nested mentions by patterns; "c-fos" is one token of the data, three of spaCy's tokenizer."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe(
        "span_ruler",
        config={
            "spans_key": "nested_ner",
            "scorer": {"@scorers": "spacy.overlapping_labeled_spans_scorer.v1", "spans_key": "nested_ner"},
        },
    )
    ruler.add_patterns(
        [{"label": "protein", "pattern": [{"ORTH": word}]} for word in ("CD28", "IL-7", "c-jun")]
        + [
            {"label": "DNA", "pattern": [{"ORTH": "c-fos"}]},
            {"label": "cell_type", "pattern": [{"ORTH": "T"}, {"ORTH": "cells"}]},
        ]
    )
    path = tmp_path_factory.mktemp("span_ruler") / "pipeline"
    nlp.to_disk(path)
    return path


def test_evaluate_nested_says_its_tokens_and_agrees_with_spacy_evaluate_in_each(capsys, tmp_path, span_ruler_pipeline):
    from spacy_depner.readers.docbins import genia_docs

    genia = DATA / "nested_genia.jsonl"
    DocBin(docs=genia_docs(spacy.blank("en").vocab, genia)).to_disk(tmp_path / "genia.spacy")
    results = {}
    for flag, gold_preproc in (("--gold-preproc", True), ("--retokenize", False)):
        ours = command_json(capsys, "evaluate-nested", span_ruler_pipeline, genia, flag)
        theirs = spacy_evaluate(str(span_ruler_pipeline), tmp_path / "genia.spacy", gold_preproc=gold_preproc)
        assert (ours["p"], ours["r"], ours["f"]) == pytest.approx(
            tuple(theirs[f"spans_nested_ner_{k}"] for k in "prf")
        ), flag
        results[flag] = ours
    assert "data's own" in results["--gold-preproc"]["tokens"] and "re-tokenized" in results["--retokenize"]["tokens"]
    # c-fos is found on the data's tokens only: the two rules differ here
    assert results["--gold-preproc"]["r"] > results["--retokenize"]["r"]
    assert "protein" in results["--gold-preproc"]["labels"]


def test_evaluate_and_evaluate_nested_help_state_labels_and_tokens():
    commands = typer.main.get_command(app).commands
    for name in ("evaluate", "evaluate-nested"):
        text = " ".join(commands[name].help.split())
        assert "of every label" in text and "spacy evaluate --gold-preproc" in text.replace("`", ""), name
    option = next(p for p in commands["evaluate-nested"].params if p.name == "gold_preproc")
    assert set(option.opts) == {"--gold-preproc", "-G"} and option.secondary_opts == ["--retokenize"]
    assert option.default is True and "re-tokenized" in option.help
