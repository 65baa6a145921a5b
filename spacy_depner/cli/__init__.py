"""Command line: ``python -m spacy_depner <command>``; the typer app is in ``app``."""
