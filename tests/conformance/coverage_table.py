#!/usr/bin/env python3
"""The "Requirement coverage" section of docs/conformance.md, from
tests/conformance/requirement_coverage.json.

  coverage_table.py --check   (the meson test conformance_requirement_coverage)
  coverage_table.py --write   (regenerate the section after editing the JSON)

--check fails when the section differs from the generated one, when a test
named in the JSON is not in this repository (a file, and the name as a whole
word in it), when a vector category it names is not in the vector file, or
when the counts do not add up: every prefix's ids numbered 1..n as the index
has them, ours and each other SDK's statuses summing to the number of ids, and
the other SDKs' totals equal to those the protocol's report publishes. A
reference marked pending (a test being added elsewhere) may be missing: it is
printed, not failed.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import sys

STATUSES = ("covered", "partial", "uncovered", "gap", "n/a")
OTHER_SDKS = ("cachekit-py", "cachekit-ts", "cachekit-rs")
SPEC_FILES = {"KEY": "cache-key-format.md", "ENC": "encryption.md", "FILE": "file-backend-format.md",
              "PRE": "intent-presets.md", "IOP": "interop-mode.md", "API": "saas-api.md", "WIRE": "wire-format.md"}
HEADING = "## Requirement coverage"
DATA = os.path.join("tests", "conformance", "requirement_coverage.json")
DOC = os.path.join("docs", "conformance.md")


def prefix_of(rid: str) -> str:
    return rid.rsplit("-", 1)[0]


def tally(entries, status_of) -> dict:
    """{prefix: {status: n}} plus "all"."""
    out = {"all": dict.fromkeys(STATUSES, 0)}
    for e in entries:
        s = status_of(e)
        for p in (prefix_of(e["id"]), "all"):
            out.setdefault(p, dict.fromkeys(STATUSES, 0))[s] += 1
    return out


class Checker:
    def __init__(self, root: str, vectors_dir: str | None):
        self.root = root
        self.vectors_dir = vectors_dir
        self.errors: list[str] = []
        self.notes: list[str] = []
        self._texts: dict[str, str | None] = {}
        self._vector_files: dict[str, object] = {}

    def text(self, rel: str) -> str | None:
        if rel not in self._texts:
            path = os.path.join(self.root, rel)
            if os.path.isfile(path):
                with open(path, encoding="utf-8", errors="replace") as f:
                    self._texts[rel] = f.read()
            else:
                self._texts[rel] = None
        return self._texts[rel]

    def has_test(self, ref: str) -> str | None:
        """None when `file:name` exists, else why not."""
        rel, sep, name = ref.rpartition(":")
        if not sep or not rel or not name:
            return f"not a file:name reference: {ref!r}"
        body = self.text(rel)
        if body is None:
            return f"no file {rel}"
        if not re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", body):
            return f"{rel} has no {name}"
        return None

    def has_category(self, ref: str) -> str | None:
        file, _, category = ref.partition(":")
        if self.vectors_dir is None:
            return None
        if file not in self._vector_files:
            path = os.path.join(self.vectors_dir, file)
            try:
                with open(path, encoding="utf-8") as f:
                    self._vector_files[file] = json.load(f)
            except (OSError, ValueError) as exc:
                self._vector_files[file] = None
                return f"cannot read {path}: {exc}"
        doc = self._vector_files[file]
        if doc is None:
            return f"cannot read {file}"

        def walk(node) -> bool:
            if isinstance(node, dict):
                return category in node or any(walk(v) for v in node.values())
            return False
        return None if walk(doc) else f"{file} has no category {category}"

    def check(self, data: dict) -> None:
        reqs = data["requirements"]
        expected = data["expected_ids"]
        ids = [e["id"] for e in reqs]
        if len(set(ids)) != len(ids):
            self.errors.append("duplicate ids: " + ", ".join(sorted({i for i in ids if ids.count(i) > 1})))
        for p, n in expected.items():
            want = [f"{p}-{i}" for i in range(1, n + 1)]
            got = [i for i in ids if prefix_of(i) == p]
            if got != want:
                self.errors.append(f"{p}: ids are not {p}-1 .. {p}-{n} in order")
        stray = sorted({prefix_of(i) for i in ids} - set(expected))
        if stray:
            self.errors.append("ids of no indexed spec file: " + ", ".join(stray))
        for e in reqs:
            rid, status = e["id"], e["status"]
            if status not in STATUSES:
                self.errors.append(f"{rid}: unknown status {status!r}")
            if e["binds"] not in ("sdk", "server", "caller"):
                self.errors.append(f"{rid}: unknown binds {e['binds']!r}")
            if e["binds"] != "sdk" and status != "n/a":
                self.errors.append(f"{rid}: binds the {e['binds']}, so it is n/a")
            if status in ("covered", "partial") and not (e["tests"] or e.get("pending")):
                self.errors.append(f"{rid}: {status} names no test")
            if status in ("uncovered", "gap") and e["tests"]:
                self.errors.append(f"{rid}: {status} but names tests")
            if status != "covered" and not e.get("note"):
                self.errors.append(f"{rid}: {status} needs a note saying why")
            for ref in e["tests"]:
                why = self.has_test(ref)
                if why:
                    self.errors.append(f"{rid}: {why}")
            for ref in e.get("pending", []):
                why = self.has_test(ref)
                self.notes.append(f"{rid}: pending {ref}: " + (why or "now present"))
            for ref in e.get("vectors", []):
                why = self.has_category(ref)
                if why:
                    self.errors.append(f"{rid}: {why}")
            for sdk in OTHER_SDKS:
                if e["index"].get(sdk) not in STATUSES:
                    self.errors.append(f"{rid}: no index status for {sdk}")
        if self.errors:
            return
        total = sum(expected.values())
        ours = tally(reqs, lambda e: e["status"])
        if sum(ours["all"].values()) != total:
            self.errors.append(f"our statuses sum to {sum(ours['all'].values())}, not {total}")
        for p, n in expected.items():
            if sum(ours[p].values()) != n:
                self.errors.append(f"{p}: our statuses sum to {sum(ours[p].values())}, not {n}")
        for sdk in OTHER_SDKS:
            theirs = tally(reqs, lambda e: e["index"][sdk])["all"]
            if theirs != data["published_totals"][sdk]:
                self.errors.append(f"{sdk}: the index statuses give {theirs}, the report publishes "
                                   f"{data['published_totals'][sdk]}")


def fmt_counts(c: dict) -> str:
    return " / ".join(str(c[s]) for s in STATUSES)


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(data: dict) -> str:
    reqs = data["requirements"]
    ours = tally(reqs, lambda e: e["status"])
    others = {sdk: tally(reqs, lambda e, sdk=sdk: e["index"][sdk]) for sdk in OTHER_SDKS}
    pending_ids = [e["id"] for e in reqs if e.get("pending")]
    commit = data["index"]["coverage_md_commit"]
    out = [HEADING, ""]
    out.append("<!-- Generated by tests/conformance/coverage_table.py from "
               "tests/conformance/requirement_coverage.json; edit the JSON, then run "
               "`python3 tests/conformance/coverage_table.py --write`. The meson test "
               "conformance_requirement_coverage fails when this section differs. -->")
    out += ["",
            "The protocol gives every MUST and MUST NOT of its spec files an id (cachekit-io/protocol, "
            "`conformance/requirements.json`) and reports, SDK by SDK, which ids the SDK's vendored vectors reach "
            f"(`conformance/coverage.md`; the ids, their vectors and the other SDKs' statuses here are as it gives "
            f"them at `{commit[:7]}`). This is libcachekit's row: for each id our status, the tests of this "
            "repository that reach it, and why where it is not covered. The requirements' text stays in the "
            "protocol repository; the notes are ours.",
            "",
            "The statuses are the report's, with our tests in the place of its vendored vectors:",
            "",
            "- covered: our tests run every vector the index maps to the id, from the unchanged upstream "
            "copies, and where the index records a gap (what no vector can show), a test of ours exercises it;",
            "- partial: a mapped vector is not in our copies, or part of the recorded gap is still open for us "
            "(the note says which);",
            "- uncovered: the id applies to us and the index maps vectors or reference-tool tests to it, but no "
            "test of ours reaches it;",
            "- gap: the id applies to us, the index records only a gap, and no test of ours reaches it;",
            "- n/a: the id binds the server, application code, or another SDK for a reason of its own language, "
            "release or API, or it belongs to the hosted HTTP backend (saas-api.md, the io preset), which "
            "libcachekit does not build.",
            "",
            "The other SDKs' counts are the report's, from their vendored vectors alone; ours count what our "
            "tests check. A test marked (pending) is being added with the newest vector categories; the check "
            f"accepts it before it exists. {len(pending_ids)} ids name one.",
            "",
            "| SDK | covered | partial | uncovered | gap | n/a |",
            "|---|---|---|---|---|---|"]
    for name, t in [("libcachekit", ours)] + [(sdk, others[sdk]) for sdk in OTHER_SDKS]:
        out.append(f"| {name} | " + " | ".join(str(t["all"][s]) for s in STATUSES) + " |")
    out += ["",
            "By spec file (covered / partial / uncovered / gap / n/a):",
            "",
            "| prefix | spec file | ids | libcachekit | " + " | ".join(OTHER_SDKS) + " |",
            "|---|---|---|---|" + "---|" * len(OTHER_SDKS)]
    for p, n in data["expected_ids"].items():
        out.append(f"| {p} | {SPEC_FILES[p]} | {n} | {fmt_counts(ours[p])} | "
                   + " | ".join(fmt_counts(others[sdk][p]) for sdk in OTHER_SDKS) + " |")
    for p in data["expected_ids"]:
        out += ["", f"### {p} ({SPEC_FILES[p]})", "",
                "| id | section | status | tests | note |", "|---|---|---|---|---|"]
        for e in reqs:
            if prefix_of(e["id"]) != p:
                continue
            refs = [f"`{r}`" for r in e["tests"]] + [f"`{r}` (pending)" for r in e.get("pending", [])]
            note = "; ".join(x for x in (f"the index binds {', '.join(e['sdks'])} only" if e.get("sdks") else "",
                                         e.get("note", "")) if x)
            out.append(f"| {e['id']} | {cell(e['section'])} | {e['status']} | {cell(', '.join(refs))} | {cell(note)} |")
    return "\n".join(out) + "\n"


def split_doc(text: str) -> tuple[str, str]:
    """(everything before the section, the section to the end)."""
    m = re.search(r"^" + re.escape(HEADING) + r"\s*$", text, flags=re.M)
    if not m:
        return text, ""
    return text[:m.start()], text[m.start():]


def default_vectors_dir(root: str) -> str | None:
    for cand in (os.environ.get("CACHEKIT_VECTORS_DIR"), os.environ.get("CACHEKIT_VECTORS_DIR_DEFAULT"),
                 os.path.join(root, "..", "shared", "vectors", "upstream")):
        if cand and os.path.isdir(cand):
            return cand
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="fail when the section or the data is wrong (default)")
    mode.add_argument("--write", action="store_true", help="regenerate the section of docs/conformance.md")
    ap.add_argument("--source-root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--vectors-dir", help="the upstream vector folder (default: the tests' own choice)")
    a = ap.parse_args()
    root = a.source_root
    with open(os.path.join(root, DATA), encoding="utf-8") as f:
        data = json.load(f)
    vectors_dir = a.vectors_dir or default_vectors_dir(root)
    checker = Checker(root, vectors_dir)
    checker.check(data)
    if vectors_dir is None:
        checker.notes.append("no vector folder: vector categories not checked")
    for n in checker.notes:
        print("note:", n)
    for err in checker.errors:
        print("ERROR:", err)
    if checker.errors:
        print(f"FAIL: {len(checker.errors)} problems in {DATA}")
        return 1
    section = render(data)
    doc_path = os.path.join(root, DOC)
    with open(doc_path, encoding="utf-8") as f:
        before, current = split_doc(f.read())
    if a.write:
        with open(doc_path, "w", encoding="utf-8") as f:
            f.write(before.rstrip("\n") + "\n\n" + section)
        print(f"wrote the section to {DOC}")
    elif current != section:
        diff = difflib.unified_diff(current.splitlines(), section.splitlines(), "docs/conformance.md", "generated",
                                    lineterm="", n=1)
        print("\n".join(list(diff)[:60]))
        print(f"FAIL: the {HEADING!r} section of {DOC} differs from the generated one: "
              "run python3 tests/conformance/coverage_table.py --write")
        return 1
    ours = tally(data["requirements"], lambda e: e["status"])["all"]
    print("requirement coverage: " + ", ".join(f"{ours[s]} {s}" for s in STATUSES)
          + f" ({sum(ours.values())} ids); pending references: {sum(len(e.get('pending', [])) for e in data['requirements'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
