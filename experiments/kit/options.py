"""Command-line options that several study commands share (one typer.Option
object each; typer copies it for every command that uses it)."""

import typer

DATA = typer.Option(
    ..., help="Data directory, laid out as project.yml's assets (ud_ewt/r2.9/, uner_ewt/, genia/, ud_gum/)"
)
GENIA = typer.Option(
    None,
    help="Folder of GENIA's train/dev/test.jsonl (the project's corpus/genia, made by "
    "`python -m spacy_depner convert ... -c genia-xml`; default: DATA/genia)",
)
CONFIGS = typer.Option(..., help="Folder of the spacy train configs")
TRAINED = typer.Option(..., help="Where the pipelines go: OUTPUT/seed_<s>/<model>")
PIPELINES = typer.Option(
    ..., help="Folder of the trained pipelines, MODELS/seed_<s>/<model> (and their train_seconds.json)"
)
JSON_OUTPUT = typer.Option(..., help="JSON file to write")
JOBS = typer.Option(2, help="Trainings run at the same time, each on one thread")
SPLIT = typer.Option("test", help="Split to score")
CORPUS = typer.Option(
    "ewt",
    help="ewt (UNER English-EWT entities), gum (UD English-GUM's named mentions) or genia (GENIA abstracts, outermost mentions)",
)
TRAIN_SEEDS = typer.Option(
    "0",
    help="Training seeds, e.g. 0,1,2: every model is trained once per seed "
    "([system] seed), its pipelines to OUTPUT/seed_<s>/<model>",
)
RESUME = typer.Option(
    False,
    help="Keep the runs that finished in OUTPUT/seed_<s> (model-last, and the closing line of "
    "spacy train in OUTPUT/seed_<s>/logs/NAME.log) and train only the others, "
    "e.g. after an interrupted run or to add models",
)
SEEDS = typer.Option(None, help="Seeds to use, e.g. 0,1,2 (default: every seed_<s> folder of the models folder)")
# Given as Annotated[..., OPTION] = None, so that a command called as a function has None for them.
INIT_TOK2VEC = typer.Option(
    help="Pretrained tok2vec weights (`spacy pretrain`'s model<epoch>.bin), loaded into the "
    "tok2vec of every NER model (--paths.init_tok2vec), not the parser's "
    "(default: none, the seed's random weights)"
)
PRETRAINED = typer.Option(
    help="The pretrain.json of `python -m experiments pretrain`: its weights as --init-tok2vec, "
    "none if it pretrained 0 epochs"
)
PRETRAINED_PIPELINE = typer.Option(
    help="A pretrained spaCy pipeline (a folder such as DATA/models/en_core_web_sm-3.8.0, "
    "or an installed package name) whose parser, and tok2vec, the models named "
    "NAME@pretrained and NAME@pretrained-tok2vec read"
)
TRANSFORMER = typer.Option(
    help="A pretrained transformer (a Hugging Face model folder such as "
    "DATA/models/all-MiniLM-L6-v2, or a model name on a machine with internet): every model "
    "is trained on it, fine-tuned, in place of the CNN tok2vec (configs/recipe/transformer.cfg; "
    "needs spacy-depner[transformers])"
)
