"""The partial-annotation study (``python -m experiments partial-study``)."""
