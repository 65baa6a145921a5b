"""``python -m spacy_depner coverage``: search-space coverage of gold entities."""
