"""Training on partial annotation: tokens whose entity annotation is missing
(``ent_iob_ == ""`` in ``doc.ents``; outside the span group ``annotated_key``
for nested_ner) are marginalised, not read as O.

The corpus: every tiny sentence twice, each copy with one of its two
entities missing, so that every entity is annotated in one copy and missing
in the other. Read as O, the copies contradict each other; marginalised, a
component learns every entity."""

import numpy as np
import pytest
import spacy
from spacy.cli.train import train
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example
from thinc.api import Config
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example, train_component

from spacy_depner.doc_arrays.entities import missing_entity_tokens

NESTED_CONFIG = {
    "model": {"@architectures": "spacy_depner.MentionScorer.v1", "tok2vec": SMALL_TOK2VEC},
    "annotated_key": "annotated",
}


def entities(tags):
    """[(start, end)] of the entities of IOB tags."""
    starts = [i for i, tag in enumerate(tags) if tag.startswith("B-")]
    return [(s, next((j for j in range(s + 1, len(tags)) if not tags[j].startswith("I-")), len(tags))) for s in starts]


def partial_rows(hide: str):
    """Each TINY row once per entity, that entity's tags ``hide`` ("" missing, "O" outside)."""
    for words, heads, deps, tags in TINY:
        for start, end in entities(tags):
            yield words, heads, deps, [hide if start <= i < end else tag for i, tag in enumerate(tags)]


def flat_examples(hide):
    return lambda nlp: [make_example(nlp, *row) for row in partial_rows(hide)]


def nested_example(nlp, words, tags, hidden=None):
    """An Example whose reference holds the entities of ``tags`` as nested_ner
    mentions, and the annotated regions: all but the ``hidden`` entity's tokens."""
    reference = Doc(nlp.vocab, words=words)
    shown = [(s, e) for s, e in entities(tags) if (s, e) != hidden]
    reference.spans["nested_ner"] = [Span(reference, s, e, tags[s][2:]) for s, e in shown]
    if hidden is not None:
        reference.spans["annotated"] = [reference[: hidden[0]], reference[hidden[1] :]]
    return Example(Doc(nlp.vocab, words=words), reference)


def test_missing_entity_tokens_are_the_reference_tokens_without_annotation():
    nlp = spacy.blank("en")
    annotated = make_example(nlp, *TINY[2])
    partial = Example(Doc(nlp.vocab, words=TINY[3][0]), Doc(nlp.vocab, words=TINY[3][0], ents=["B-LOC", "O", "", ""]))
    assert missing_entity_tokens([annotated], np.array([0, 4])) is None
    found = missing_entity_tokens([annotated, partial], np.array([0, 4, 8]))
    assert found.tolist() == [False] * 4 + [False, False, True, True]


@pytest.mark.parametrize("factory,config", [("chain_ner", {}), ("dgm_ner", {})])
def test_a_doc_with_every_token_missing_has_zero_loss_and_gradient(factory, config):
    nlp, ner, _, _ = train_component(factory, config, lambda nlp: [make_example(nlp, *row) for row in TINY], 2)
    blank = [
        Example(
            Doc(nlp.vocab, words=words, heads=heads, deps=deps),
            Doc(nlp.vocab, words=words, heads=heads, deps=deps, ents=[""] * len(words)),
        )
        for words, heads, deps, _ in TINY
    ]
    scores = ner.model.predict(ner.model_input(ner.training_batch(blank)[0]))
    loss, gradient = ner.get_loss(blank, scores)
    assert loss == pytest.approx(0.0, abs=1e-6)
    assert all(np.abs(g).max() < 1e-6 for g in (gradient if isinstance(gradient, tuple) else (gradient,)))


