"""The structures: dynamic programs over flat batch arrays, numpy + numba, no
spaCy. One folder per family (``lattice``, ``chain``, ``nested``,
``hypergraph``; ``trees`` holds the tree check and the candidate spans),
each with a ``structure.py`` that puts the family under the one protocol of
``protocol`` (log_partition, marginals, viterbi, posterior_decode, counts;
called as op(scores, layout, **options)). A family package exports its
structure object and its Layout constructor only (``from
spacy_depner.structures.chain import CHAIN, layout``); the modules with a
leading underscore are private. ``shared``, ``score_range`` and
``interval_selection`` hold what the families share. numba's cache directory and
its lock are set by ``spacy_depner.numba_runtime`` before any kernel is decorated."""
