"""The steps of a training workflow around ``spacy train``: a trained
pipeline packaged with its evaluation (``packaging``)."""
