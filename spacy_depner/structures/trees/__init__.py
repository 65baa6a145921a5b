"""Dependency trees of a batch: the forest check and the candidate spans they give (DGM, DGM-S, all spans up to L)."""
