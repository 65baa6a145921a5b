"""The span-based nested mention CRFs of Corro (2023): ``NESTED``."""

from .structure import NESTED, layout

__all__ = ["NESTED", "layout"]
