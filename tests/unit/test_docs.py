"""The documentation: README.md stays one screen for a newcomer that starts with the two commands,
the site (``mkdocs.yml``, ``docs/``) lists every page and builds with ``mkdocs build --strict`` (a
broken link or anchor, or a page left out of nav, fails it), and no link leaves the repository —
``../shared`` beside the project on our machines is not in a clone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_LINES = 160
TWO_COMMANDS = [  # CI (.ci/run) and users rely on these lines as they are
    "bash scripts/main.sh     # 1. set up everything, run the main job (small comparison → reports/out/)",
    "bash scripts/test.sh     # 2. set up everything, run lint + the whole test suite (what CI runs)",
]
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).+?\1", re.S)
LINK_TARGETS = [
    re.compile(r"\]\(\s*<?([^)\s>]+)"),  # [text](target), ![alt](target)
    re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M),  # [label]: target
    re.compile(r"<((?:https?|ftp|file)://[^>\s]+)>"),  # <https://…>
    re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']"""),  # HTML
]


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans: what Markdown can make links of."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(path: Path) -> list[str]:
    text = prose(path.read_text())
    return [match.group(1) for pattern in LINK_TARGETS for match in pattern.finditer(text)]


def nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for item in nav:
        entries = item.values() if isinstance(item, dict) else [item]
        for entry in entries:
            pages.extend(nav_pages(entry) if isinstance(entry, list) else [entry])
    return pages


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it (where README.md is read): lower case, punctuation
    dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_is_one_screen_for_a_newcomer() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines (at most {README_LINES})"


def test_readme_starts_with_the_two_commands() -> None:
    text = README.read_text()
    first_block = re.search(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    assert first_block, "README.md has no code block"
    assert first_block.group(1).splitlines() == TWO_COMMANDS
    before = text[: first_block.start()].strip().splitlines()
    assert before == ["# tsbench"], f"README.md has more than its title before the commands: {before}"


def test_every_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["docs_dir"] == "docs"
    listed = nav_pages(config["nav"])
    pages = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert sorted(listed) == pages, f"nav lists {sorted(listed)}, docs/ holds {pages}"
    assert len(set(listed)) == len(listed), f"a page is listed twice: {listed}"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_link_leaves_the_repository(path: Path) -> None:
    for target in links(path):
        assert "../shared" not in target, f"{path.name} links {target} (not in a clone)"
        assert not re.match(r"^[a-z][a-z0-9+.-]*:|^//", target, re.I), f"{path.name} links {target}"
        local = target.split("#", 1)[0]
        if local:
            resolved = (path.parent / local).resolve()
            assert resolved.is_relative_to(ROOT), f"{path.name} links {target}, outside the repository"


def test_readme_links_reach_their_pages_and_headings() -> None:
    for target in links(README):
        local, _, anchor = target.partition("#")
        page = (ROOT / local).resolve() if local else README
        assert page.is_file(), f"README.md links {target}: no such file"
        if anchor and page.suffix == ".md":
            headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", page.read_text()), re.M)
            assert anchor in {slug(heading) for heading in headings}, f"README.md links {target}: no heading"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_py_is_defined_before_it_is_used(path: Path) -> None:
    text = path.read_text()
    used = text.find("$py ")
    if used >= 0:
        defined = re.search(r"\bpy=\S", text)
        assert defined and defined.start() < used, f"{path.name} uses $py before defining it"


def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    """No --quiet or --verbose: with either, MkDocs 1.6.1 never counts the warnings and a strict build
    with a broken link exits 0 (mkdocs/mkdocs#4126, #3991)."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    site = tmp_path / "site"
    config = ROOT / "mkdocs.yml"
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (site / "index.html").is_file()


def test_ci_builds_the_site_in_strict_mode() -> None:
    script = (ROOT / "scripts" / "test.sh").read_text().splitlines()
    build = [line for line in script if "bin/mkdocs build" in line and not line.lstrip().startswith("#")]
    assert build and all("--strict" in line for line in build), build
    assert not any(re.search(r"\s(-q|--quiet|-v|--verbose)\b", line) for line in build), build
