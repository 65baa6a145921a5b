"""The home page: the repository's README.md with its links made to work inside the site."""

import re
from pathlib import Path

LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def _rewrite_link(match: re.Match) -> str:
    bang, text, target, title = match.group(1), match.group(2), match.group(3), match.group(4) or ""
    if re.match(r"[a-zA-Z][a-zA-Z+.-]*:|#", target):  # a URL or an anchor of the page itself
        return match.group(0)
    path = target.removeprefix("./")
    if path.startswith("docs/"):  # a page or image of the site: site-relative from the home page
        return f"{bang}[{text}]({path.removeprefix('docs/')}{title})"
    # A file of the repository outside the site (project.yml, configs/, ...): its name as text.
    name = path.split("#")[0]
    return text if name in text else f"{text} (`{name}`)"


def readme_markdown(readme: Path) -> str:
    """README.md's text with docs/... links made site-relative and links to the
    repository's other files turned into plain text (code blocks untouched)."""
    text = readme.read_text(encoding="utf-8")
    pieces, start = [], 0
    for fence in FENCE.finditer(text):
        pieces += [LINK.sub(_rewrite_link, text[start : fence.start()]), fence.group(0)]
        start = fence.end()
    pieces.append(LINK.sub(_rewrite_link, text[start:]))
    return "".join(pieces)
