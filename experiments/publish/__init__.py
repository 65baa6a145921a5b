"""The study reports copied into the documentation site (``python -m experiments publish-results``)."""
