"""The confidence study (``python -m experiments confidence``)."""
