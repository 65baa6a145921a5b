"""spacy-depner: dependency-guided, nested and overlapping NER for spaCy.

Importing the package registers its factories, architectures, scorers and
readers with spaCy (the entry points do the same without an import). Numba
functions compile on first use and are cached on disk.
"""
from .readers import documents, genia, gum, uner  # noqa: F401
from .ml import nonlocal_features, pooled_span_scorer, span_scorer, tag_scorer  # noqa: F401
from .pipeline import chain_ner, dgm_ner, hypergraph_ner, nested_ner, two_stage  # noqa: F401
from . import scoring  # noqa: F401

__version__ = "0.1.0"
