"""spacy-depner: dependency-guided, nested and overlapping NER for spaCy.

Importing the package registers its factories, architectures, scorers and
readers with spaCy (the entry points do the same without an import). Numba
functions compile on first use and are cached on disk, in a per-user cache
directory outside the package (``NUMBA_CACHE_DIR`` moves it), with its index
locked against concurrent writers: ``numba_runtime``, installed before any
module below decorates a function.
``displacy_options`` gives displaCy one colour per label of a pipeline.
"""

from .numba_runtime import install

install()

from .evaluation import scorers  # noqa: F401
from .ml import nonlocal_features, pooled_span_scorer, span_scorer, tag_scorer, token_scorer  # noqa: F401
from .pipeline import (  # noqa: F401
    chain_ner,
    comparable_parser_scores,
    dgm_ner,
    first_stage_spans,
    hypergraph_ner,
    nested_ner,
    sentence_ner,
    suggesters,
)
from .pipeline.display import displacy_options
from .readers import documents, first_stage_corpus, genia, gum, uner  # noqa: F401

__all__ = ["displacy_options"]

__version__ = "0.1.0"
