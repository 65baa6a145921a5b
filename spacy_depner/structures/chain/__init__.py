"""The linear-chain CRF over BIO / BILOU tags (Lafferty et al. 2001): ``structure.CHAIN``."""
