"""No part of a backend URL's password or query value is printed by a command that parses specs.

Before: ``--agents "none@openai:mA@http://127.0.0.1:P/v1?key=SECRET,rules"`` read
the query's ``=`` as the end of an agent name and printed ``unknown opponent
model 'SECRET'`` (also ``werewolf arena --models``); a password or query value
holding a comma was cut at the comma by every comma-separated flag, and its tail
printed as an item of its own; a spec whose URL lacks its scheme printed its
query value. Probed on every command that parses backend or agent specs:
``werewolf tournament --agents``, ``werewolf arena --models``, ``werewolf play
--seat-backends`` / ``--team-backends``, ``fruit-trading run --player-backends``
and ``gt-llm backends``. Each probe has secrets of its own (the redaction list is
per process: an earlier probe's secret must not hide a later leak), and neither
the secrets nor any comma-separated part of them appears in stdout, stderr or any
file written.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from games.werewolf.agents import parse_agent, parse_agents
from gt_llm.registry import split_spec_list
from tests.cli_runner import run_cli


def _dead_port() -> int:
    """A loopback port nothing listens on (calls to it fail at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: (probe id, argv template): {Q} a query value, {PW} a password holding a comma,
#: {URL} ``http://127.0.0.1:PORT/v1`` on a dead port, {HOST} the same without scheme.
PROBES = [
    ("tournament-query", ["werewolf", "tournament", "--agents", "none@openai:mA@{URL}?key={Q},rules"]),
    ("arena-query", ["werewolf", "arena", "--models", "none@openai:mA@{URL}?key={Q},gratr"]),
    ("tournament-query-comma", ["werewolf", "tournament", "--agents", "none@openai:mA@{URL}?key=Ab,{Q},rules"]),
    ("tournament-password", ["werewolf", "tournament", "--agents", "none@openai:mA@{PWURL},rules"]),
    ("arena-password", ["werewolf", "arena", "--models", "none@openai:mA@{PWURL},gratr"]),
    ("play-seats-password", ["werewolf", "play", "--seat-backends", "openai:mA@{PWURL}" + ",scripted" * 6]),
    ("play-seats-query-comma", ["werewolf", "play", "--seat-backends", "openai:mA@{URL}?key=Ab,{Q}" + ",scripted" * 6]),
    ("play-seats-no-scheme", ["werewolf", "play", "--seat-backends", "openai:mA@{HOST}?x={Q}" + ",scripted" * 7]),
    ("play-seats-no-scheme-comma", ["werewolf", "play", "--seat-backends", "openai:mA@{HOST}?x=Ab,{Q}" + ",scripted" * 7]),
    ("play-teams-password", ["werewolf", "play", "--team-backends", "werewolves=openai:mA@{PWURL},villagers=scripted"]),
    ("play-teams-query-comma", ["werewolf", "play", "--team-backends", "werewolves=openai:mA@{URL}?key=Ab,{Q},villagers=scripted"]),
    ("fruit-players-password", ["fruit-trading", "run", "--player-backends", "openai:mA@{PWURL}"]),
    ("fruit-players-no-scheme", ["fruit-trading", "run", "--player-backends", "nope:mA@{HOST}?x={Q},scripted"]),
    ("backends-no-scheme", ["backends", "openai:mA@{HOST}?x={Q}"]),
    ("backends-password", ["backends", "--check", "openai:mA@{PWURL}"]),
]  # fmt: skip


@pytest.mark.parametrize(("probe", "argv"), PROBES, ids=[p for p, _ in PROBES])
def test_no_part_of_a_secret_is_printed_or_written(
    probe: str, argv: list[str], tmp_path: Path
) -> None:
    tag = probe.replace("-", "")
    query = f"Qry{tag}Secret987"
    password = f"Pw{tag}Head,Pw{tag}Tail55"
    port = _dead_port()
    values = {
        "{Q}": query,
        "{URL}": f"http://127.0.0.1:{port}/v1",
        "{HOST}": f"127.0.0.1:{port}/v1",
        "{PWURL}": f"http://user:{password}@127.0.0.1:{port}/v1",
    }
    args = []
    for a in argv:
        for k, v in values.items():
            a = a.replace(k, v)
        args.append(a)
    if args[0] != "backends":
        args += ["--out", str(tmp_path / "out"), "--no-progress"]
        if args[1] == "play":
            args = [a for a in args if a != "--out" and a != str(tmp_path / "out")]
    proc = run_cli(args, cwd=tmp_path)
    secrets = [query, password, *password.split(",")]
    shown = proc.stdout + proc.stderr
    for secret in secrets:
        assert secret not in shown, f"{probe} shows {secret!r}:\n{shown[-1500:]}"
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, f"{probe}: {path} holds {secret!r}"


def test_a_query_equals_sign_is_not_a_name_separator() -> None:
    agent = parse_agent("none@openai:mA@http://127.0.0.1:9/v1?key=QueryNameSecret1")
    assert (agent.opponent, agent.backend) == (
        "none",
        "openai:mA@http://127.0.0.1:9/v1?key=QueryNameSecret1",
    )
    assert "QueryNameSecret1" not in agent.name and "QueryNameSecret1" not in str(agent.to_json())
    named = parse_agent("x=none@openai:mA@http://127.0.0.1:9/v1?key=QueryNameSecret1")
    assert (named.name, named.opponent) == ("x", "none")


def test_a_password_with_commas_stays_in_its_agent() -> None:
    url = "http://u:Pa,ss,Word@127.0.0.1:9/v1"
    agents = parse_agents(f"none@openai:mA@{url},gratr@openai:mB@http://127.0.0.1:9,rules")
    assert [a.backend for a in agents] == [
        f"openai:mA@{url}",
        "openai:mB@http://127.0.0.1:9",
        None,
    ]
    assert all("ss" not in a.name and "Word" not in a.name for a in agents)


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("scripted,groq", ["scripted", "groq"]),
        ("scripted,,scripted", ["scripted", "", "scripted"]),
        # A comma in the user info or the query stays in the URL.
        ("openai:m@http://u:a,b,c@h/v1,scripted", ["openai:m@http://u:a,b,c@h/v1", "scripted"]),
        ("openai:m@http://h/v1?key=a,b,scripted", ["openai:m@http://h/v1?key=a,b", "scripted"]),
        ("openai:m@h/v1?key=a,b,scripted", ["openai:m@h/v1?key=a,b", "scripted"]),
        # A URL without a path, then specs: the comma ends the URL.
        ("openai:m@http://h:8000,openai:n@http://h2/v1", ["openai:m@http://h:8000", "openai:n@http://h2/v1"]),
        ("openai:m@http://h:8000,scripted", ["openai:m@http://h:8000", "scripted"]),
    ],
)  # fmt: skip
def test_spec_lists_split_outside_urls_only(text: str, items: list[str]) -> None:
    assert split_spec_list(text) == items


def test_splitting_a_long_list_takes_linear_time() -> None:
    """A flag of tens of thousands of commas inside one URL's query is split at once."""
    started = time.perf_counter()
    assert len(split_spec_list("openai:m@http://h/v1?k=" + ",b" * 50_000)) == 1
    assert len(split_spec_list("openai:m@http://u:a" + ",b" * 50_000 + "@h/v1")) == 1
    assert len(split_spec_list("scripted," * 50_000)) == 50_001
    assert time.perf_counter() - started < 5
