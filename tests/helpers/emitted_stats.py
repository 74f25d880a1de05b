"""The stats keys the crawl layer sets, read from its source (for the stats reference's test).

Every call that sets a stat is found by its name and its first argument:
Scrapy's ``inc_value``, ``set_value``, ``max_value`` (full keys), and the
reporter's helpers, which add a prefix (:data:`HELPERS`). The key, a string
or an f-string, becomes a template: module constants (``STATS_PREFIX``) are
put in, a loop variable over a literal tuple gives one key per value, any
other expression is ``{}`` (any text). The helpers' own bodies, which pass
on their caller's key, are not read (:data:`PASS_ON`). ``"a" if x else "b"`` gives both keys, and a
variable holding a key is followed to the string assigned to it. A drop reason declares the
stats it counts (the reporter counts whatever it names): a tuple of keys assigned to
``stats`` or to a name ending in ``_STATS``, or a dict of such tuples.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PREFIX = "robotrules/"
BUILTIN = "robotstxt/"
"""Scrapy's own middleware's keys, which the package keeps with their meaning: set whole."""
DIRECT = {"inc_value", "set_value", "max_value", "min_value"}
"""Scrapy's StatsCollector methods: the key is whole."""
HELPERS = {
    "count": PREFIX,
    "inc": PREFIX,
    "set": PREFIX,
    "store_event": f"{PREFIX}store/",
    "_event": f"{PREFIX}store/",
    "_inc": f"{PREFIX}usage/tdmrep/",
}
"""The package's own helpers (``Reporter.count`` ...), by name: the prefix each adds."""
RECEIVERS = {"reporter", "self", "manager", "inc", "_event", "_inc"}
"""Who a helper is called on (``self.reporter.inc``), so that ``str.count`` is no stat."""
PASS_ON = {*HELPERS, "flush"}
"""Functions that pass on a key their caller chose (``f"{STATS_PREFIX}{key}"``): not read."""


def _constants(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            found[node.targets[0].id] = node.value.value
    return found


def _loop_values(function: ast.AST) -> dict[str, list[str]]:
    """``for kind, _ in (("a", x), ("b", y))``: ``{"kind": ["a", "b"]}``."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(function):
        if not isinstance(node, ast.For) or not isinstance(node.iter, (ast.Tuple, ast.List)):
            continue
        target = node.target.elts[0] if isinstance(node.target, ast.Tuple) else node.target
        values = []
        for item in node.iter.elts:
            first = item.elts[0] if isinstance(item, ast.Tuple) else item
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                values.append(first.value)
        if isinstance(target, ast.Name) and values:
            found[target.id] = values
    return found


def _assigned(function: ast.AST) -> dict[str, ast.expr]:
    return {
        node.targets[0].id: node.value
        for node in ast.walk(function)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    }


def _templates(
    expr: ast.expr,
    constants: dict[str, str],
    loops: dict[str, list[str]],
    names: dict[str, ast.expr],
) -> list[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, ast.IfExp):
        body = _templates(expr.body, constants, loops, names)
        return [*body, *_templates(expr.orelse, constants, loops, names)]
    if isinstance(expr, ast.Name) and expr.id in names:
        return _templates(names[expr.id], constants, loops, names)
    if isinstance(expr, ast.JoinedStr):
        keys = [""]
        for part in expr.values:
            if isinstance(part, ast.Constant):
                keys = [key + str(part.value) for key in keys]
                continue
            assert isinstance(part, ast.FormattedValue)
            value = part.value
            if isinstance(value, ast.Name) and value.id in constants:
                choices = [constants[value.id]]
            elif isinstance(value, ast.Name) and value.id in loops:
                choices = loops[value.id]
            else:
                choices = ["{}"]
            keys = [key + choice for key in keys for choice in choices]
        return keys
    return []


def _receiver(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        inner = func.value
        if isinstance(inner, ast.Attribute):
            return inner.attr
        if isinstance(inner, ast.Name):
            return inner.id
    return None


def _calls(tree: ast.Module) -> Iterator[tuple[ast.AST, ast.Call]]:
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
            function.name not in PASS_ON
        ):
            for node in ast.walk(function):
                if isinstance(node, ast.Call) and node.args:
                    yield function, node


def _declared(tree: ast.Module) -> Iterator[str]:
    """The keys a drop reason declares it counts (``stats = ("unreachable",)``), prefixed."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if name != "stats" and not name.endswith("_STATS"):
            continue
        tuples = value.values if isinstance(value, ast.Dict) else [value]
        for keys in tuples:
            if isinstance(keys, ast.Tuple):
                for key in keys.elts:
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        yield PREFIX + key.value


def emitted(paths: list[Path]) -> set[str]:
    """Every stats key template the modules at ``paths`` set: ``robotrules/page/{}`` ..."""
    keys: set[str] = set()
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        keys.update(_declared(tree))
        constants = _constants(tree)
        for function, call in _calls(tree):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            local_inc = isinstance(func, ast.Name) and func.id == "inc"
            if name in DIRECT:
                prefix = ""
            elif name in HELPERS and (_receiver(func) in RECEIVERS or local_inc):
                prefix = HELPERS[name]
            else:
                continue
            found = _templates(call.args[0], constants, _loop_values(function), _assigned(function))
            for key in found:
                full = key if key.startswith((PREFIX, BUILTIN, "{}")) else prefix + key
                if full.startswith((PREFIX, BUILTIN, "{}")):
                    keys.add(full)
    return keys


def matches(template: str, key: str) -> bool:
    """Whether a documented ``key`` (``<status>`` for a part) fits the code's ``template``."""
    pattern = ".*".join(re.escape(piece) for piece in template.split("{}"))
    return re.fullmatch(pattern, key) is not None
