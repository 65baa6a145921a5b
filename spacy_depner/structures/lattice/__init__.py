"""The semi-Markov CRF over a lattice of candidate spans (DGM, DGM-S and the semi-Markov CRF of Jie, Muis & Lu 2017): ``LATTICE``."""

from .structure import LATTICE, layout

__all__ = ["LATTICE", "layout"]
