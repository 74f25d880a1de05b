"""Many wildcard rules found by the literal each needs, in one pass over the path.

Trying every rule costs rules times path length: a file of tens of
thousands of rules ``Disallow: /*<8 letters>`` would cost that many matches
per check, each reading the path. Every rule with a wildcard needs its longest literal
piece (its needle) somewhere in the path (SPEC 4). An Aho-Corasick
automaton finds all needles present in one pass; only their rules are
tried, in the rank order their precedence strategy gives (SPEC 5).

A path made of the file's own needles finds every rule: each is then
ranked and its prefix tested from flat arrays, and most (one piece after
a prefix, maybe ending the path) are decided from where the automaton saw
their needle last. Only the others are read again from the file, in rank
order, until one matches.

Periodic needles (``a``, ``aa``... ``a`` * 64; ``abab``, ``ababa``...) are
kept out of the automaton: nested in one another, they are reported many
times at every character of a run, and no arrangement of pieces reads a path
of runs broken every few characters once. They are found from the path's
periodic runs instead (:mod:`.runs`), a scan in C per period whatever their
number.

After a flood of reports (needles nested in one another without a
period, all the windows of one random text, say: reading on costs up to
one report per needle length at each character), the rules are walked in
rank order instead (:meth:`Literals._walk`), each decided from what the
automaton found so far, or searched for in the path's unread end as long
as that costs less than reading it: the best rule is usually among the
first. SPEC 5 gives the order.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable

from ahocorasick_rs import AhoCorasick, Implementation

from scrapy_robotrules.engine.robots.check_work import CheckWork
from scrapy_robotrules.engine.robots.hostile.automata import AUTOMATON_BYTES_PER_CHAR, automata
from scrapy_robotrules.engine.robots.hostile.pieces import Found, read, split
from scrapy_robotrules.engine.robots.hostile.runs import (
    Runs,
    finder,
    periodic_needles,
    unary_needles,
)
from scrapy_robotrules.engine.robots.hostile.windows import Windows, by_text
from scrapy_robotrules.engine.robots.patterns import Pattern
from scrapy_robotrules.engine.robots.precedence import PrecedenceStrategy
from scrapy_robotrules.engine.robots.prefixes import ROOT, SLASH, prefix_ids
from scrapy_robotrules.engine.robots.star_columns import ENDS, FIND

__all__ = ["AUTOMATON_MIN", "FLOOD_REPORTS", "ROOT", "SLASH", "Literals"]

AUTOMATON_MIN = 64
"""From this many wildcard rules with a literal after a ``*``, they are found by
an automaton; fewer cost less scanned one by one."""
FLOOD_REPORTS = 10_000
"""Past twice the path's length plus this many reports, a path floods the automaton
(see :class:`Literals`)."""
NEEDLE = 64
"""Needles are cut to this many characters: a rule with a longer one is read again to be tried."""
# Patterns read again and kept at once; what one weighs (an upper estimate).
_CACHED = 4096
_PATTERN_BYTES = 512


class Literals:
    """Wildcard rules with a needle, found by an automaton.

    The rules themselves are not kept: per rule, flat arrays hold its code
    (line and verdict), its rank, its shape (:data:`.FIND`, :data:`.ENDS`,
    else to be read again) and the id of its prefix (the text before its
    ``*``); the needles are one string. A found rule of shape ``FIND`` or
    ``ENDS`` is decided from where the automaton last saw its needle;
    another is read again from the file (``pattern_at``) when its turn
    comes, and kept in a small bounded cache. The automaton is lent by the
    process's cache (:mod:`.automata`): taken back under its budget of
    bytes, it is built again from the needles on the next check.

    An automaton reports every needle ending at every position, so needles
    that are suffixes of one another report many times per character of a
    path that holds them all. Periodic needles (``a``, ``aa``...; ``abab``,
    ``ababa``...: the many nested in a run) are left to :class:`.Runs`:
    those of one repeated character from the start, the others once a path
    brings a flood of reports (looking for them costs a few milliseconds a
    large file, and the automaton is built again without them). The rest
    report at most once per needle length at each character: a bound in the
    path's length whatever the number of rules (no rule is ever tried one by
    one against the path).
    """

    __slots__ = (
        "__weakref__",
        "_automaton",
        "_cache",
        "_codes",
        "_finders",
        "_first",
        "_kept",
        "_needle_of",
        "_needles",
        "_next",
        "_order",
        "_overlap",
        "_pattern_at",
        "_periodic",
        "_periods_checked",
        "_prefix_ids",
        "_prefix_one",
        "_prefixes",
        "_priorities",
        "_roots",
        "_shapes",
        "_sizes",
        "_split",
        "_strategy",
        "_unbuilt",
        "_weight",
        "_windows",
        "work",
    )

    def __init__(
        self,
        needles: list[str],
        codes: array[int],
        *,
        strategy: PrecedenceStrategy,
        priorities: list[int],
        shapes: bytes,
        prefixes: list[str],
        pattern_at: Callable[[int], Pattern],
        work: CheckWork | None = None,
    ) -> None:
        self._codes = codes
        self.work = work
        """Where checks count what they cost, if anywhere (see :class:`.CheckWork`)."""
        self._strategy = strategy
        # SPEC 5's priority (the pattern's length): with the code, what a rank is made from.
        # The smallest array they fit in (most files': bytes).
        top = max(priorities, default=0)
        self._priorities = array("B" if top < 256 else "H" if top < 1 << 16 else "i", priorities)
        self._pattern_at = pattern_at
        self._cache: dict[int, Pattern] = {}
        self._order: array[int] | None = None
        self._split: list[str] | None = None
        # Any part of a needle will do: found, its rules are checked in
        # full. A bound on needle length bounds how many needles can end at
        # one position, so a flood of reports shows within a chunk. A rule
        # whose needle is cut cannot be decided from where it was seen.
        lengths = set(map(len, needles))
        longest = max(lengths)
        if longest > NEEDLE:
            lengths = {min(size, NEEDLE) for size in lengths}
            long_shapes = bytearray(shapes)
            for i, needle in enumerate(needles):
                if len(needle) > NEEDLE:
                    long_shapes[i] = 255
            shapes = bytes(long_shapes)
            short = [needle[:NEEDLE] for needle in needles]
        else:
            short = needles
        self._shapes = shapes
        self._prefixes, self._prefix_ids, self._prefix_one = prefix_ids(prefixes)
        # Needle i stands for rule i, unless some repeat (see .windows.by_text).
        ids, self._first, self._next, self._needle_of, short = by_text(short)
        self._overlap = min(longest, NEEDLE) - 1
        # Needles of one repeated character: found from the path's runs, not
        # by the automaton (built from the others, ``_kept``: automaton
        # index -> needle). Other periodic ones join them after a flood.
        self._periodic: dict[int, tuple[str, int]] | None = None
        self._roots: dict[int, set[str]] = {}
        self._finders: dict[int, re.Pattern[str]] = {}
        self._kept: array[int] | None = None
        self._periods_checked = False
        self._leave_periodic(unary_needles(short), len(short))
        # What the automaton is built again from, once the process-wide
        # cache took it back: one string (normalised needles hold no "\n").
        self._needles = "\n".join(short)
        # Weighed in the process's cache: the automaton, and the patterns
        # read again and kept beside it (dropped with it).
        self._weight = AUTOMATON_BYTES_PER_CHAR * len(self._needles)
        self._weight += min(len(codes), _CACHED) * _PATTERN_BYTES
        self._automaton: AhoCorasick | None = None
        # Built on the first check that needs it, from these (no need to split the string).
        self._unbuilt: list[str] | None = short
        # Needles of few lengths: a short path's are looked up instead (see .windows).
        self._sizes = Windows.sizes_for(lengths)
        self._windows: Windows | None = None
        if self._sizes is not None:
            chars = len(self._needles)
            self._windows = Windows(short, self._periodic or (), self._sizes, chars, ids)
            automata.admit(self, self._windows.weight, built=False)

    def _leave_periodic(self, periodic: dict[int, tuple[str, int]], count: int) -> None:
        """Leave ``periodic`` needles (index -> (root, length)) to :class:`.Runs`."""
        if not periodic:
            return
        known = self._periodic = {**(self._periodic or {}), **periodic}
        for root, _ in periodic.values():
            self._roots.setdefault(len(root), set()).add(root)
        # Runs of a character shorter than its shortest needle (but one) do not matter.
        shortest: dict[str, int] = {}
        for root, size in known.values():
            if len(root) == 1 and size > 1 and size < shortest.get(root, NEEDLE + 1):
                shortest[root] = size
        self._finders = {period: finder(period, shortest) for period in self._roots}
        self._kept = array("i", [i for i in range(count) if i not in known])

    def _flooded(self) -> bool:
        """After a flood of reports: whether periodic needles were left out of the automaton
        (built again without them), which only needs doing once."""
        self._periods_checked = True
        needles = self._needles.split("\n")
        periodic = periodic_needles(needles)
        if not periodic:
            return False
        self._leave_periodic(periodic, len(needles))
        self._automaton = None
        self._unbuilt = needles
        return True

    def _matcher(self) -> AhoCorasick:
        """The automaton, built (and admitted to the process's cache) if it was taken back."""
        automaton = self._automaton
        if automaton is not None:
            automata.touch(self)
            return automaton
        needles = self._unbuilt
        if needles is None:
            needles = self._needles.split("\n")
        self._unbuilt = None
        if self._kept is not None:
            needles = [needles[i] for i in self._kept]
        automaton = AhoCorasick(
            needles, store_patterns=False, implementation=Implementation.ContiguousNFA
        )
        self._automaton = automaton
        self._windows = None  # the automaton finds what they would
        automata.admit(self, self._weight)
        return automaton

    def drop_automaton(self) -> None:
        """Called by the process's cache: let the automaton (or the needles looked
        up) go, made again when needed. What was read again goes with it: it is
        weighed with it."""
        self._automaton = None
        self._windows = None
        self._unbuilt = None
        self._cache = {}
        self._order = None
        self._split = None

    @property
    def has_automaton(self) -> bool:
        return self._automaton is not None

    def _pattern(self, rule: int) -> Pattern:
        pattern = self._cache.get(rule)
        if pattern is None:
            pattern = self._pattern_at(self._codes[rule] >> 1)
            if len(self._cache) >= _CACHED:
                self._cache.clear()
            self._cache[rule] = pattern
        return pattern

    def _tried(self, rule: int, path: str) -> bool:
        """Whether ``rule`` matches ``path``, its pattern matched in full: a rule tried."""
        if self.work is not None:
            self.work.rules_tried += 1
        return self._pattern(rule).matches(path)

    def present(self, path: str) -> tuple[Found, list[tuple[str, int]] | None]:
        """The needles in ``path`` (but periodic ones), each with where it was seen last
        (see :mod:`.pieces`), and after a flood of reports the pieces left unread."""
        kept = self._kept
        if kept is not None and not kept:
            return {}, None
        if self._sizes is not None and self._automaton is None:
            looked_up = self._looked_up(path, self._sizes)
            if looked_up is not None:
                return looked_up, None
        pieces = iter(split(path, self._overlap))
        found: Found = {}
        find = self._matcher().find_matches_as_indexes
        left = read(find, pieces, found, kept, 2 * len(path) + FLOOD_REPORTS)
        if self.work is not None:
            self.work.reports += 2 * len(path) + FLOOD_REPORTS - left
        if left >= 0:
            return found, None
        if not self._periods_checked and self._flooded():
            return self.present(path)
        # Stopped past the budget: the rest is read only if the rules cannot be
        # decided without it (see _walk).
        return found, list(pieces)

    def _looked_up(self, path: str, sizes: tuple[int, ...]) -> Found | None:
        """The needles in a short ``path``, from the dict of them (made again if taken
        back), while that costs less than the automaton would (else ``None``: .windows)."""
        windows, chars = self._windows, len(self._needles)
        if windows is None:
            if not Windows.worth(len(path), sizes, chars):
                return None
            windows = Windows(self._needles.split("\n"), self._periodic or (), sizes, chars)
            self._windows = windows
            automata.admit(self, windows.weight, built=False)
        else:
            automata.touch(self)
        before = windows.looked_up
        found = windows.found(path)
        if self.work is not None:
            self.work.windows_looked_up += windows.looked_up - before
        return found

    def _prefixed(self, path: str) -> set[int] | None:
        """Ids of the prefixes ``path`` starts with; ``None``: every rule's prefix is a root one."""
        prefixes = self._prefixes
        if prefixes is None:
            return None
        return {ROOT, SLASH, *prefixes.all(path)}

    def scan(self, path: str, best_rank: int, best: int) -> tuple[int, int]:
        """The best-ranked matching rule, if it ranks above ``best``."""
        found, unread = self.present(path)
        runs = None if self._periodic is None else Runs(path, self._roots, self._finders)
        if unread is not None:
            # Searching the unread end for a rule costs about as much as a
            # report or two for each of its characters.
            cut = unread[0][1] if unread else len(path)
            searches = 64 + 128 * max(2 * len(path) + FLOOD_REPORTS, 0) // max(cut, 1)
            decided = self._walk(
                path,
                found=found,
                unread=unread,
                runs=runs,
                best_rank=best_rank,
                best=best,
                searches=searches,
            )
            if decided is not None:
                return decided
            if unread:
                find = self._matcher().find_matches_as_indexes
                left = read(find, unread, found, self._kept, 1 << 62)
                if self.work is not None:
                    self.work.reports += (1 << 62) - left
        needles: Iterable[int] = found
        if runs is not None and self._periodic is not None:
            # A periodic needle is in the path if a run in phase with it is as long.
            longest, periodic = runs.longest, self._periodic.items()
            there = [i for i, (root, size) in periodic if longest(root, 0) >= size]
            needles = [*found, *there] if there else found
        if not found and needles is found:
            return best_rank, best
        first, following = self._first, self._next
        if first is None or following is None:
            candidates = list(needles)
        else:
            candidates = []
            for needle in needles:
                rule = first[needle]
                while rule >= 0:
                    candidates.append(rule)
                    rule = following[rule]
        prefixed, prefix_ids = self._prefixed(path), self._prefix_ids
        if prefixed is not None:
            # A rule whose prefix the path lacks is out.
            if prefix_ids is None:
                candidates = candidates if self._prefix_one in prefixed else []
            else:
                candidates = [rule for rule in candidates if prefix_ids[rule] in prefixed]
        if not candidates:
            return best_rank, best
        # Ranked by the strategy, sorted in C.
        codes, priorities = self._codes, self._priorities
        ranks = self._strategy.ranks(
            [codes[rule] for rule in candidates], [priorities[rule] for rule in candidates]
        )
        if self.work is not None:
            self.work.rules_ranked += len(candidates)
        ranked = sorted(zip(ranks, candidates, strict=True)) if len(candidates) > 1 else None
        shapes, needle_of, size = self._shapes, self._needle_of, len(path)
        for rank, rule in ranked or zip(ranks, candidates, strict=True):
            if rank >= best_rank:
                break
            needle = rule if needle_of is None else needle_of[rule]
            if runs is not None and self._periodic is not None and needle in self._periodic:
                if self._in_runs(rule, needle, path, runs):
                    return rank, codes[rule]
                continue
            where, (_, start, end) = found[needle]
            if where + start < self._offset(rule):
                continue  # seen last before the prefix's end: nowhere after it
            shape = shapes[rule]
            if shape == FIND or (shape == ENDS and where + end == size):
                return rank, codes[rule]
            if shape not in (FIND, ENDS) and self._tried(rule, path):
                return rank, codes[rule]
        return best_rank, best

    def _in_runs(self, rule: int, needle: int, path: str, runs: Runs) -> bool:
        """Whether the rule of a periodic needle matches, from the path's runs."""
        root, length = self._periodic[needle] if self._periodic else ("", 0)
        offset = self._offset(rule)
        if self._shapes[rule] == ENDS:
            text = (root * (length // len(root) + 1))[:length]
            return path.endswith(text) and len(path) - length >= offset
        if runs.longest(root, offset) < length:
            return False
        return self._shapes[rule] == FIND or self._tried(rule, path)

    def _offset(self, rule: int) -> int:
        """Length of the rule's prefix: where its needle may start in a path."""
        ids = self._prefix_ids
        prefix = self._prefix_one if ids is None else ids[rule]
        if prefix < 0:
            return prefix - ROOT  # "" or "/"
        prefixes = self._prefixes
        return 0 if prefixes is None else len(prefixes.items[prefix])

    def _walk(
        self,
        path: str,
        *,
        found: Found,
        unread: list[tuple[str, int]],
        runs: Runs | None,
        best_rank: int,
        best: int,
        searches: int,
    ) -> tuple[int, int] | None:
        """After a flood: every rule in rank order, until one matches (the best one).

        A needle found in the part of the path read so far decides its rule
        there; another is searched for in the unread end, as long as that
        costs less than reading it (the reports so far tell how many a
        character): else ``None``, and the rest is read.
        """
        order, needles = self._ordered()
        size = len(path)
        cut = unread[0][1] if unread else size
        codes, priorities, rank_of = self._codes, self._priorities, self._strategy.rank
        shapes, needle_of, periodic = self._shapes, self._needle_of, self._periodic
        prefixed, prefix_ids, one = self._prefixed(path), self._prefix_ids, self._prefix_one
        decided: tuple[int, int] | None = best_rank, best
        at = -1  # where in the order the walk stopped
        for at in range(len(order)):
            rule = order[at]
            code = codes[rule]
            rank = rank_of(code >> 1, bool(code & 1), priorities[rule])
            if rank >= best_rank:
                break
            if (
                prefixed is not None
                and (one if prefix_ids is None else prefix_ids[rule]) not in prefixed
            ):
                continue
            needle = rule if needle_of is None else needle_of[rule]
            if periodic is not None and runs is not None and needle in periodic:
                if self._in_runs(rule, needle, path, runs):
                    decided = rank, code
                    break
                continue
            shape, offset, text = shapes[rule], self._offset(rule), needles[needle]
            if shape == ENDS:
                matched = path.endswith(text) and size - len(text) >= offset
            else:
                seen = found.get(needle)
                matched = seen is not None and seen[0] + seen[1][1] >= offset
                if not matched and cut < size:
                    # Seen before the cut if at all: any later copy is unread.
                    searches -= 1
                    if searches < 0:
                        decided = None
                        break
                    if self.work is not None:
                        self.work.rules_tried += 1
                    matched = path.find(text, max(offset, cut)) >= 0
                if matched and shape != FIND:
                    matched = self._tried(rule, path)
            if matched:
                decided = rank, code
                break
        if self.work is not None:
            self.work.rules_ranked += at + 1
        return decided

    def _ordered(self) -> tuple[array[int], list[str]]:
        """Every rule in rank order, and the needles: kept (and weighed) with the automaton."""
        order, needles = self._order, self._split
        if order is None or needles is None:
            ranks = self._strategy.ranks(self._codes, self._priorities)
            if self.work is not None:
                self.work.rules_ranked += len(ranks)
            order = array("i", sorted(range(len(ranks)), key=ranks.__getitem__))
            del ranks
            needles = self._needles.split("\n")
            if self.has_automaton:
                self._order, self._split = order, needles
                extra = 4 * len(order) + 64 * len(needles) + 2 * len(self._needles)
                automata.admit(self, self._weight + extra, built=False)
        return order, needles
