"""Decoding given what a Doc already holds: the entities an earlier
component set in ``doc.ents`` (an entity ruler's), kept exactly as spaCy's
``ner`` keeps them unless ``overwrite_ents``, and its whitespace tokens,
which no mention may hold. The rest of the Doc is decoded from the exact
conditional distribution (``Structure.conditioned``): its MAP (or posterior)
analysis and marginals given the fixed tokens. A structure without
conditioned decoding (the mention hypergraph) drops the mentions that hold
a whitespace token instead."""

from typing import NamedTuple, Optional, Tuple

import numpy as np

from ..doc_arrays.batch import DocBatch
from ..doc_arrays.entities import preset_entities
from ..doc_arrays.tokens import whitespace_tokens
from ..structures.partial import touching_missing
from ..structures.protocol import Layout, Scores


class Given(NamedTuple):
    """What prediction is conditioned on (``EntityPipe.given``): the
    entities the Docs already have whose label the component knows, (M, 2)
    [first, last] in batch coordinates with label ids (M,) from 1 (none in a
    component that writes no ``doc.ents``, or with ``overwrite_ents``); and
    ``missing`` (N,) bool, the tokens free to decode: in no preset entity
    (of any label) and not whitespace. Decoding given it is exact: the MAP
    and the marginals of the analyses that hold the entities and touch no
    other fixed token (``Structure.conditioned``)."""

    entities: np.ndarray
    ids: np.ndarray
    missing: np.ndarray


class GivenDecoding:
    """A mixin of ``EntityPipe``: it reads ``self.settings``
    (``overwrite_ents``), ``self.labels``, ``self.writes_ents``,
    ``self.structure``, ``self.decode``, ``self.decoding_options`` and
    ``self.needs_marginals``. A component with conditioned decoding writes
    ``given_problem``."""

    conditions = True  # False: the structure has no conditioned decoding (``off_whitespace`` instead)

    def given(self, batch: DocBatch) -> Optional[Given]:
        """The ``Given`` of the batch: its preset entities (a component that
        writes ``doc.ents``, without ``overwrite_ents``) and whitespace
        tokens; None when it has neither, or the structure cannot condition."""
        if not self.conditions:
            return None
        fixed = whitespace_tokens(batch.docs)
        entities, ids = np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)
        if self.writes_ents and not self.settings["overwrite_ents"]:
            entities, ids, preset = preset_entities(batch.docs, batch.doc_offsets, self.labels)
            fixed |= preset
        return Given(entities, ids, ~fixed) if fixed.any() else None

    def given_problem(self, batch: DocBatch, given: Given) -> Tuple[DocBatch, Layout, object]:
        """The batch (a lattice's spans with the given entities added), its
        layout and the structure's encoding of the given entities (O on every
        other token)."""
        raise NotImplementedError

    def decode_given(
        self, scores: Scores, layout: Layout, encoding, missing: np.ndarray, with_probabilities: bool = True
    ) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """The mentions (M, 3) (sorted by first, last, label) and their
        probabilities (M,) (None without marginals) of the analysis decoded
        by the settings (``decode``) given the fixed mentions of ``encoding``
        and the tokens not ``missing`` (``Structure.conditioned``): the fixed
        mentions, probability 1, and the decoded mentions of the runs of
        missing tokens. ``with_probabilities`` as in ``decode``."""
        conditioned = self.structure.conditioned(scores, layout, encoding, missing, **self.decoding_options())
        mentions, probabilities = conditioned.fixed, np.ones(conditioned.fixed.shape[0])
        if conditioned.tokens.shape[0]:
            analysis, run_probabilities = self.decode(
                conditioned.scores, conditioned.layout, with_probabilities=with_probabilities
            )
            mentions = np.concatenate([mentions, conditioned.lift(analysis.mentions)])
            probabilities = None if run_probabilities is None else np.concatenate([probabilities, run_probabilities])
        order = np.lexsort((mentions[:, 2], mentions[:, 1], mentions[:, 0]))
        return mentions[order], None if probabilities is None or not self.needs_marginals else probabilities[order]

    def off_whitespace(
        self, batch: DocBatch, mentions: np.ndarray, probabilities: Optional[np.ndarray]
    ) -> Tuple[np.ndarray, Optional[np.ndarray]]:
        """The mentions (M, 3 or 5) and probabilities that hold no whitespace
        token, in a component whose structure cannot condition; all of them
        otherwise (``given`` fixed the whitespace already)."""
        if self.conditions:
            return mentions, probabilities
        kept = ~touching_missing(mentions[:, :2], whitespace_tokens(batch.docs))
        return mentions[kept], None if probabilities is None else probabilities[kept]
