#!/usr/bin/env python3
"""docs/configuration.md and docs/operations.md against the code (suite docs).

Each reference table in those pages follows a marker `<!-- reference: KEY -->`;
its rows' first cells (below the header) name things in backticks. For every KEY the names the
table documents must equal the names the code has (read here from the
sources, never from a hand-kept list), so an option added without its row,
or a row whose option is gone, fails with both lists:

  c:STRUCT          fields of the C struct in include/cachekit/cachekit.h
  env               environment variables the library, tool and wrappers read
  url:redis         query parameters of redis:// and unix:// (src/l2/redis/redis_url.cpp)
  url:redis-cluster query parameters of redis-cluster:// (src/l2/cluster/cluster_url.cpp)
  url:redis-sentinel  Sentinel's own query parameters (src/l2/sentinel/sentinel_url.cpp;
                    the ssl_* ones are url:redis's)
  python:cache      the keywords the Python decorator accepts (_config._ALLOWED)
  rust:CacheBuilder the builder's pub fns (wrappers/rust/libcachekit/src/builder.rs)
  go:Options        the fields of the Go Options struct (wrappers/go/options.go)
  metrics           metric families of cachekit_cache_metrics_text
"""
from __future__ import annotations

import argparse
import ast
import pathlib
import re
import shutil
import sys
import tempfile

MARKER = re.compile(r"^<!--\s*reference:\s*(\S+)\s*-->\s*$")
C_STRUCTS = ("cachekit_cache_options", "cachekit_backend_options", "cachekit_l1_options")
ENV_NAME = re.compile(r"""["'](CACHEKIT_[A-Z0-9_]+|REDIS_URL|XDG_CACHE_HOME|TMPDIR|DOCS_RS)["']""")


def documented(pages: list[pathlib.Path]) -> dict[str, tuple[str, set[str]]]:
    """KEY -> (page:line, names in the first cells of the table after the marker)."""
    out: dict[str, tuple[str, set[str]]] = {}
    for page in pages:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = MARKER.match(line)
            if not m:
                continue
            names: set[str] = set()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("|"):
                j += 1
            j += 2  # the header row and the separator
            while j < len(lines) and lines[j].startswith("|"):
                first = lines[j].split("|")[1]
                names.update(re.sub(r"\(.*", "", n).lstrip(".") for n in re.findall(r"`([^`]+)`", first))
                j += 1
            if m.group(1) in out:
                raise SystemExit(f"{page.name}:{i + 1}: a second table for {m.group(1)}")
            out[m.group(1)] = (f"{page.name}:{i + 1}", names)
    return out


def c_fields(header: str, struct: str) -> set[str]:
    m = re.search(r"typedef struct " + struct + r" \{(.*?)\} " + struct + ";", header, re.S)
    if not m:
        raise SystemExit(f"struct {struct} not found in cachekit.h")
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return {f for f in re.findall(r"\**(\w+)\s*;", body)} - {"struct_size"}


def env_vars(src: pathlib.Path) -> set[str]:
    files = [*src.glob("src/**/*.cpp"), *src.glob("src/**/*.hpp"), *src.glob("tools/*.cpp"),
             *src.glob("wrappers/python/cachekit/*.py"), *src.glob("wrappers/rust/*/build.rs"),
             *src.glob("wrappers/rust/*/src/**/*.rs"),
             *(p for p in src.glob("wrappers/go/*.go") if not p.name.endswith("_test.go"))]
    return {n for f in files for n in ENV_NAME.findall(f.read_text(encoding="utf-8"))}


