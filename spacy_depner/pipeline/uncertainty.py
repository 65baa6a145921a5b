"""How uncertain an entity component is about each Doc, from its exact
marginals: what ``python -m spacy_depner rank`` orders a corpus by, to choose
the Docs worth annotating next.

For the mentions the component predicts (its ``decoding``: MAP or
posterior, after its temperatures; those below its ``threshold`` dropped),
with p(m) the marginal probability of a mention m under the model:

* ``expected_errors``: the expected number of entity errors of the
  prediction, false positives plus false negatives: sum over the predicted
  mentions of (1 - p(m)) plus sum over every other mention of p(m) (the
  latter is E[number of mentions] - sum over the predicted of p(m)).
* ``entropy``: the entropy of the distribution over the Doc's analyses
  (``Structure.entropy``; over sub-hypergraphs for ``hypergraph_ner``).
* ``least_probable``: 1 - the smallest p(m) of a predicted mention (0 when
  nothing is predicted).

The batch goes through the component's own steps (``EntityPipe.problem``:
read once, the model once, the temperatures; then ``decode``), except that
each Doc is its own batch for the structure, so every measure is exactly the
Doc's, and nothing is fixed in advance (no ``given`` entities or whitespace:
the measures are those of the model's whole distribution over the Doc).
"""

from typing import List, NamedTuple, Optional, Tuple

import numpy as np
from spacy.tokens import Doc

from .entity_pipe import EntityPipe

MEASURES = ("expected_errors", "entropy", "least_probable")


PROPOSAL_FLOOR = 0.05  # the smallest marginal of a mention proposed for review (``DocUncertainty.proposals``)
VOTE_FLOOR = 0.01  # the smallest marginal of a mention that votes in a second stage's soft majority features


class DocUncertainty(NamedTuple):
    """The prediction for one Doc and how uncertain it is: mentions (M, 3)
    [start, end (exclusive), label index] in Doc tokens; probabilities (M,);
    the measures of ``MEASURES``; proposals (P, 3), every mention of the
    component's space whose marginal is at least ``PROPOSAL_FLOOR`` (predicted
    or not), and their marginals (P,): what ``rank --unit span|region`` asks a
    person to review."""

    mentions: np.ndarray
    probabilities: np.ndarray
    expected_errors: float
    entropy: float
    least_probable: float
    proposals: np.ndarray = np.zeros((0, 3), dtype=np.int64)
    proposal_probabilities: np.ndarray = np.zeros(0)


def doc_uncertainties(pipe: EntityPipe, docs: List[Doc]) -> List[DocUncertainty]:
    """``DocUncertainty`` of each Doc by the component ``pipe`` (the
    components before it must have run, e.g. a parser it reads)."""
    if not docs:
        return []
    found, options = [], pipe.decoding_options()
    for doc_scores, layout, marginals in doc_marginals(pipe, docs):
        analysis, _ = pipe.decode(doc_scores, layout, marginals=marginals)
        every, values = marginals.mentions(0.0)
        predicted = np.asarray(analysis.mentions[:, :3], dtype=np.int64)
        probabilities, predicted = pipe.confident(marginals.of(predicted), predicted)
        expected_errors = float((1.0 - probabilities).sum() + values.sum() - probabilities.sum())
        proposed = values >= PROPOSAL_FLOOR
        proposals = np.asarray(every[proposed, :3], dtype=np.int64).reshape(-1, 3)
        found.append(
            DocUncertainty(
                np.stack([predicted[:, 0], predicted[:, 1] + 1, predicted[:, 2]], axis=1).reshape(-1, 3),
                probabilities,
                max(expected_errors, 0.0),
                pipe.structure.entropy(doc_scores, layout, marginals, **options),
                float(1.0 - probabilities.min()) if probabilities.shape[0] else 0.0,
                np.stack([proposals[:, 0], proposals[:, 1] + 1, proposals[:, 2]], axis=1).reshape(-1, 3),
                np.asarray(values[proposed], dtype=np.float64),
            )
        )
    return found


def doc_marginals(pipe: EntityPipe, docs: List[Doc]):
    """``(scores, layout, marginals)`` of each Doc by the component ``pipe``:
    the batch read once, the model once, the temperatures; then each Doc its
    own batch for the structure, nothing fixed in advance."""
    if pipe.cfg.get("heads"):
        raise ValueError(
            f"'{pipe.name}' has heads = true: its sub-hypergraphs also assign heads, and the exact "
            "marginal of a mention is not available; use a hypergraph_ner without heads"
        )
    problem = pipe.problem(docs, conditioned=False)
    batch, scores = problem.batch, problem.scores
    rows_part = scores[0] if isinstance(scores, tuple) else scores
    options = pipe.decoding_options()
    start = 0
    for d in range(len(docs)):
        layout = pipe.layout(batch.of_doc(d))
        rows = layout.spans.shape[0] if layout.spans is not None else layout.n_tokens
        part = rows_part[start : start + rows]
        start += rows
        doc_scores = (part, *scores[1:]) if isinstance(scores, tuple) else part
        yield doc_scores, layout, pipe.structure.marginals(doc_scores, layout, **options)
    if start != rows_part.shape[0]:
        raise RuntimeError(
            f"'{pipe.name}': the Docs' score rows ({start}) differ from the batch's ({rows_part.shape[0]})"
        )


def soft_votes(pipe: EntityPipe, docs: List[Doc], floor: float = VOTE_FLOOR) -> List[List[Tuple[int, int, str, float]]]:
    """Every mention of each Doc whose marginal probability under ``pipe``
    is at least ``floor``, predicted or not: (start, end_exclusive, label,
    probability), in (start, end, label index) order. What a second stage's
    soft votes count (``spacy_depner.ml.majority_labels``, "Soft votes")."""
    if not docs:
        return []
    labels = pipe.labels
    found = []
    for _, _, marginals in doc_marginals(pipe, docs):
        every, values = marginals.mentions(floor)
        kept = np.asarray(values, dtype=np.float64) >= floor
        mentions = np.asarray(every[kept, :3], dtype=np.int64).reshape(-1, 3)
        found.append(
            [
                (int(first), int(last) + 1, labels[int(label)], min(1.0, float(p)))
                for (first, last, label), p in zip(mentions.tolist(), np.asarray(values)[kept].tolist())
            ]
        )
    return found


def only_entity_pipe(nlp, name: Optional[str] = None) -> EntityPipe:
    """The entity component ``name`` of ``nlp``, or its only one."""
    pipes = {n: p for n, p in nlp.pipeline if isinstance(p, EntityPipe)}
    if name is not None:
        if name not in pipes:
            raise ValueError(
                f"The pipeline has no entity component named {name!r} (its entity components: "
                f"{', '.join(pipes) or 'none'}): give --component one of them"
            )
        return pipes[name]
    if len(pipes) != 1:
        raise ValueError(
            f"The pipeline has {len(pipes)} entity components ({', '.join(pipes) or 'none'}): "
            + (
                "give --component NAME"
                if pipes
                else "rank needs a dgm_ner, chain_ner, nested_ner or hypergraph_ner component"
            )
        )
    return next(iter(pipes.values()))
