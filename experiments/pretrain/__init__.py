"""Tok2vec pretraining on the training text (``python -m experiments pretrain``)."""
