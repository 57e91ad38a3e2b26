"""Comments cite the project's own docs, and every citation names a section that exists.

A person who clones the repository alone must be able to follow each ``docs/<file>.md §N``;
nothing may point outside it (the specs the docs were written from are not in the repo, nor is
the issue tracker).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"docs/([a-z-]+\.md)((?:,? ?§[0-9A-Z][0-9.]*)*)")
SECTION = re.compile(r"§([0-9A-Z][0-9.]*?)\.?(?=$|[^0-9.])")
HEADING = re.compile(r"^#{1,4} (?:§)?([0-9A-Z](?:\.?[0-9]+)*)\.? ", re.MULTILINE)
OUTSIDE = re.compile(r"\.\./shared|\bshared/spec\b|\bspec/[a-z-]+\.md|\bCONTRACT(?:\.md)?\b")
# An issue tracker is not in the repository either: a comment says the rule, or cites the docs.
ISSUE = re.compile(r"\bissues? ?#?[0-9]+", re.IGNORECASE)


def _code_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "*.py", "*.html", "*.js", "*.css", "bin/*", ".ci/*"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    return [ROOT / name for name in listed if "static/vendor" not in name and (ROOT / name).is_file()]


def _sections(doc: str) -> set[str]:
    return set(HEADING.findall((ROOT / "docs" / doc).read_text()))


def _lines_matching(pattern: re.Pattern[str]) -> list[str]:
    """``path:line`` of every code line (this file aside) that ``pattern`` finds something in."""
    return [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _code_files()
        if path.name != Path(__file__).name
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]


def test_no_code_cites_files_outside_the_repository():
    assert _lines_matching(OUTSIDE) == []


def test_no_code_cites_an_issue_number():
    assert _lines_matching(ISSUE) == []


def test_every_docs_citation_names_an_existing_file_and_section():
    sections: dict[str, set[str]] = {}
    broken = []
    for path in _code_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for doc, cited in CITATION.findall(line):
                if not (ROOT / "docs" / doc).is_file():
                    broken.append(f"{path.relative_to(ROOT)}:{number}: no docs/{doc}")
                    continue
                known = sections.setdefault(doc, _sections(doc))
                for section in SECTION.findall(cited):
                    if section not in known:
                        broken.append(f"{path.relative_to(ROOT)}:{number}: docs/{doc} has no §{section}")
    assert broken == []
