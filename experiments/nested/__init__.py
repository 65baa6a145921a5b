"""The nested-mention study (``python -m experiments nested-study``): its models and report."""
