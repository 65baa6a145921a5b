"""The uncertainty measures of a Doc (``pipeline.uncertainty``) against
enumeration of its analyses under the component's own scores: the expected
number of entity errors of the prediction is E[|predicted symmetric
difference analysis|], the entropy -sum p log p, the probability of a
predicted mention the mass of the analyses that hold it."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from tiny_corpus import TINY, input_doc, make_example, train_component

from spacy_depner.pipeline.uncertainty import doc_uncertainties

sys.path.insert(0, str(Path(__file__).parents[1] / "structures"))
import brute_analyses  # noqa: E402

CASES = {
    "chain_ner map": ("chain_ner", {"scheme": "BIO"}, lambda s, l: brute_analyses.chain(s, l, "BIO")),
    "chain_ner posterior": (
        "chain_ner",
        {"scheme": "BIO", "decoding": "posterior", "posterior_penalty": 0.3},
        lambda s, l: brute_analyses.chain(s, l, "BIO"),
    ),
    "dgm_ner map": ("dgm_ner", {}, brute_analyses.lattice),
    "nested_ner cyk": ("nested_ner", {"space": "cyk"}, lambda s, l: brute_analyses.nested(s, l, "cyk")),
    "chain_ner threshold": (
        "chain_ner",
        {"scheme": "BIO", "threshold": 0.6},
        lambda s, l: brute_analyses.chain(s, l, "BIO"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_measures_equal_enumeration(case):
    factory, config, brute = CASES[case]

    def make(nlp):
        examples = [make_example(nlp, *row) for row in TINY]
        for eg in examples:  # nested_ner reads its mentions from the span group
            eg.reference.spans["nested_ner"] = list(eg.reference.ents)
        return examples

    nlp, ner, _, _ = train_component(
        factory, {**config, "temperature": 4.0}, make, 4
    )  # a few steps, tempered: uncertain
    longest = 4 if factory == "nested_ner" else 5  # the nested analyses of 5 tokens and 3 labels are many
    docs = [input_doc(nlp, words, heads, deps) for words, heads, deps, _ in TINY if len(words) <= longest]
    found = doc_uncertainties(ner, docs)
    largest, predictions = 0.0, 0
    for doc, measures in zip(docs, found):
        batch = ner.read([doc])
        layout = ner.layout(batch)
        scores = ner.tempered(ner.structure_scores(ner.model.predict(ner.model_input(batch))))
        (unit,) = brute(scores, layout)
        log_z = max(a.weight for a in unit)
        log_z += math.log(sum(math.exp(a.weight - log_z) for a in unit))
        probabilities = [math.exp(a.weight - log_z) for a in unit]
        predicted = {(s, e - 1, k) for s, e, k in measures.mentions.tolist()}
        errors = sum(p * len(predicted ^ a.mentions) for p, a in zip(probabilities, unit))
        entropy = -sum(p * math.log(p) for p in probabilities if p > 0)
        assert measures.expected_errors == pytest.approx(errors, abs=1e-5)
        assert measures.entropy == pytest.approx(entropy, abs=1e-5)
        held = [sum(p for p, a in zip(probabilities, unit) if m in a.mentions) for m in sorted(predicted)]
        assert min(held, default=1.0) >= config.get("threshold", 0.0) - 1e-6
        order = np.lexsort(measures.mentions.T[::-1])
        np.testing.assert_allclose(measures.probabilities[order], held, atol=1e-5)
        assert measures.least_probable == pytest.approx(1 - min(held) if held else 0.0, abs=1e-5)
        largest, predictions = max(largest, errors), predictions + len(predicted)
    assert largest > 0.01 and predictions > 0  # uncertain, and something predicted


def test_a_hypergraph_with_heads_has_no_exact_mention_marginals():
    import spacy
    from spacy.training import Example

    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("hypergraph_ner", config={"heads": True})
    doc = input_doc(nlp, ["Mary", "lives", "in", "Paris"])
    pipe.initialize(lambda: [Example(doc, doc)], nlp=nlp, labels=["PER"])
    with pytest.raises(ValueError, match="heads = true"):
        doc_uncertainties(pipe, [doc])
