"""`cache` and its presets at the point of use: inspect.signature lists the keywords
the decorator accepts, the typed overloads (what IDEs and type checkers read) spell
the same ones, and the docstrings help() shows name each of them, so none of the
three can drift from the others or from the checks in _config._validate."""
from __future__ import annotations

import ast
import inspect
import pathlib
import pydoc

import pytest

from cachekit import cache
from cachekit import _decorator
from cachekit._config import _ALLOWED, _PRESETS

FULL = ["minimal", "production", "secure", "dev", "test"]
LOCAL = ["ttl", "max_entries", "namespace", "key"]


def preset(name: str):
    return cache if name == "cache" else getattr(cache, name)


def keywords(obj) -> dict[str, inspect.Parameter]:
    params = inspect.signature(obj).parameters
    assert list(params)[0] == "fn"
    return {n: p for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}


def doc_of(obj) -> str:
    """What help() shows of a decorator's own: its class's and its __call__'s docstrings."""
    return (inspect.getdoc(type(obj)) or "") + "\n" + (inspect.getdoc(type(obj).__call__) or "")


def test_production_signature_lists_every_accepted_keyword():
    kw = keywords(cache.production)
    assert set(kw) == _ALLOWED  # what _validate accepts, no more, no less
    assert kw["ttl"].default == 600
    assert kw["namespace"].default is None
    assert str(kw["ttl"].annotation) == "float | None"
    assert "ttl: float | None = 600" in str(inspect.signature(cache.production))


@pytest.mark.parametrize("name", ["cache"] + FULL)
def test_signature_defaults_are_the_presets(name):
    kw = keywords(preset(name))
    assert set(kw) == _ALLOWED
    for option, value in _PRESETS.get(name, {}).items():
        assert kw[option].default == value, option


def test_local_signature_is_its_four_keywords():
    kw = keywords(cache.local)
    assert list(kw) == LOCAL
    assert (kw["ttl"].default, kw["max_entries"].default) == (300, 256)
    with pytest.raises(TypeError, match="cache.local takes only"):
        cache.local(backend=None)(lambda x: x)


def test_unknown_keyword_is_still_the_decorators_type_error():
    with pytest.raises(TypeError, match="unexpected cache parameter"):
        cache.production(tll=60)


@pytest.mark.parametrize("name", ["cache", "local"] + FULL)
def test_docstrings_name_each_keyword_and_show_an_example(name):
    obj = preset(name)
    doc = doc_of(obj)
    lines = [line.strip() for line in doc.splitlines()]
    for option in keywords(obj):
        assert any(line.startswith(option + ":") for line in lines), f"{name}'s docstring lacks {option}"
    assert "@cache" in (inspect.getdoc(type(obj)) or ""), f"{name}'s docstring has no example"
    label = "cache" if name == "cache" else f"cache.{name}"
    assert (inspect.getdoc(type(obj)) or "").startswith(label + ":")


@pytest.mark.parametrize("name", ["cache", "secure", "local"])
def test_help_shows_the_docstrings_and_keywords(name):
    obj = preset(name)
    text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
    assert (inspect.getdoc(type(obj)) or "").splitlines()[0] in text
    assert "ttl: seconds an entry lives" in text
    assert "namespace: str | None = None" in text


def overload_keywords(cls: str) -> list[tuple[str, str]]:
    """The keyword-only parameters of cls's typed __call__ overload, as the source spells them."""
    tree = ast.parse(pathlib.Path(_decorator.__file__).read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    found = [f.args.kwonlyargs for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__call__"
             and any(ast.unparse(d) == "overload" for d in f.decorator_list) and f.args.kwonlyargs]
    assert len(found) == 1
    return [(a.arg, ast.unparse(a.annotation)) for a in found[0]]


@pytest.mark.parametrize("cls,obj", [("_Decorator", cache.production), ("_Local", cache.local)])
def test_typed_overload_spells_the_signature(cls, obj):
    runtime = [(n, str(p.annotation)) for n, p in keywords(obj).items()]
    assert overload_keywords(cls) == runtime


def test_every_preset_has_its_class():
    for name in FULL + ["local"]:
        assert type(preset(name)) is not type(cache)
        assert type(preset(name))._preset == name
    assert inspect.getdoc(type(cache.io))


async def coro(x):
    return x


def sync(x):
    return x


DECORATIONS = {"l2": lambda: cache(backend="memory://")(sync), "l2-async": lambda: cache(backend="memory://")(coro),
               "object": lambda: cache(backend=None)(sync), "local": lambda: cache.local(sync),
               "local-async": lambda: cache.local(coro), "zero-config": lambda: cache(sync)}


@pytest.mark.parametrize("kind", list(DECORATIONS))
def test_decorated_function_methods_have_one_line_docstrings(kind):
    fn = DECORATIONS[kind]()
    for method in ("invalidate_cache", "ainvalidate_cache", "cache_info", "cache_clear"):
        doc = inspect.getdoc(getattr(fn, method))
        assert doc and len(doc.splitlines()) == 1, method
