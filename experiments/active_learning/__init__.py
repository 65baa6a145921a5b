"""The active-learning study (``python -m experiments active-learning-study``)."""
