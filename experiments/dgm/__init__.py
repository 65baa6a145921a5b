"""The DGM study (``python -m experiments study``): its models, report, the pretrained arms and the
jackknifed trees of its training data."""
