"""The fenced blocks of README.md and docs/**/*.md, as tests/docs/test_docs_run.py runs and compares them.

A block is what a reader copies. Each one is classified once, here:
- a command block (sh, bash, console, shell) is run, unless a marker says why it cannot be;
- an output block (no language, text, or json) right after a command block, or with a
  `command="..."` marker, is compared with what that command prints;
- a data block (toml, yaml, json, csv) is parsed, so a config example at least reads;
- anything else, and a bare output block that names no command, fails until it gets a marker.

A marker is an HTML comment on the line before the fence (blank lines between are allowed):
    <!-- doc-test: skip reason="needs a hosted provider" -->   not run; listed as skipped with the reason
    <!-- doc-test: xfail item=12 -->                           run; expected to fail (strict) until fix 12 lands
    <!-- doc-test: command="debate-tui probe --recorded topical-chat" -->   the output block below shows this
    <!-- doc-test: match=exact -->       stdout is the block, whole (default: its lines, in order, anywhere in
                                         stdout, stderr and the report the run wrote)
    <!-- doc-test: match=keys -->        a JSON sample: the same keys as the last JSON line on stdout
    <!-- doc-test: match=subset -->      a JSON sample showing some keys: each is in that line
    <!-- doc-test: match=values -->      a JSON sample: the same keys, each with the value printed, except a
                                         value shown as "..." (an id, a path, a time)
    <!-- doc-test: tolerance=0.005 -->   every number within this of the one printed
    <!-- doc-test: background -->        the block's first line is a server: run it in the background,
                                         put the port it prints where the rest says PORT
Markers combine: `<!-- doc-test: xfail item=13 tolerance=0.001 -->`.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from tests.helpers.sessions import run

COMMAND_LANGS = frozenset({"sh", "bash", "console", "shell"})
OUTPUT_LANGS = frozenset({"", "text", "json"})
DATA_LANGS = frozenset({"toml", "yaml", "json", "csv"})
MARKER = re.compile(r"^\s*<!--\s*doc-test:(.*?)-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)\s*$")
KNOWN_KEYS = frozenset({"skip", "reason", "xfail", "item", "command", "match", "tolerance", "background"})


@dataclass
class Block:
    """One fenced block: where it is, what it holds, and what its marker asks."""

    page: str
    line: int
    lang: str
    text: str
    marker: dict[str, str] = field(default_factory=dict)
    follows_command: bool = False
    kind: str = ""
    """command, output, data, or unmarked (a test fails on it)."""
    command: Block | None = None
    """For an output block: the command block it shows the output of (None with a command= marker)."""

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def _marker(text: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        if key not in KNOWN_KEYS:
            raise ValueError(f"unknown doc-test marker key {key!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
        pairs[key] = value
    return pairs


def parse(path: Path, page: str) -> list[Block]:
    """Every fenced block of one Markdown file, each with the marker written just before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    last_closed = -10  # index of the line that closed the previous block
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        indent, fence, lang = opened.groups()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not re.match(rf"^\s*{fence[0]}{{{len(fence)},}}\s*$", lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        before = i - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        found = MARKER.match(lines[before]) if before >= 0 else None
        marker = _marker(found.group(1)) if found else {}
        after_block = before == last_closed or (found is not None and _closes_at(lines, before, last_closed))
        blocks.append(Block(page, i + 1, lang.lower(), "\n".join(body) + "\n", marker, after_block))
        last_closed = j
        i = j + 1
    _classify(blocks)
    return blocks


def _closes_at(lines: list[str], marker_line: int, last_closed: int) -> bool:
    """A marker sits between the previous block and this one, with only blank lines around it."""
    k = marker_line - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    return k == last_closed


def _classify(blocks: list[Block]) -> None:
    previous: Block | None = None
    for block in blocks:
        if block.lang in COMMAND_LANGS:
            block.kind = "command"
        elif block.lang in OUTPUT_LANGS and (
                "command" in block.marker
                or (block.follows_command and previous is not None and previous.kind == "command")):
            block.kind = "output"
            block.command = None if "command" in block.marker else previous
        elif block.lang in DATA_LANGS:
            block.kind = "data"
        else:
            block.kind = "unmarked"
        previous = block


def collect(root: Path) -> list[Block]:
    """README.md, then docs/ page by page."""
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [block for path in pages for block in parse(path, path.relative_to(root).as_posix())]


def check_data(block: Block) -> None:
    """A config or data example at least parses as what its fence says it is."""
    if block.lang == "toml":
        tomllib.loads(block.text)
    elif block.lang == "json":
        for line in _json_documents(block.text):
            json.loads(line)
    elif block.lang == "yaml":
        import yaml  # litellm's dependency, as --router reads YAML with it

        yaml.safe_load(block.text)
    elif block.lang == "csv":
        import csv

        rows = list(csv.reader(line for line in block.text.splitlines() if line.strip() != "..."))
        assert rows and all(len(row) == len(rows[0]) for row in rows), "rows of different widths"


def _json_documents(text: str) -> list[str]:
    """One JSON object a line, or one object over several lines."""
    stripped = text.strip()
    lines = stripped.splitlines()
    if all(line.startswith("{") and line.endswith("}") for line in lines):
        return lines
    return [stripped]


NUMBER = re.compile(r"[-+]?\d[\d,]*\.?\d*(?:e[-+]?\d+)?")


def _line_pattern(shown: str, tolerance: float | None) -> tuple[re.Pattern[str], list[float]]:
    """A shown line as a pattern: `...` matches anything, a run of spaces any spaces;
    with a tolerance every number is captured and compared afterwards."""
    parts: list[str] = []
    numbers: list[float] = []
    for piece in re.split(r"(\.\.\.|\s+)", shown.strip()):
        if piece == "...":
            parts.append(".*?")
        elif piece.isspace():
            parts.append(r"\s+")
        elif tolerance is None:
            parts.append(re.escape(piece))
        else:
            last = 0
            for found in NUMBER.finditer(piece):
                parts.append(re.escape(piece[last:found.start()]))
                parts.append(r"([-+]?\d[\d,]*\.?\d*(?:e[-+]?\d+)?)")
                numbers.append(float(found.group().replace(",", "")))
                last = found.end()
            parts.append(re.escape(piece[last:]))
    return re.compile("".join(parts)), numbers


def compare(shown: str, printed: str, match: str = "lines", tolerance: float | None = None) -> str | None:
    """None when `printed` shows what the doc shows, else the first difference, said plainly."""
    if match == "exact":
        return None if shown.strip() == printed.strip() else f"expected exactly:\n{shown}\ngot:\n{printed}"
    if match in ("keys", "subset", "values"):
        got = [json.loads(line) for line in printed.splitlines() if line.startswith("{")]
        want = json.loads(_json_documents(shown)[0])
        if not got:
            return f"no JSON line printed:\n{printed}"
        missing, extra = set(got[-1]) - set(want), set(want) - set(got[-1])
        if match == "subset":
            missing = set()
        if missing or extra:
            return f"keys the doc lacks: {sorted(missing)}; keys not printed: {sorted(extra)}"
        if match == "values" and (wrong := {key: got[-1][key] for key, value in want.items()
                                            if value != "..." and got[-1][key] != value}):
            return f"values the doc shows otherwise: {wrong}"
        return None
    actual = [line.strip() for line in printed.splitlines()]
    at = 0
    for wanted in (line for line in shown.splitlines() if line.strip() and line.strip() != "..."):
        pattern, numbers = _line_pattern(wanted, tolerance)
        while at < len(actual):
            found = pattern.fullmatch(actual[at])
            at += 1
            if found and all(abs(float(got.replace(",", "")) - want) <= (tolerance or 0) + 1e-12
                             for got, want in zip(found.groups(), numbers, strict=True)):
                break
        else:
            return f"line not printed (in this order): {wanted.strip()!r}\n--- printed ---\n{printed}"
    return None
