"""Learning from rejected mentions: a reference Doc whose span group
``incorrect_spans_key`` holds mentions known to be wrong (spaCy ``ner``'s
convention; what an annotator's "reject" gives) and whose other tokens are
missing (``ent_iob_ == ""``; for nested_ner, outside an empty
``annotated_key`` group). ``chain_ner``, ``dgm_ner`` and ``nested_ner`` give
the rejected mentions probability 0 and marginalise the rest (the constrained
log-partition)."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import fix_random_seed
from test_partial_annotation import NESTED_CONFIG
from tiny_corpus import TINY

LABELS = ["LOC", "MISC", "PER"]


def gold_entities(tags):
    starts = [i for i, tag in enumerate(tags) if tag.startswith("B-")]
    ends = [next((j for j in range(s + 1, len(tags)) if not tags[j].startswith("I-")), len(tags)) for s in starts]
    return [(s, e, tags[s][2:]) for s, e in zip(starts, ends)]


def rejected_examples(nlp, key="incorrect_spans"):
    """Every TINY sentence with nothing annotated but, on each entity, every wrong label rejected."""
    examples = []
    for words, heads, deps, tags in TINY:
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps, ents=[""] * len(words))
        reference.spans["annotated"] = []  # nested_ner's annotated regions: none
        reference.spans[key] = [
            Span(reference, s, e, label) for s, e, right in gold_entities(tags) for label in LABELS if label != right
        ]
        examples.append(Example(Doc(nlp.vocab, words=words, heads=heads, deps=deps), reference))
    return examples


def rejected_marginals(ner, examples):
    """The marginal of every rejected mention of the examples (R,), by the component's current weights."""
    batch, layout, gold, _ = ner.training_batch(examples)
    scores = tuple(np.asarray(part, dtype=np.float64) for part in ner.model.predict(ner.model_input(batch)))
    return ner.structure.marginals(scores, layout, **ner.structure_options()).of(gold.rejected)


CONFIGS = {
    "chain_ner": {},
    "dgm_ner": {},
    "nested_ner": {"annotated_key": "annotated", "model": NESTED_CONFIG["model"]},
}


def trained(key, steps, factory="dgm_ner"):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    ner = nlp.add_pipe(factory, config={**CONFIGS[factory], "incorrect_spans_key": key})
    examples = rejected_examples(nlp)
    ner.initialize(lambda: examples, nlp=nlp, labels=LABELS)
    optimizer = nlp.create_optimizer()
    before = rejected_marginals(ner, examples) if key else None
    losses = [ner.update(examples, sgd=optimizer, losses={})[factory] for _ in range(steps)]
    return ner, examples, before, losses


@pytest.mark.parametrize("factory", list(CONFIGS))
def test_rejected_mentions_are_read_and_learned_to_probability_zero(factory):
    ner, examples, before, losses = trained("incorrect_spans", 40, factory)
    assert before.shape == (sum(2 * len(gold_entities(tags)) for *_, tags in TINY),)
    assert before.max() > 0.1  # untrained, some wrong label has mass
    assert losses[0] > 0.1 and losses[-1] < losses[0] / 5
    after = rejected_marginals(ner, examples)
    assert after.max() < 0.05


@pytest.mark.parametrize("factory", list(CONFIGS))
def test_without_the_key_the_same_docs_teach_nothing(factory):
    _, _, _, losses = trained(None, 3, factory)
    assert losses == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)  # every token missing, nothing rejected


def test_the_perceptron_refuses_rejected_entities():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("chain_ner", config={"loss": "perceptron", "incorrect_spans_key": "incorrect_spans"})
    examples = rejected_examples(nlp)
    for eg in examples:  # every token annotated: only the rejections stop the perceptron
        eg.reference.set_ents([], default="outside")
    ner.initialize(lambda: examples, nlp=nlp, labels=LABELS)
    with pytest.raises(ValueError, match="cannot learn from rejected entities"):
        ner.update(examples)


def accepted_examples(nlp):
    """Every TINY sentence with nothing annotated (an empty ``annotated`` group)
    but its gold entities in ``nested_ner``'s span group: accepted mentions."""
    examples = []
    for words, heads, deps, tags in TINY:
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
        reference.spans["annotated"] = []
        reference.spans["nested_ner"] = [Span(reference, s, e, label) for s, e, label in gold_entities(tags)]
        examples.append(Example(Doc(nlp.vocab, words=words, heads=heads, deps=deps), reference))
    return examples


def test_nested_ner_learns_accepted_mentions_outside_the_annotated_regions():
    """A gold mention wholly outside the annotated regions is accepted: known
    present, the rest of its sentence unknown. Training raises the accepted
    mentions' marginals; without the annotated group the same Docs are fully
    annotated and the mentions gold."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("nested_ner", config={"annotated_key": "annotated", "model": NESTED_CONFIG["model"]})
    examples = accepted_examples(nlp)
    ner.initialize(lambda: examples, nlp=nlp, labels=LABELS)
    batch, layout, gold, _ = ner.training_batch(examples)
    n_entities = sum(len(gold_entities(tags)) for *_, tags in TINY)
    assert gold.accepted.shape == (n_entities, 3) and (gold.encoding == -1).all() and gold.missing.all()

    def accepted_marginals():
        scores = tuple(np.asarray(part, dtype=np.float64) for part in ner.model.predict(ner.model_input(batch)))
        return ner.structure.marginals(scores, layout, **ner.structure_options()).of(gold.accepted)

    before = accepted_marginals()
    assert before.max() < 0.5
    optimizer = nlp.create_optimizer()
    losses = [ner.update(examples, sgd=optimizer, losses={})["nested_ner"] for _ in range(40)]
    assert losses[0] > 1.0 and losses[-1] < losses[0] / 5
    assert accepted_marginals().min() > 0.8
    full = [Example(eg.predicted, eg.reference.copy()) for eg in examples]
    for eg in full:
        del eg.reference.spans["annotated"]
    _, _, annotated, _ = ner.training_batch(full)  # annotated throughout: the same mentions are gold
    assert annotated.missing is None and annotated.accepted is None and (annotated.encoding >= 0).sum() == n_entities
