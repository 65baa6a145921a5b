"""The linear-chain CRF over BIO / BILOU tags (Lafferty et al. 2001): ``CHAIN``."""

from .structure import CHAIN, layout

__all__ = ["CHAIN", "layout"]
