"""Where a command does what a spaCy command does, it takes spaCy's
arguments in spaCy's order and spaCy's options with spaCy's flags (typer's
click parameters walked, ours against spacy.cli's); a spaCy option left
out is listed here with the reason. The earlier forms still work, with a
warning, for one release. Every argument name is upper case."""

import json
import warnings
from pathlib import Path

import pytest
import spacy.cli  # noqa: F401  (registers spaCy's commands on its app)
import typer
from spacy.cli._util import app as spacy_app

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run

OURS = typer.main.get_command(app).commands
SPACY = typer.main.get_command(spacy_app).commands
DATA = Path(__file__).parents[1] / "data"

# our command: (spaCy's command, our argument names in spaCy's order, {spaCy option left out: why})
MIRRORS = {
    "evaluate": (
        "evaluate",
        ["PIPELINE", "DATA"],
        {
            "--displacy-path": "no rendering: displacy's own command renders the saved Docs",
            "--displacy-limit": "no rendering",
            "--per-component": "the scores are those of the one entity component",
            "--spans-key": "doc.ents is scored here; span groups are evaluate-nested's, which takes -sk",
        },
    ),
    "evaluate-nested": (
        "evaluate",
        ["PIPELINE", "DATA"],
        {
            "--displacy-path": "no rendering",
            "--displacy-limit": "no rendering",
            "--per-component": "the scores are those of the span group -sk",
        },
    ),
    "convert": (
        "convert",
        ["INPUT", "OUTPUT_DIR"],
        {
            "--file-type": "always a DocBin (.spacy), or GENIA JSON lines for genia-xml",
            "--n-sents": "one Doc per sentence, or per document with --documents",
            "--seg-sents": "the corpora give their sentences",
            "--model": "no pipeline is run",
            "--morphology": "the CoNLL-U's features are kept as they are",
            "--merge-subtokens": "UD's words are the tokens",
            "--ner-map": "--labels keeps the entity labels asked for",
            "--lang": "the corpora are English",
            "--concatenate": "one INPUT file is one output file",
        },
    ),
    "find-threshold": (
        "find-threshold",
        ["PIPELINE", "DATA", "PIPE_NAME", "THRESHOLD_KEY", "SCORES_KEY"],
        {"--verbose": "the result is printed as JSON, the whole curve with --png"},
    ),
    "package": (
        "package",
        ["PIPELINE_DIR", "OUTPUT_DIR"],
        {
            "--code": "the package needs no code of its own: it requires spacy-depner",
            "--meta-path": "the meta is the pipeline's, with --name, --version and --evaluation",
            "--create-meta": "the meta is the pipeline's",
            "--force": "the package folder is always replaced",
            "--require-parent": "always: the package requires spaCy and spacy-depner",
        },
    ),
    "apply": ("apply", ["PIPELINE", "INPUT", "OUTPUT"], {}),
    "apply-ray": (
        "apply",
        ["PIPELINE", "INPUT", "OUTPUT"],
        {
            "--gpu-id": "Ray places the actors (--cpus-per-actor)",
            "--n-process": "--actors",
        },
    ),
}


def visible_arguments(command):
    return [p for p in command.params if p.param_type_name == "argument" and not getattr(p, "hidden", False)]


def options(command):
    """{long flag: every flag of that option (both sides of a --x/--y flag)} of a click command."""
    table = {}
    for param in command.params:
        if param.param_type_name != "option":
            continue
        flags = set(param.opts) | set(param.secondary_opts)
        for flag in flags:
            if flag.startswith("--"):
                table[flag] = flags
    return table


