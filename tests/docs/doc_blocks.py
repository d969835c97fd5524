"""Fenced code blocks of docs/*.md, with the marker comment above each.

A block is ```LANG ... ``` (possibly indented, inside a list item). Its marker
is an HTML comment on the last non-blank line before the fence, e.g.
`<!-- not run: reason -->`, `<!-- c fragment -->`, `<!-- go example: X -->`.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re

FENCE = re.compile(r"^(\s*)```(.*)$")
MARKER = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")


@dataclasses.dataclass
class Block:
    path: pathlib.Path
    line: int          # 1-based line of the opening fence
    lang: str          # the info string's first word ("" when untagged)
    info: str          # the whole info string, e.g. "rust,ignore"
    marker: str        # text of the HTML comment just above, "" when none
    code: str

    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks_of(path: pathlib.Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, info = m.group(1), m.group(2).strip()
        j = i - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        mm = MARKER.match(lines[j]) if j >= 0 else None
        body: list[str] = []
        k = i + 1
        while k < len(lines) and not re.match(r"^\s*```\s*$", lines[k]):
            line = lines[k]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            k += 1
        if k == len(lines):
            raise SystemExit(f"{path.name}:{i + 1}: code block never closed")
        lang = re.split(r"[,\s{]", info, maxsplit=1)[0].lower() if info else ""
        out.append(Block(path, i + 1, lang, info, mm.group(1) if mm else "", "\n".join(body) + "\n"))
        i = k + 1
    return out


def all_blocks(docs: pathlib.Path) -> list[Block]:
    return [b for p in sorted(docs.glob("*.md")) for b in blocks_of(p)]
