"""What every transformer-encoder test holds each component to, whichever
package runs the transformer (spacy-transformers, spacy-curated-transformers):
the tiny training data (TINY's flat entities with trees, NESTED's mentions),
the word-piece vocabulary of a tiny random BERT, and
``check_trains_round_trips_and_batches`` (the ``device`` fixture is in
tests/pipeline/conftest.py). Imports no transformer package."""

from pathlib import Path
from typing import Callable, List

import numpy as np
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import Adam
from tiny_corpus import TINY

NESTED = [  # words, mentions (start, end exclusive, label)
    (
        "the University of Paris hospital was built in Paris".split(),
        [(1, 4, "ORG"), (3, 4, "LOC"), (0, 5, "FAC"), (8, 9, "LOC")],
    ),
    (
        "Mary saw the Bank of England near Paris today".split(),
        [(0, 1, "PER"), (3, 6, "ORG"), (5, 6, "LOC"), (7, 8, "LOC")],
    ),
    ("Paris is big and Mary likes it".split(), [(0, 1, "LOC"), (4, 5, "PER")]),
]
# (model part with a config on the transformer, the component, where it writes: "ents" or a span key)
COMPONENTS = [
    ("dgm_ewt", "dgm_ner", "ents"),
    ("chain_crf_ewt", "chain_ner", "ents"),
    ("genia_nested", "nested_ner", "nested_ner"),
    ("genia_hypergraph", "hypergraph_ner", "nested_ner"),
]
WINDOW, STRIDE = 8, 6  # word pieces: every Doc here is longer
TINY_BERT = {
    "hidden_width": 16,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "intermediate_width": 32,
    "max_position_embeddings": 64,
}


def tiny_wordpiece_vocab() -> List[str]:
    """A WordPiece vocabulary of letters, digits, punctuation and the words
    of the tiny data (so every text splits), special pieces first."""
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789") + list(".,;:!?'\"()-&/")
    words = sorted({word.lower() for row in TINY for word in row[0]} | {"paris", "mary", "the", "of"})
    return (
        ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        + chars
        + [f"##{c}" for c in chars]
        + [word for word in words if word not in chars]
    )


def examples_for(nlp, key: str):
    """The tiny training Examples: flat entities on trees for "ents", else
    NESTED's mentions in the span group ``key``."""
    if key == "ents":
        return [
            Example(
                Doc(nlp.vocab, words=words, heads=heads, deps=deps),
                Doc(nlp.vocab, words=words, heads=heads, deps=deps, ents=ents),
            )
            for words, heads, deps, ents in TINY
        ]
    examples = []
    for words, found in NESTED:
        reference = Doc(nlp.vocab, words=words)
        reference.spans[key] = [Span(reference, s, e, label=label) for s, e, label in found]
        examples.append(Example(Doc(nlp.vocab, words=words), reference))
    return examples


def predictions(docs, key: str):
    """(start, end, label) of each Doc's entities ("ents") or span group ``key``."""
    if key == "ents":
        return [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs]
    return [sorted((s.start, s.end, s.label_) for s in doc.spans[key]) for doc in docs]


def train(nlp, component: str, key: str, steps: int = 12):
    """``nlp`` initialized on the tiny Examples and updated ``steps`` times
    (Adam, 0.003): the Examples and the component's loss at each step."""
    examples = examples_for(nlp, key)
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.003)
    losses = [nlp.update(examples, sgd=optimizer, losses={})[component] for _ in range(steps)]
    return examples, losses


def inputs(vocab, examples):
    """Fresh Docs (with their trees: DGM reads them), three of each Example's."""
    return [Doc(vocab).from_bytes(eg.x.to_bytes()) for _ in range(3) for eg in examples]


def check_trains_round_trips_and_batches(
    nlp, component: str, key: str, device: str, saved: Path, forget: Callable[[], None] = lambda: None
):
    """Trains ``nlp``'s ``component`` on the tiny data: the loss falls, the
    component runs on the ``device``'s ops, it learnt the data, ``nlp.pipe``
    gives the same spans whatever the batch size, and ``nlp`` saved to
    ``saved`` (``forget`` then deletes what it was built from) loads to the
    same spans and scores."""
    import spacy

    examples, losses = train(nlp, component, key)
    assert np.isfinite(losses).all()
    assert np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3]), losses
    assert nlp.pipe_names[0] == "transformer"
    assert (
        type(nlp.get_pipe(component).model.ops).__name__ == {"cpu": "NumpyOps", "ops": "Ops", "gpu": "CupyOps"}[device]
    )

    first = list(nlp.pipe(inputs(nlp.vocab, examples), batch_size=1))
    gold = predictions([eg.reference for eg in examples], key) * 3
    found = sum(len(set(p) & set(g)) for p, g in zip(predictions(first, key), gold))
    assert found >= 0.5 * sum(map(len, gold))  # it learnt the tiny corpus (so the checks below are not vacuous)
    for batch_size in (2, 7):
        assert predictions(nlp.pipe(inputs(nlp.vocab, examples), batch_size=batch_size), key) == predictions(first, key)

    nlp.to_disk(saved)
    forget()
    loaded = spacy.load(saved)
    again = list(loaded.pipe(inputs(loaded.vocab, examples), batch_size=4))
    assert predictions(again, key) == predictions(first, key)
    group = component if key == "ents" else key  # the span group with the scores: the entities' or the mentions'
    for then, now in zip(first, again, strict=True):
        assert np.allclose(then.spans[group].attrs["scores"], now.spans[group].attrs["scores"], atol=1e-5)
