"""Docs read into flat arrays, once per batch: the one place where spaCy Docs
become the arrays of the structures and models (token, sentence and Doc
offsets, trees, candidate spans). Below ``ml`` and ``pipeline``, above
``structures``."""
