from spacy_depner.cli.errors import main

from .app import app

if __name__ == "__main__":
    main(app, "python -m experiments")
