"""The two-stage non-local consistency study (``python -m experiments two-stage``)."""
