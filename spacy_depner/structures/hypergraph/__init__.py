"""The mention hypergraph of Lu & Roth (2015): ``HYPERGRAPH``."""

from .structure import HYPERGRAPH, layout

__all__ = ["HYPERGRAPH", "layout"]
