"""A tiny corpus with trees and entities, shared by the component tests."""

from spacy.tokens import Doc
from spacy.training import Example

SMALL_TOK2VEC = {
    "@architectures": "spacy.HashEmbedCNN.v2",
    "pretrained_vectors": None,
    "width": 32,
    "depth": 2,
    "embed_size": 500,
    "window_size": 1,
    "maxout_pieces": 2,
    "subword_features": True,
}

# Trees: heads are absolute indices, a root is its own head.
TINY = [
    (
        "Lee Ann Womack won Single of the Year award".split(),
        [2, 2, 3, 3, 8, 7, 7, 4, 3],
        ["compound", "compound", "nsubj", "ROOT", "compound", "case", "det", "nmod", "obj"],
        ["B-PER", "I-PER", "I-PER", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"],
    ),
    (
        "John Smith visited New York".split(),
        [1, 2, 2, 4, 2],
        ["compound", "nsubj", "ROOT", "compound", "obj"],
        ["B-PER", "I-PER", "O", "B-LOC", "I-LOC"],
    ),
    ("Mary lives in Paris".split(), [1, 1, 3, 1], ["nsubj", "ROOT", "case", "obl"], ["B-PER", "O", "O", "B-LOC"]),
    (
        "Paris loves Mary Smith".split(),
        [1, 1, 3, 1],
        ["nsubj", "ROOT", "compound", "obj"],
        ["B-LOC", "O", "B-PER", "I-PER"],
    ),
]


def make_example(nlp, words, heads, deps, ents, trees=True):
    tree = {"heads": heads, "deps": deps} if trees else {}
    return Example(Doc(nlp.vocab, words=words, **tree), Doc(nlp.vocab, words=words, heads=heads, deps=deps, ents=ents))


def input_doc(nlp, words, heads=None, deps=None):
    return Doc(nlp.vocab, words=words, heads=heads, deps=deps)


def train_component(factory: str, config: dict, make_examples, steps: int):
    """A blank English pipeline with ``factory`` trained ``steps`` times on
    ``make_examples(nlp)`` (seed 0): (nlp, component, examples, the losses of each step)."""
    import spacy
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    nlp = spacy.blank("en")
    component = nlp.add_pipe(factory, config=config)
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    history = [nlp.update(examples, sgd=optimizer, losses={}) for _ in range(steps)]
    return nlp, component, examples, history


def tiny_chain_ner(steps: int = 40):
    """A chain_ner on a small tok2vec trained on the tiny corpus (seed 0) that
    has learned "Mary lives in Paris" (Mary PER, Paris LOC): (nlp, those entities)."""
    model = {"@architectures": "spacy_depner.TagScorer.v1", "tok2vec": SMALL_TOK2VEC}
    nlp, _, _, _ = train_component(
        "chain_ner", {"model": model}, lambda nlp: [make_example(nlp, *row, trees=False) for row in TINY], steps
    )
    learned = [[e.text, e.label_] for e in nlp("Mary lives in Paris").ents]
    assert learned == [["Mary", "PER"], ["Paris", "LOC"]]
    return nlp, learned


def check_unknown_gold_label(factory: str, config: dict, make_examples, labels, unknown: str):
    """A blank English pipeline with ``factory`` initialized with ``labels``:
    updating it on ``make_examples(nlp)``, whose gold has the label
    ``unknown``, is a clear error. Returns the pipeline."""
    import pytest
    import spacy

    nlp = spacy.blank("en")
    component = nlp.add_pipe(factory, config=config)
    examples = make_examples(nlp)
    component.initialize(lambda: examples, nlp=nlp, labels=labels)
    with pytest.raises(ValueError, match=f"Unknown label '{unknown}'"):
        component.update(examples)
    return nlp


def write_tiny_docbin(path):
    """The tiny corpus's reference Docs (trees and entities) as a DocBin at ``path``; the path."""
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    DocBin(docs=[make_example(nlp, *row).reference for row in TINY]).to_disk(path)
    return path
