"""A robots.txt compared with the one it replaces, pins by origin, entries named by SHA-256."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from scrapy_robotrules.engine.cli.operator_commands import report
from scrapy_robotrules.engine.operator_tools.audit_trail import change_line, summarise
from scrapy_robotrules.engine.operator_tools.pins import PinError, parse_pins
from scrapy_robotrules.engine.robots.fetch_outcomes import Outcome
from scrapy_robotrules.engine.robots.robotstxt import RobotsTxt
from scrapy_robotrules.engine.robots.rule_changes import FileChange, rule_changes
from scrapy_robotrules.engine.robots.urls import origin_of
from scrapy_robotrules.engine.stores import CachedStore, Entry, Record
from scrapy_robotrules.engine.stores.sqlite import SQLiteBackend

ORIGIN = "https://example.com"
A = "a" * 64
B = "B" * 64


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def test_rules_added_and_removed_are_those_of_the_agents_groups() -> None:
    old = RobotsTxt.parse(
        b"User-agent: mybot\nDisallow: /a\nDisallow: /b\n\nUser-agent: *\nDisallow: /\n"
    )
    new = RobotsTxt.parse(
        b"User-agent: *\nAllow: /\n\nUser-agent: MyBot\nDisallow: /b\nallow: /c\nDisallow: /d\n"
    )
    assert rule_changes(old, new, "MyBot/1.0") == (2, 1)  # /c and /d in, /a out; /b moved
    assert rule_changes(old, new, "otherbot") == (1, 1)  # the * group
    assert rule_changes(new, new, "MyBot/1.0") == (0, 0)


def test_a_rule_written_twice_counts_twice() -> None:
    once = RobotsTxt.parse(b"User-agent: *\nDisallow: /a\n")
    twice = RobotsTxt.parse(b"User-agent: *\nDisallow: /a\nDisallow: /a\n# a comment\n")
    assert rule_changes(once, twice, "bot") == (1, 0)


def test_an_origins_own_pin_beats_its_hosts() -> None:
    pins = parse_pins({"Example.com.": A, f"{ORIGIN}:8443": B})
    assert pins.for_origin(ORIGIN) == A
    assert pins.for_origin("http://example.com:8080") == A
    assert pins.for_origin("https://EXAMPLE.com:8443") == B.lower()
    assert pins.for_origin("https://other.example.com") is None
    assert parse_pins('{"[::1]": "' + A + '"}').for_origin("http://[::1]:8080") == A
    assert not parse_pins(None).any
    assert not parse_pins("").any


@pytest.mark.parametrize(
    ("key", "url"),
    [
        ("http://pina-1.test:80", "http://pina-1.test/a"),  # the default port
        ("http://pina-2.test:080", "http://pina-2.test/a"),  # the same, with a leading zero
        ("https://pina-2.test:0443", "https://pina-2.test:443/a"),
        ("http://pina-5.test:08080", "http://pina-5.test:8080/a"),
        ("bücher-3.test", "http://bücher-3.test/a"),  # IDNA, a host key
        ("http://bücher-4.test", "http://BÜCHER-4.test/a"),  # IDNA, an origin key
        ("http://bücher-4.test", "http://xn--bcher-4-n2a.test/a"),  # as Scrapy's URL has it
        ("pina-7.test", "http://pina-7.test./a"),  # a final dot in the URL
        ("http://pina-7.test", "http://pina-7.test./a"),
        ("http://pina-7.test.", "http://pina-7.test/a"),  # a final dot in the key
        ("PINA-8.Test.", "https://pina-8.test:8443/a"),
        ("HTTPS://PINA-8.TEST", "https://pina-8.test/a"),
        ("[::1]", "http://[::1]:8080/a"),
    ],
)
def test_a_key_pins_the_origin_it_names_as_the_crawl_names_it(key: str, url: str) -> None:
    assert parse_pins({key: A}).for_origin(origin_of(url)) == A


def test_a_key_names_no_other_origin_than_its_own() -> None:
    pins = parse_pins({"http://pina-1.test:80": A, "pina-7.test": B})
    assert pins.for_origin(origin_of("https://pina-1.test/")) is None
    assert pins.for_origin(origin_of("http://pina-1.test:8080/")) is None
    assert pins.for_origin(origin_of("http://www.pina-7.test/")) is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"http://x.test:99999": A}, "'http://x.test:99999' names no origin (Port out of range"),
        ({"*.x.test": A}, "'*.x.test' names no origin (a host name is labels of"),
        ({"a." * 50_000 + "test": A}, "'a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a"),
        ({"x" * 100_000: A}, "'xxxxxxxxxx"),
        ({"ä" * 100_000: A}, "'ääääää"),
        ({"http://u:secret@x.test": A}, "'http://***@x.test' names credentials"),
        ({"u:secret@x.test": A}, "'***@x.test' names credentials"),
        ({"http://pina-1.test:80": A, "http://pina-1.test": B}, "names 'http://pina-1.test' twice"),
        ({"bücher-3.test": A, "xn--bcher-3-n2a.test": B}, "names 'xn--bcher-3-n2a.test' twice"),
    ],
    ids=[
        "port",
        "wildcard",
        "labels",
        "long",
        "long-idna",
        "credentials",
        "host-credentials",
        "same-origin",
        "same-host",
    ],
)
def test_a_key_that_names_no_origin_of_its_own_is_refused(value: object, message: str) -> None:
    with pytest.raises(PinError) as raised:
        parse_pins(value)
    text = str(raised.value)
    assert text.startswith(f"ROBOTRULES_PINNED{' ' if 'twice' in message else ': '}{message}")
    assert "\n" not in text
    assert len(text) < 300
    assert "secret" not in text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([A], "ROBOTRULES_PINNED must be a dict of sites to SHA-256 values, not ['aaaa"),
        ("{", "ROBOTRULES_PINNED must be a dict or a JSON object, not '{'"),
        ({"example.com": 5}, "ROBOTRULES_PINNED['example.com'] must be a SHA-256 in hex"),
        ({"example.com": "g" * 64}, "ROBOTRULES_PINNED['example.com'] must be a SHA-256 in hex"),
        ({"a.com": A, "A.com": A}, "ROBOTRULES_PINNED names 'a.com' twice"),
        ({"ftp://a.com": A}, "ROBOTRULES_PINNED: 'ftp://a.com' is neither a host"),
        ({5: A}, "ROBOTRULES_PINNED: a key must be a host or an origin, not 5"),
    ],
)
def test_a_bad_pin_is_one_line_naming_it(value: object, message: str) -> None:
    with pytest.raises(PinError) as raised:
        parse_pins(value)
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)


def test_the_audit_summary_counts_change_lines() -> None:
    old, new = RobotsTxt.parse(b""), RobotsTxt.parse(b"User-agent: *\nDisallow: /\n")
    line = change_line(FileChange(ORIGIN, old, new, A, B, 1, 0), at=1.0, agent="MyBot/1.0")
    summary = summarise([line, line])
    assert (summary.changes, summary.bad_lines, summary.requests) == (2, 0, 0)
    assert "robots.txt replaced by another file: 2 times" in report(summary)


def test_an_entry_adopted_from_a_shared_store_is_named_by_its_sha256(tmp_path: Path) -> None:
    old, new = b"User-agent: *\nDisallow: /old\n", b"User-agent: *\nDisallow: /new\n"
    adopted: list[tuple[Entry, Entry | None]] = []
    now = [1000.0]
    store = CachedStore(
        SQLiteBackend(str(tmp_path / "fleet.db")),
        clock=lambda: now[0],
        on_adopt=lambda entry, previous: adopted.append((entry, previous)),
        recheck=0.0,
    )
    robots = RobotsTxt.parse(old)
    store.put(
        Entry(
            ORIGIN,
            Outcome.RULES,
            robots,
            fetched_at=now[0],
            fresh_until=now[0] + 10,
            sha256=sha(old),
        ),
        old,
    )
    other = SQLiteBackend(str(tmp_path / "fleet.db"))  # another crawler refreshes it
    other.save(Record(ORIGIN, Outcome.RULES, new, 200, None, now[0] + 20, now[0] + 100))
    other.close()
    now[0] += 30  # the entry held here went stale
    entry = store.get(ORIGIN)
    assert entry is not None
    assert entry.sha256 == sha(new)
    [(taken, previous)] = adopted
    assert taken is entry
    assert previous is not None
    assert previous.sha256 == sha(old)
    store.close()


def test_a_body_stored_cut_has_no_known_sha256(tmp_path: Path) -> None:
    backend = SQLiteBackend(str(tmp_path / "cut.db"))
    body = b"User-agent: *\nDisallow: /a\n"
    backend.save(Record(ORIGIN, Outcome.RULES, body, 200, None, 1.0, 1e12))
    store = CachedStore(backend, max_size=len(body) - 1)
    entry = store.get(ORIGIN)
    assert entry is not None
    assert entry.robots is not None
    assert entry.sha256 is None
    store.close()
