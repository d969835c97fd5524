#!/usr/bin/env python3
"""Every fenced code block of docs/*.md is run, compiled, checked or
explicitly excused (meson suite `docs`). By language:

- c: a block with `int main(` is compiled and linked against the build tree
  (pkg-config, meson-uninstalled) and run; `<!-- c fragment -->` is compiled
  inside a function that declares the names fragments use (FRAGMENT_PRELUDE);
  `<!-- c excerpt: include/cachekit/cachekit.h -->` quotes the header: every
  cachekit_* name in it must exist there.
- python: run with the build's extension (wrappers/python/build_ext.py).
- sh, bash, shell, console: `bash -n`. Untagged blocks are text (output,
  diagrams; so are text, txt, output, mermaid, json, csv, tsv), but their
  `$ ` lines are commands and get `bash -n` too. An untagged block marked
  `<!-- run: cachekit -->` is a session: each `$ ` command runs with the
  build's tools/ on PATH and its output must be the lines that follow it.
- go: blocks of docs/go.md marked `<!-- go example: ExampleX -->` are the
  bodies of Example functions (wrappers/go/docs_examples_test.go compares
  them, suite go). rust: docs/rust.md is the crate's doc page, so its blocks
  are doctests; doctests skip rust,ignore blocks, which count only inside
  the #[cached] section, whose blocks
  wrappers/rust/libcachekit/tests/docs_examples.rs builds (suite rust).
- anything else, or a block not to run: `<!-- not run: REASON -->` above it.

Programs run in a scratch directory with the L2 there (CACHEKIT_FILE_CACHE_DIR)
and no Redis URL in the environment: no example talks to a server.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from doc_blocks import Block, all_blocks  # noqa: E402

SHELL = {"sh", "bash", "shell", "console"}
TEXT = {"", "text", "txt", "output", "mermaid", "json", "csv", "tsv"}  # output, diagrams, data
NOT_RUN = re.compile(r"^not run:\s*(\S.*)$")

# The names the C fragments of docs/cache.md use, declared so they compile.
FRAGMENT_PRELUDE = """#include <stddef.h>
#include <cachekit/cachekit.h>
int fragment(cachekit_cache *cache, const char *ns, const char *key, size_t len,
             const void *value, size_t value_len);