def short_flags(command):
    """{short flag: the option's first long flag} of a click command."""
    return {
        flag: next(f for f in param.opts + param.secondary_opts if f.startswith("--"))
        for param in command.params
        if param.param_type_name == "option"
        for flag in param.opts + param.secondary_opts
        if not flag.startswith("--")
    }


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_mirrored_commands_take_spacys_arguments_in_spacys_order(name):
    theirs, expected, _ = MIRRORS[name]
    spacy_arguments = visible_arguments(SPACY[theirs])
    assert len(spacy_arguments) == len(expected), [p.name for p in spacy_arguments]
    assert [p.metavar for p in visible_arguments(OURS[name])] == expected


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_mirrored_commands_take_every_spacy_option_with_its_flags_or_say_why_not(name):
    theirs, _, left_out = MIRRORS[name]
    spacy_options, our_options = options(SPACY[theirs]), options(OURS[name])
    assert set(left_out) <= set(spacy_options), "a reason for an option spaCy does not have"
    for flag, flags in spacy_options.items():
        if flag in left_out or flag == "--help" or any(f in left_out for f in flags):
            assert flag not in our_options or flag == "--help", (name, flag, "left out, yet ours has it")
            continue
        assert flag in our_options, (name, f"spaCy's {theirs} has {flag}")
        assert flags <= our_options[flag], (name, flag, flags, our_options[flag])


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_a_short_flag_means_what_it_means_in_spacy(name):
    theirs, _, _ = MIRRORS[name]
    spacy_flags, our_flags = short_flags(SPACY[theirs]), short_flags(OURS[name])
    for flag, long in our_flags.items():
        if flag in spacy_flags:
            assert options(SPACY[theirs])[spacy_flags[flag]] & options(OURS[name])[long], (name, flag)


def test_every_argument_name_is_upper_case():
    for name, command in OURS.items():
        for param in visible_arguments(command):
            assert param.metavar and param.metavar == param.metavar.upper(), (name, param.name, param.metavar)


def run_ok(capsys, *args) -> dict:
    assert run(app, [str(a) for a in args], "python -m spacy_depner") == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_convert_writes_input_name_spacy_into_output_dir_as_spacy_convert(capsys, tmp_path):
    conllu, iob2 = DATA / "tiny.conllu", DATA / "tiny.iob2"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # the new form warns of nothing
        new = run_ok(capsys, "convert", conllu, tmp_path / "out", "-c", "conllu-iob2", "--iob2", iob2)
        auto = run_ok(capsys, "convert", conllu, tmp_path / "auto", "--iob2", iob2)
    assert new["output"] == str(tmp_path / "out" / "tiny.spacy") and auto["output"] == str(
        tmp_path / "auto" / "tiny.spacy"
    )
    with pytest.warns(FutureWarning, match="convert INPUT OUTPUT --converter FORMAT"):
        old = run_ok(capsys, "convert", "conllu-iob2", conllu, tmp_path / "old.spacy", "--iob2", iob2)
    for path in (tmp_path / "auto" / "tiny.spacy", tmp_path / "old.spacy"):
        assert path.read_bytes() == (tmp_path / "out" / "tiny.spacy").read_bytes()
    assert {k: v for k, v in old.items() if k != "output"} == {k: v for k, v in new.items() if k != "output"}


def test_convert_says_which_converter_it_cannot_tell(capsys, tmp_path):
    (tmp_path / "corpus.txt").write_text("a\n", encoding="utf8")
    assert run(app, ["convert", str(tmp_path / "corpus.txt"), str(tmp_path)], "python -m spacy_depner") == 1
    assert "give -c with one of" in capsys.readouterr().err
    assert run(app, ["convert", str(DATA / "tiny.conllu"), str(tmp_path), "-c", "iob"], "x") == 1
    assert "unknown converter 'iob'" in capsys.readouterr().err


def test_find_threshold_refuses_another_key_or_score_naming_what_it_tunes(capsys, tmp_path):
    args = ["find-threshold", "pipeline", str(DATA / "tiny.conllu")]
    assert run(app, [*args, "dgm_ner", "temperature", "ents_f"], "x") == 1
    assert "THRESHOLD_KEY 'temperature'" in capsys.readouterr().err
    assert run(app, [*args, "dgm_ner", "threshold", "ents_p"], "x") == 1
    assert "give an F key" in capsys.readouterr().err
    assert run(app, [*args, "dgm_ner", "threshold"], "x") == 1
    assert "all three" in capsys.readouterr().err


def test_package_build_takes_spacys_formats():
    from spacy_depner.cli.package import builds_wheel

    assert builds_wheel("sdist") is False and builds_wheel("sdist,wheel") is True and builds_wheel("wheel") is True
    for bad in ("none", "egg", ""):
        with pytest.raises(typer.BadParameter, match="give sdist, or sdist,wheel"):
            builds_wheel(bad)
