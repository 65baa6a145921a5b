"""The steps of a training workflow around ``spacy train``: the first
stage's cross-validated entities that a two-stage model's second stage
trains on (``first_stage_folds``), and a trained pipeline packaged with its
evaluation (``packaging``)."""
