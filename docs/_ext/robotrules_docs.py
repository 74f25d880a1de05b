"""The settings reference, made from the code's own table of settings.

``.. robotrules-setting:: ROBOTRULES_NAME`` writes one entry: a heading, a
``:setting:`` target, and the type, default and range of that row of
``scrapy_robotrules.crawl.config.table.TABLE``, followed by the meaning
given as the directive's content. Nothing about a value is typed by hand,
so the reference cannot drift from the code: a default or a range changed
in the table changes the page.

The build warns (an error under ``-W``) when a setting of the table has no
entry, when an entry names a setting the table does not hold, and when a
``:setting:`` reference names no documented setting.
``.. robotrules-spider-attributes::`` writes the table of spider attributes.

The behaviour contract (``spec.md``): each numbered section gets the label
``spec-N``, and "SPEC N" in the docstrings autodoc shows becomes a link to
it, so a docstring that cites a section the contract lacks fails the build.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

from scrapy_robotrules.crawl.config.table import ATTRIBUTES, TABLE, Setting

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

logger = logging.getLogger(__name__)

SPEC_PAGE = "spec"
SPEC_SECTION = re.compile(r"(\d+)\. ")
"""A numbered section of the behaviour contract: ``## 5. Precedence modes``."""
SPEC_CITED = re.compile(r"(?<![`\w<])SPEC (\d+)\b")
"""A citation in a docstring: ``SPEC 5``."""

DURATIONS = {86_400: "a day", 7 * 86_400: "a week", 365 * 86_400: "a year"}
"""Durations (seconds) shown with their name beside the number."""


def binary(value: float) -> str | None:
    """``512 MiB`` for a power of two of a MiB or more, else ``None``."""
    whole = int(value)
    if whole != value or whole < 2**20 or whole & (whole - 1):
        return None
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20)):
        if whole >= 1 << shift:
            return f"{whole >> shift:,} {unit}"
    return None


def number(value: float, *, seconds: bool = False) -> str:
    """``10,000,000``; ``1,099,511,627,776 (1 TiB)``; ``604,800 (a week)``."""
    whole = float(value).is_integer()
    shown = f"{int(value):,}" if whole else f"{value:g}"
    named = DURATIONS.get(int(value)) if seconds and whole else binary(value)
    return f"{shown} ({named})" if named else shown


def default_text(row: Setting) -> str:
    value = row.default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    named = None if isinstance(value, bool) or not isinstance(value, int) else binary(value)
    return f"``{value!r}``" + (f" ({named})" if named else "")


def range_text(row: Setting) -> str | None:
    if row.maximum is None:
        return None
    seconds = row.kind.startswith("float")
    low = number(row.minimum or 0, seconds=seconds)
    high = number(row.maximum, seconds=seconds)
    return f"more than {low}, at most {high}" if row.above else f"{low} to {high}"


def kind_text(row: Setting) -> str:
    if row.choices:
        listed = [f"``{choice!r}``" for choice in row.choices]
        return "one of " + ", ".join(listed[:-1]) + " or " + listed[-1]
    return row.kind or type(row.default).__name__


def entry(row: Setting, meaning: StringList) -> StringList:
    """The reStructuredText of one setting's entry."""
    lines = [
        f".. setting:: {row.name}",
        "",
        row.name,
        "~" * len(row.name),
        "",
        f":Type: {kind_text(row)}",
        f":Default: {default_text(row)}",
    ]
    shown_range = range_text(row)
    if shown_range is not None:
        lines.append(f":Range: {shown_range}")
    lines.append("")
    text = StringList(lines, source=f"<setting table: {row.name}>")
    text.extend(meaning)
    return text


def documented(env: BuildEnvironment) -> dict[str, str]:
    """Setting name to the document that holds its entry."""
    found: dict[str, str] = env.domaindata.setdefault("robotrules", {}).setdefault("settings", {})
    return found


class SettingDirective(SphinxDirective):
    """``.. robotrules-setting:: NAME``: one setting's entry; the content is its meaning."""

    required_arguments = 1
    has_content = True

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        row = TABLE.get(name)
        if row is None:
            logger.warning(
                "%s is not in the settings table (setting_table.TABLE)",
                name,
                location=self.get_location(),
            )
            return []
        if not self.content:
            logger.warning("%s: the entry says nothing of what it means", name, location=self)
        seen = documented(self.env)
        if name in seen and seen[name] != self.env.docname:
            logger.warning("%s is documented twice", name, location=self.get_location())
        seen[name] = self.env.docname
        holder = nodes.Element()
        nested_parse_with_titles(self.state, entry(row, self.content), holder)
        return list(holder.children)


class SpiderAttributesDirective(SphinxDirective):
    """``.. robotrules-spider-attributes::``: each spider attribute and the setting it overrides."""

    def run(self) -> list[nodes.Node]:
        lines = [".. list-table::", "   :header-rows: 1", "", "   * - Spider attribute"]
        lines.append("     - Overrides")
        for attribute, setting in ATTRIBUTES.items():
            lines += [f"   * - ``{attribute}``", f"     - :setting:`{setting}`"]
        holder = nodes.Element()
        self.state.nested_parse(StringList(lines, source="<setting table>"), 0, holder)
        return list(holder.children)


def check_every_setting_documented(app: Sphinx, env: BuildEnvironment) -> None:
    missing = sorted(set(TABLE) - set(documented(env)))
    for name in missing:
        logger.warning(
            "%s is read by the package (setting_table.TABLE) but has no "
            ".. robotrules-setting:: entry in the documentation",
            name,
        )


def purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    seen = documented(env)
    for name in [name for name, where in seen.items() if where == docname]:
        del seen[name]


def unknown_setting(app: Sphinx, env: BuildEnvironment, node: Any, contnode: Any) -> None:
    if node.get("reftype") == "setting":
        logger.warning("unknown setting %s", node.get("reftarget"), location=node)


def label_spec_sections(app: Sphinx, doctree: nodes.document) -> None:
    """``spec-5`` for the contract's section "5. Precedence modes"."""
    env = app.env
    if env.docname != SPEC_PAGE:
        return
    std = env.domaindata["std"]
    for section in doctree.findall(nodes.section):
        title = section.next_node(nodes.title)
        numbered = SPEC_SECTION.match(title.astext()) if title is not None else None
        if numbered is None or title is None:
            continue
        label = f"spec-{numbered.group(1)}"
        std["labels"][label] = (env.docname, section["ids"][0], title.astext())
        std["anonlabels"][label] = (env.docname, section["ids"][0])


def link_spec_citations(  # noqa: PLR0917 (autodoc's event passes six)
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    """ "SPEC 5" in a docstring: a link to section 5 of the contract."""
    lines[:] = [SPEC_CITED.sub(r":ref:`SPEC \1 <spec-\1>`", line) for line in lines]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_crossref_type("setting", "setting", indextemplate="pair: %s; setting")
    app.add_directive("robotrules-setting", SettingDirective)
    app.add_directive("robotrules-spider-attributes", SpiderAttributesDirective)
    app.connect("env-check-consistency", check_every_setting_documented)
    app.connect("env-purge-doc", purge)
    app.connect("missing-reference", unknown_setting)
    app.connect("doctree-read", label_spec_sections)
    app.connect("autodoc-process-docstring", link_spec_citations)
    return {"version": "1", "parallel_read_safe": False, "parallel_write_safe": True}
