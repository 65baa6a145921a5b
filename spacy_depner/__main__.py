from .cli.app import app
from .cli.errors import main

if __name__ == "__main__":
    main(app, "python -m spacy_depner")
