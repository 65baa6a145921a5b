"""The mention hypergraph of Lu & Roth (2015): ``structure.HYPERGRAPH``."""