def url_params(path: pathlib.Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    fn = re.search(r"void parse_query\(.*?\n\}\n", text, re.S)
    if not fn:
        raise SystemExit(f"parse_query not found in {path}")
    return set(re.findall(r'name == "([a-z0-9_]+)"', fn.group(0)))


def python_keywords(path: pathlib.Path) -> set[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_ALLOWED" for t in node.targets):
            return set(ast.literal_eval(node.value.args[0]))
    raise SystemExit(f"_ALLOWED not found in {path}")


def rust_builder(path: pathlib.Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    impl = re.search(r"\nimpl CacheBuilder \{(.*?)\n\}\n", text, re.S)
    if not impl:
        raise SystemExit(f"impl CacheBuilder not found in {path}")
    return set(re.findall(r"\n    pub fn (\w+)", impl.group(1)))


def go_options(path: pathlib.Path) -> set[str]:
    m = re.search(r"\ntype Options struct \{(.*?)\n\}\n", path.read_text(encoding="utf-8"), re.S)
    if not m:
        raise SystemExit(f"type Options struct not found in {path}")
    return set(re.findall(r"(?m)^\t([A-Z]\w*)\s", m.group(1)))


def metric_families(src: pathlib.Path) -> set[str]:
    out: set[str] = set()
    for f in ("src/metrics/prometheus.cpp", "src/cache/coherence.cpp"):
        text = (src / f).read_text(encoding="utf-8")
        out.update(re.findall(r'(?:header|counter)\(\s*"([a-z0-9_]+)"', text))
        out.update(re.findall(r"# TYPE ([a-z0-9_]+) ", text))
    # The cluster backend appends its own families (Backend::metrics_text).
    cluster = (src / "src/l2/cluster/redis_cluster_backend.cpp").read_text(encoding="utf-8")
    out.update(re.findall(r'"(cachekit_redis_cluster_[a-z0-9_]+?)(?:\{|\s|")', cluster))
    # And so does the Sentinel backend.
    sentinel = (src / "src/l2/sentinel/redis_sentinel_backend.cpp").read_text(encoding="utf-8")
    out.update(re.findall(r'"(cachekit_redis_sentinel_[a-z0-9_]+?)(?:\{|\s|")', sentinel))
    out.discard("name")
    return out


def code_names(src: pathlib.Path) -> dict[str, set[str]]:
    header = (src / "include" / "cachekit" / "cachekit.h").read_text(encoding="utf-8")
    code: dict[str, set[str]] = {f"c:{s}": c_fields(header, s) for s in C_STRUCTS}
    code["env"] = env_vars(src)
    code["url:redis"] = url_params(src / "src/l2/redis/redis_url.cpp")
    code["url:redis-cluster"] = url_params(src / "src/l2/cluster/cluster_url.cpp")
    code["url:redis-sentinel"] = url_params(src / "src/l2/sentinel/sentinel_url.cpp")
    code["python:cache"] = python_keywords(src / "wrappers/python/cachekit/_config.py")
    code["rust:CacheBuilder"] = rust_builder(src / "wrappers/rust/libcachekit/src/builder.rs")
    code["go:Options"] = go_options(src / "wrappers/go/options.go")
    code["metrics"] = metric_families(src)
    return code


def compare(code: dict[str, set[str]], docs_dir: pathlib.Path, quiet: bool = False) -> list[str]:
    """The failures, one line each (and the passes printed unless quiet)."""
    docs = documented([docs_dir / "configuration.md", docs_dir / "operations.md"])
    failures: list[str] = []
    for key, names in sorted(code.items()):
        if not names:
            failures.append(f"{key}: found nothing in the code (the parser is out of date)")
        elif key not in docs:
            failures.append(f"{key}: no `<!-- reference: {key} -->` table in docs/configuration.md or operations.md")
        else:
            where, doc = docs[key]
            missing, gone = sorted(names - doc), sorted(doc - names)
            if missing or gone:
                failures.append(f"{key} ({where}):"
                                + (f" undocumented: {', '.join(missing)};" if missing else "")
                                + (f" documented but not in the code: {', '.join(gone)}" if gone else ""))
            elif not quiet:
                print(f"ok {key}: {len(names)} names documented")
    failures += [f"{key} ({docs[key][0]}): a reference table this test does not know"
                 for key in sorted(set(docs) - set(code))]
    return failures


def self_test(code: dict[str, set[str]], docs_dir: pathlib.Path) -> list[str]:
    """The check must bite: a copy of the pages with one row dropped and one
    invented row added has to fail, naming both."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp)
        conf = (docs_dir / "configuration.md").read_text(encoding="utf-8")
        row = re.search(r"(?m)^\| `lock_wait_ms` .*\n", conf)
        if not row:
            return ["self-test: the lock_wait_ms row is not in configuration.md"]
        conf = conf.replace(row.group(0), "| `no_such_option` | 0 | invented |\n")
        (out / "configuration.md").write_text(conf, encoding="utf-8")
        shutil.copy(docs_dir / "operations.md", out / "operations.md")
        got = compare(code, out, quiet=True)
    if not any("lock_wait_ms" in f and "no_such_option" in f for f in got):
        return ["self-test: a dropped row and an invented one went unnoticed: " + "; ".join(got)]
    return []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    src = pathlib.Path(ap.parse_args().source_root)
    code = code_names(src)
    failures = compare(code, src / "docs") + self_test(code, src / "docs")
    for f in failures:
        print("FAILED " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
