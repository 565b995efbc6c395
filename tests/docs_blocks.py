"""The code blocks of the documentation (README.md and docs/**/*.md), and how each is run.

A page's fenced blocks run in the order of the page, in one namespace, in a scratch directory:

* ```` ```python ```` blocks are executed;
* ```` ```sh ```` blocks whose every command is ``pqbloom ...`` (or ``python -m pqbloom ...``) run as
  processes in the same directory, between the Python blocks around them; each must exit with 0;
* any other ```` ```sh ```` block (installs, the test suite, benchmarks...) must say why it is not run.

A block is annotated by an HTML comment on the line just before its fence (invisible on the page):

* ``<!-- test: spark -->``: the block needs the Spark session (``spark`` in the namespace): the page runs
  in the Spark tests;
* ``<!-- test: skip: REASON -->``: the block is not run, and the test reports REASON.

Other fences (```` ```text ````, plain ```` ``` ````) are output or formats, never code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.paths import ROOT

FENCE = re.compile(r"^```(\w*)\s*$")
ANNOTATION = re.compile(r"^<!--\s*test:\s*(.*?)\s*-->$")
CODE = ("python", "sh")


@dataclass
class Block:
    page: str
    index: int  # 1-based among the page's code blocks
    lang: str
    code: str
    line: int  # the fence's line number (1-based)
    spark: bool = False
    skip: str | None = None  # the reason it is not run

    def where(self) -> str:
        return f"{self.page}:{self.line} (block {self.index}, {self.lang})"


@dataclass
class Page:
    path: Path
    blocks: list[Block] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def needs_spark(self) -> bool:
        return any(b.spark and not b.skip for b in self.blocks)


def parse(path: Path) -> Page:
    """The code blocks of the page at ``path`` with their annotations; a malformed annotation is an error."""
    page = Page(path)
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise ValueError(f"{page.name}:{i + 1}: a fence that is never closed")
        i = end + 1
        if lang not in CODE:
            continue
        block = Block(page.name, len(page.blocks) + 1, lang, "\n".join(lines[start + 1:end]) + "\n", start + 1)
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        note = ANNOTATION.match(lines[prev].strip()) if prev >= 0 else None
        if note:
            words = note.group(1)
            if words == "spark":
                block.spark = True
            elif words.startswith("skip:") and words[5:].strip():
                block.skip = words[5:].strip()
            else:
                raise ValueError(f"{block.where()}: unknown annotation {words!r} (spark, or skip: REASON)")
        page.blocks.append(block)
    return page


def doc_pages() -> list[Path]:
    """README.md, then every Markdown page under docs/ (sorted)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def commands(block: str) -> list[str]:
    """Shell commands of a block: continuation lines joined, comments dropped."""
    text = block.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def pqbloom_argv(command: str) -> list[str] | None:
    """The arguments after ``pqbloom`` when ``command`` runs pqbloom's command line, else None."""
    import shlex

    argv = shlex.split(command)
    if argv[:1] == ["pqbloom"]:
        return argv[1:]
    if argv[:3] == ["python", "-m", "pqbloom"]:
        return argv[3:]
    return None
