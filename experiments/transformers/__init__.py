"""The report of the transformer runs (``python -m experiments transformer-report``)."""