@pytest.mark.slow
@pytest.mark.parametrize("factory", ["chain_ner", "dgm_ner"])
def test_flat_components_learn_every_entity_from_copies_that_each_miss_one(factory):
    full = lambda nlp: [make_example(nlp, *row) for row in TINY]  # noqa: E731
    nlp, _, _, history = train_component(factory, {}, flat_examples(""), 60)
    losses = [step[factory] for step in history]
    assert losses[-1] < losses[0] / 20
    assert nlp.evaluate(full(nlp))["ents_f"] == 1.0
    # the same copies with the hidden entity marked O contradict each other: never learned
    nlp, _, _, _ = train_component(factory, {}, flat_examples("O"), 60)
    assert nlp.evaluate(full(nlp))["ents_f"] < 0.9


@pytest.mark.slow
def test_nested_ner_learns_every_mention_outside_its_annotated_regions():
    def examples(nlp):
        return [nested_example(nlp, words, tags, hidden) for words, _, _, tags in TINY for hidden in entities(tags)]

    nlp, _, _, history = train_component("nested_ner", NESTED_CONFIG, examples, 60)
    assert history[-1]["nested_ner"] < history[0]["nested_ner"] / 20
    full = [nested_example(nlp, words, tags) for words, _, _, tags in TINY]
    assert nlp.evaluate(full)["spans_nested_ner_f"] == 1.0


def test_a_mention_across_the_annotated_region_names_the_doc():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("nested_ner", config=NESTED_CONFIG)
    words, _, _, tags = TINY[1]
    example = nested_example(nlp, words, tags, hidden=(3, 5))
    example.reference.spans["annotated"] = [example.reference[0:1], example.reference[2:5]]  # "Smith" left out
    ner.initialize(lambda: [example], nlp=nlp)
    with pytest.raises(ValueError, match=r"'John Smith'.*Doc 0.*annotated regions doc.spans\['annotated'\]"):
        ner.update([example])


def test_the_perceptron_refuses_missing_annotation():
    _, ner, _, _ = train_component(
        "chain_ner", {"loss": "perceptron"}, lambda nlp: [make_example(nlp, *row) for row in TINY], 1
    )
    with pytest.raises(ValueError, match="perceptron.*missing"):
        ner.update([make_example(spacy.blank("en"), *row) for row in partial_rows("")])


@pytest.mark.slow
def test_spacy_train_reads_missing_tokens_from_a_docbin(tmp_path):
    nlp = spacy.blank("en")
    DocBin(docs=[make_example(nlp, *row).reference for row in partial_rows("")]).to_disk(tmp_path / "partial.spacy")
    DocBin(docs=[make_example(nlp, *row).reference for row in TINY]).to_disk(tmp_path / "full.spacy")
    assert any(
        t.ent_iob_ == "" for doc in DocBin().from_disk(tmp_path / "partial.spacy").get_docs(nlp.vocab) for t in doc
    )
    config = spacy.util.get_lang_class("en").default_config.merge(
        Config().from_str(
            """
[nlp]
lang = "en"
pipeline = ["chain_ner"]
[components]
[components.chain_ner]
factory = "chain_ner"
[components.chain_ner.model]
@architectures = "spacy_depner.TagScorer.v1"
[training]
max_steps = 80
eval_frequency = 40
[training.optimizer]
@optimizers = "Adam.v1"
learn_rate = 0.01
""",
            interpolate=False,
        )
    )
    config["components"]["chain_ner"]["model"]["tok2vec"] = SMALL_TOK2VEC
    config_path = tmp_path / "config.cfg"
    config.to_disk(config_path)
    train(
        config_path,
        tmp_path / "out",
        overrides={"paths.train": str(tmp_path / "partial.spacy"), "paths.dev": str(tmp_path / "full.spacy")},
    )
    trained = spacy.load(tmp_path / "out" / "model-last")
    examples = [
        Example(trained.make_doc(doc.text), doc)
        for doc in DocBin().from_disk(tmp_path / "full.spacy").get_docs(trained.vocab)
    ]
    assert trained.evaluate(examples)["ents_f"] == 1.0
