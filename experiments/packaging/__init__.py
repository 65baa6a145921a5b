"""The study's trained pipelines packaged with their accuracy over the seeds (``python -m experiments package``),
through the library's packaging (``python -m spacy_depner package``)."""