int fragment(cachekit_cache *cache, const char *ns, const char *key, size_t len,
             const void *value, size_t value_len) {
    cachekit_buf out = CACHEKIT_BUF_INIT;
    int rc = 0;
#line 1 "%s"
%s
    cachekit_buf_dispose(&out);
    return rc;
}
"""


class Runner:
    def __init__(self, a: argparse.Namespace, work: pathlib.Path) -> None:
        self.src = pathlib.Path(a.source_root).resolve()
        self.build = pathlib.Path(a.build_dir).resolve()
        self.cc = shlex.split(a.cc)  # e.g. "ccache cc"
        self.work = work
        self.header = (self.src / "include" / "cachekit" / "cachekit.h").read_text()
        self.env = {k: v for k, v in os.environ.items() if k not in ("CACHEKIT_REDIS_URL", "REDIS_URL")}
        self.env["CACHEKIT_FILE_CACHE_DIR"] = str(work / "l2")
        self.env["LD_LIBRARY_PATH"] = os.pathsep.join(
            [str(self.build / "src")] + ([self.env["LD_LIBRARY_PATH"]] if self.env.get("LD_LIBRARY_PATH") else []))
        self.env["PKG_CONFIG_PATH"] = str(self.build / "meson-uninstalled")
        self.python_ext: pathlib.Path | None = None
        self.counts: dict[str, int] = {}
        self.py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def run(self, cmd: list[str], what: str, **kw) -> None:
        r = subprocess.run(cmd, env=self.env, cwd=self.work, capture_output=True, text=True, timeout=120, **kw)
        if r.returncode != 0:
            raise AssertionError(f"{what} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")

    def pkg_config(self) -> list[str]:
        r = subprocess.run(["pkg-config", "--cflags", "--libs", "cachekit"], env=self.env,
                           capture_output=True, text=True, check=True)
        return r.stdout.split()

    # --- by language -------------------------------------------------------
    def c(self, b: Block) -> None:
        name = f"{b.path.stem}_{b.line}"
        if b.marker.startswith("c excerpt:"):
            missing = sorted({n for n in re.findall(r"\b(cachekit_\w+|CACHEKIT_\w+)", b.code)
                              if not re.search(r"\b" + re.escape(n) + r"\b", self.header)})
            if missing:
                raise AssertionError(f"names not in cachekit.h: {', '.join(missing)}")
            self.count("c excerpts checked against the header")
            return
        if b.marker == "c fragment":
            f = self.work / f"{name}.c"
            f.write_text(FRAGMENT_PRELUDE % (b.where(), b.code))
            self.run([*self.cc, "-std=c99", "-Wall", "-Werror", "-c", str(f), "-o", str(f.with_suffix(".o"))]
                     + self.pkg_config(), "compiling the fragment")
            self.count("c fragments compiled")
            return
        if "int main(" not in b.code:
            raise AssertionError("a C block is a program (int main), `<!-- c fragment -->`, "
                                 "`<!-- c excerpt: include/cachekit/cachekit.h -->` or `<!-- not run: reason -->`")
        f = self.work / f"{name}.c"
        f.write_text(f'#line 1 "{b.where()}"\n' + b.code)
        exe = self.work / name
        self.run([*self.cc, "-std=c99", "-Wall", "-Werror", str(f), "-o", str(exe)] + self.pkg_config(),
                 "compiling the program")
        self.run([str(exe)], "running the program")
        self.count("c programs compiled and run")

    def python(self, b: Block) -> None:
        if self.python_ext is None:
            self.python_ext = self.work / "python-ext"
            self.run([self.py, str(self.src / "wrappers" / "python" / "build_ext.py"), "--build-dir",
                      str(self.build), "--out", str(self.python_ext), "--quiet"], "building the Python extension")
            self.env["PYTHONPATH"] = os.pathsep.join([str(self.python_ext), str(self.src / "wrappers" / "python")])
            self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        f = self.work / f"{b.path.stem}_{b.line}.py"
        f.write_text(b.code)
        self.run([self.py, str(f)], "running the Python block")
        self.count("python blocks run")

    def shell(self, code: str) -> None:
        self.run(["bash", "-n"], "bash -n", input=code)

    def session(self, b: Block) -> None:
        steps: list[tuple[str, list[str]]] = []
        for ln in b.code.splitlines():
            if ln.startswith("$ "):
                steps.append((ln[2:], []))
            elif steps:
                steps[-1][1].append(ln)
            elif ln.strip():
                raise AssertionError("a session starts with a `$ ` command")
        env = dict(self.env, PATH=os.pathsep.join([str(self.build / "tools"), self.env.get("PATH", "")]))
        for cmd, want in steps:
            r = subprocess.run(["bash", "-c", cmd], env=env, cwd=self.work, capture_output=True, text=True,
                               timeout=60)
            got = r.stdout.rstrip("\n").splitlines()
            want = "\n".join(want).rstrip("\n").splitlines()
            if r.returncode != 0 or got != want:
                raise AssertionError(f"`{cmd}` (exit {r.returncode}) printed:\n" + "\n".join(got) + r.stderr
                                     + "\nthe page shows:\n" + "\n".join(want))

    @staticmethod
    def rust_covered(b: Block) -> bool:
        """Doctests compile every block but `ignore` ones; docs_examples.rs
        covers the `ignore` blocks of the #[cached] section only."""
        if "ignore" not in b.info.split(","):
            return True
        lines = b.path.read_text(encoding="utf-8").splitlines()
        section = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("## The #[cached] attribute")), None)
        following = [i + 1 for i, ln in enumerate(lines) if ln.startswith("## ") and section and i + 1 > section]
        return section is not None and b.line > section and (not following or b.line < following[0])

    def block(self, b: Block) -> None:
        m = NOT_RUN.match(b.marker)
        if m:
            self.count("blocks marked not run (with a reason)")
            return
        if b.lang == "c":
            self.c(b)
        elif b.lang == "python":
            self.python(b)
        elif b.lang in SHELL:
            self.shell(b.code)
            self.count("shell blocks syntax-checked")
        elif b.lang == "" and b.marker == "run: cachekit":
            self.session(b)
            self.count("cachekit sessions run, output compared")
        elif b.lang in TEXT:
            cmds = [ln[2:] for ln in b.code.splitlines() if ln.startswith("$ ")]
            if cmds:
                self.shell("\n".join(cmds) + "\n")
                self.count("untagged blocks' $ commands syntax-checked")
            else:
                self.count("untagged blocks (text)")
        elif b.lang == "go" and b.path.name == "go.md" and b.marker.startswith("go example:"):
            self.count("go blocks run by suite go (Example functions)")
        elif b.lang == "rust" and b.path.name == "rust.md" and self.rust_covered(b):
            self.count("rust blocks built by suite rust (doctests, docs_examples.rs)")
        else:
            raise AssertionError(f"no runner for a `{b.info}` block here: run it, or mark it "
                                 "`<!-- not run: reason -->`")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--only", help="run only the blocks of this docs/*.md file name")
    a = ap.parse_args()
    if not shutil.which("pkg-config"):
        print("FAILED: pkg-config is needed to compile the C examples")
        return 1
    failures = []
    with tempfile.TemporaryDirectory(prefix="cachekit-docs-") as tmp:
        r = Runner(a, pathlib.Path(tmp))
        blocks = all_blocks(r.src / "docs")
        for b in blocks:
            if a.only and b.path.name != a.only:
                continue
            try:
                r.block(b)
            except (AssertionError, subprocess.TimeoutExpired) as e:
                failures.append(f"{b.where()} ({b.info or 'untagged'}): {e}")
        for what, n in sorted(r.counts.items()):
            print(f"{n:4d} {what}")
    for f in failures:
        print("FAILED " + f)
    print(f"docs examples: {len(blocks)} blocks, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
