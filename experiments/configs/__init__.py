"""The study configs of ``configs/``: composed from ``configs/recipe`` and ``configs/models`` (``compose``),
with a pretrained transformer (``transformer``) or a pretrained pipeline's parser and tok2vec (``pretrained``)."""
