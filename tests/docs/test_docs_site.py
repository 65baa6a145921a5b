"""The documentation site builds with ``mkdocs build --strict`` (broken links
and unknown pages fail it), its command-line page lists every command of
``python -m spacy_depner``, and each component page's settings marker became
the table of that factory's defaults."""

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="mkdocs is not installed: pip install -e '.[docs]' in the checkout")
pytest.importorskip("material", reason="mkdocs-material is not installed: pip install -e '.[docs]' in the checkout")

# The build alone takes about 8 s; with the imports about 15 s.
pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*settings:\s*(\w+)\s*-->\s*$", re.MULTILINE)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site_dir = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return site_dir


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def settings_pages() -> dict:
    """{component: page name} of the component pages with a settings marker."""
    markers = {
        path.stem: MARKER.search(path.read_text(encoding="utf-8"))
        for path in (ROOT / "docs" / "components").glob("*.md")
    }
    return {marker.group(1): stem for stem, marker in markers.items() if marker}


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def table_rows(text: str, header: list) -> list:
    """The body rows, as lists of cell texts, of each table in the HTML ``text`` whose header cells are ``header``."""
    tables = []
    for table in re.findall(r"<table>(.*?)</table>", text, re.S):
        head, _, body = table.partition("</thead>")
        if [_text(cell) for cell in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)] == header:
            tables.append(
                [
                    [_text(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
                    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
                ]
            )
    return tables


def test_cli_page_lists_every_command(site):
    import typer.main

    from spacy_depner.cli.app import app

    root = typer.main.get_command(app)
    commands = root.list_commands(root.context_class(root))
    text = html.unescape(page(site, "cli"))
    assert commands
    for command in commands:
        assert f'id="{command}"' in text, command
        assert f"python -m spacy_depner {command} [OPTIONS]" in text, command


def test_component_pages_have_their_factory_settings(site):
    import spacy

    nlp = spacy.blank("en")
    pages = settings_pages()
    assert {"dgm_ner", "nested_ner"} <= set(pages)
    for component, stem in pages.items():
        text = html.unescape(page(site, f"components/{stem}")).replace("<wbr>", "")  # a dotted default may wrap
        assert "<!-- settings:" not in text, f"{stem}: marker left in the page"
        for setting, value in nlp.get_factory_meta(component).default_config.items():
            shown = next((v for k, v in value.items() if k.startswith("@")), None) if isinstance(value, dict) else None
            assert f"<code>{setting}</code>" in text, (component, setting)
            assert f"<code>{shown or json.dumps(value)}</code>" in text, (component, setting, value)


def test_generated_tables_describe_every_row(site):
    pages = settings_pages()
    assert set(pages) == {"dgm_ner", "chain_ner", "nested_ner", "hypergraph_ner", "first_stage_spans", "sentence_ner"}
    generated = [(f"components/{stem}", ["setting", "type", "default", "description"]) for stem in pages.values()]
    generated.append(("components/architectures", ["registered name", "kind", "settings (default)", "what it is"]))
    for name, header in generated:
        tables = table_rows(page(site, name), header)
        assert len(tables) == 1 and tables[0], (name, len(tables))
        assert all(len(row) == len(header) for row in tables[0]), name
        undescribed = [row[0] for row in tables[0] if not row[-1]]
        assert not undescribed, (name, undescribed)


def test_home_and_results_pages(site):
    home = page(site, "")
    assert "spacy-depner" in home and 'href="docs/' not in home
    results = html.unescape(page(site, "results"))
    for published in sorted((ROOT / "docs" / "results").glob("*.md")):
        if published.name == "index.md":  # the overview itself
            continue
        assert f'href="{published.stem}/"' in results, published.name
