"""The study's trained pipelines packaged with their evaluation (``python -m experiments package``)."""
