"""``DocBatch.of_doc``: one Doc of a batch as its own batch equals reading
that Doc alone (offsets, sentences, the suggester's spans), for random
Docs with sentence starts, empty Docs included."""

import random

import numpy as np
import spacy
from spacy.tokens import Doc

from spacy_depner.doc_arrays.batch import read_batch
from spacy_depner.pipeline.suggesters import build_all_spans_suggester


def test_one_doc_of_a_batch_is_that_doc_read_alone():
    rng = random.Random(0)
    nlp = spacy.blank("en")
    suggester = build_all_spans_suggester(max_length=3)
    for _ in range(30):
        docs = []
        for _ in range(rng.randint(1, 5)):
            n = rng.choice([0, 1, 2, 5, 9])
            starts = [True] + [rng.random() < 0.3 for _ in range(n - 1)] if n else []
            docs.append(Doc(nlp.vocab, words=[f"w{i}" for i in range(n)], sent_starts=starts or None))
        batch = read_batch(docs, suggester)
        for d, doc in enumerate(docs):
            alone, sliced = read_batch([doc], suggester), batch.of_doc(d)
            assert sliced.docs == [doc]
            np.testing.assert_array_equal(sliced.doc_offsets, alone.doc_offsets)
            np.testing.assert_array_equal(sliced.sentence_offsets, alone.sentence_offsets)
            np.testing.assert_array_equal(sliced.spans.reshape(-1, 2), alone.spans.reshape(-1, 2))
