"""Damaged inputs are refused in one line naming the file; any file name works.

The viewers (``werewolf view`` on a game log, a series, an arena and a solve
folder; ``fruit-trading view``; ``werewolf graph``) read through the same checked
readers as ``werewolf replay`` (``games.werewolf.play.log``, ``runs.atomic``).
Every case below damages a real output of a tiny scripted run in one way and
requires: exit status not 0, exactly one ``gt-llm: error:`` line, naming the
damaged file, and no traceback. Pages link to files whose names hold a space or a
non-ASCII letter (the links are percent-encoded), and a page whose data a
script cannot draw says so instead of staying blank (``browser`` tests).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from games.engine.html_page import asset, render_page, write_page
from games.werewolf.view.solve import solve_page
from tests.cli_runner import run_cli
from tests.headless_chromium import Browser, find_chromium

CHROMIUM = find_chromium()

RUNS = {
    "S": ["werewolf", "play", "--games", "2", "--max-rounds", "2", "--debate-turns", "1"],
    "A": ["werewolf", "arena", "--models", "gratr,none", "--games", "2", "--max-rounds", "2",
          "--debate-turns", "1"],
    "V": ["werewolf", "solve", "--days", "1", "--speakers", "1", "--iterations", "5",
          "--models", "none", "--deals", "1"],
    "F": ["fruit-trading", "run", "--inits", "1", "--max-messages", "3", "--num-seeds", "1",
          "--iterations", "5", "--no-generalisation", "--no-whole-game", "--variants", "tone"],
}  # fmt: skip


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A series (S), an arena (A), a day study (V) and a fruit-trading run (F), scripted."""
    root = tmp_path_factory.mktemp("issue29_viewers")
    for out, argv in RUNS.items():
        run = run_cli([*argv, "--out", out, "--no-progress"], cwd=root)
        assert run.returncode == 0, run.stderr[-2000:]
    return root


# --------------------------------------------------------------------------- damaging


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write_records(path: Path, records: list[Any]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _pick(records: list[dict[str, Any]], type_: str, kind: str | None = None, seat=None) -> dict:
    return next(
        r
        for r in records
        if r["type"] == type_
        and (kind is None or r.get("kind") == kind)
        and (seat is None or r.get("seat") == seat)
    )


def _set_field(type_: str, kind: str | None, field: str, value: Any) -> Callable[[Path], None]:
    """Damage: one record's field (the first of its type/kind) set to ``value``."""

    def damage(path: Path) -> None:
        records = _records(path)
        _pick(records, type_, kind)[field] = value
        _write_records(path, records)

    return damage


def _raw(text: str | bytes, *, at: int = 3) -> Callable[[Path], None]:
    """Damage: a raw line put in before line ``at`` (1-based) of a JSONL file."""

    def damage(path: Path) -> None:
        lines = path.read_bytes().splitlines(keepends=True)
        line = text if isinstance(text, bytes) else text.encode("utf-8")
        lines.insert(at - 1, line + b"\n")
        path.write_bytes(b"".join(lines))

    return damage


def _json_edit(edit: Callable[[Any], Any]) -> Callable[[Path], None]:
    """Damage: a JSON file rewritten as ``edit(document)`` (its return value, if not None)."""

    def damage(path: Path) -> None:
        doc = json.loads(path.read_text(encoding="utf-8"))
        new = edit(doc)
        path.write_text(json.dumps(doc if new is None else new), encoding="utf-8")

    return damage


def _text(text: str | bytes) -> Callable[[Path], None]:
    """Damage: the whole file replaced."""

    def damage(path: Path) -> None:
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))

    return damage


def _not_utf8(path: Path) -> None:
    data = path.read_bytes()
    cut = len(data) // 2
    path.write_bytes(data[:cut] + b"\xff" + data[cut:])


def _cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])


DEEP = "[" * 100_000 + "]" * 100_000


# One game log, each damage alone (``werewolf view LOG``).
LOG_DAMAGES: dict[str, Callable[[Path], None]] = {
    "deaths-players-number": _set_field("event", "deaths", "players", 5),
    "deaths-players-text": _set_field("event", "deaths", "players", "0,1"),
    "deaths-players-nested": _set_field("event", "deaths", "players", [[1]]),
    "deaths-roles-list": _set_field("event", "deaths", "roles", ["seer"]),
    "header-players-text": _set_field("header", None, "players", "eight"),
    "header-players-numbers": _set_field("header", None, "players", [1, 2]),
    "header-config-text": _set_field("header", None, "config", "arena"),
    "header-schema-2": _set_field("header", None, "schema", 2),
    "votes-list": _set_field("event", "votes", "votes", [1, 2]),
    "votes-nested": _set_field("event", "votes", "votes", {"0": [1]}),
    "votes-named-keys": _set_field("event", "votes", "votes", {"Player 1": 2}),
    "bids-list": _set_field("event", "bids", "bids", [3, 1]),
    "speech-act-text": _set_field("event", "speech", "act", "accuse"),
    "game-over-roles-list": _set_field("event", "game_over", "roles", ["villager"]),
    "suspicion-text": _set_field("peer_analysis", None, "suspicion", "high"),
    "suspicion-list": _set_field("peer_analysis", None, "suspicion", [0.5]),
    "suspicion-map": _set_field("peer_analysis", None, "suspicion", {"1": 0.5}),
    "result-deception-list": _set_field("result", None, "deception", [1]),
    "result-roles-text": _set_field("result", None, "roles", "villagers"),
    "action-step-text": _set_field("action", None, "step", "3"),
    "phase-round-list": _set_field("event", "phase", "round", [1]),
    "llm-call-seat-text": _set_field("llm_call", None, "seat", "P1"),
    "scratchpad-text-object": _set_field("scratchpad", None, "text", {"a": 1}),
    "statement-act-text": _set_field("deception_statement", None, "act", "lie"),
    "suspicion-nan": _raw(
        '{"type": "peer_analysis", "statement": 0, "observer": 1, "speaker": 2, '
        '"deceptive": true, "suspicion": NaN}'
    ),
    "not-utf8": _raw(b'{"type": "event", "kind": "omen", "text": "\xff"}'),
    "null-line": _raw("null"),
    "deep-100k": _raw('{"type": "event", "kind": "omen", "data": ' + DEEP + "}"),
    "cut-middle": _raw('{"type": "event", "kind": "om'),
}

# An arena log's belief and arena records (``werewolf view LOG`` and ``werewolf graph``).
ARENA_LOG_DAMAGES: dict[str, Callable[[Path], None]] = {
    "belief-init-settings-list": _set_field("belief_init", None, "settings", [1]),
    "belief-init-seat-text": _set_field("belief_init", None, "seat", "0"),
    "belief-evidence-number": _set_field("belief_evidence", None, "evidence", 5),
    "belief-evidence-items": _set_field("belief_evidence", None, "evidence", [1]),
    "belief-consult-subjects-text": _set_field("belief_consult", None, "subjects", "Player 1"),
    "arena-seats-number": _set_field("arena", None, "seats", 5),
    "arena-wolf-model-object": _set_field("arena", None, "wolf_model", {"a": 1}),
}


def _gratr_seat(records: list[dict[str, Any]]) -> int:
    return next(r["seat"] for r in records if r["type"] == "belief_init" and r["model"] == "gratr")


def _seat_field(type_: str, field: str, value: Any) -> Callable[[Path], None]:
    """Damage: a field of the GRATR seat's first record of ``type_``."""

    def damage(path: Path) -> None:
        records = _records(path)
        _pick(records, type_, seat=_gratr_seat(records))[field] = value
        _write_records(path, records)

    return damage


# What the graph replays: the GRATR seat's own records, by shape and by content.
GRAPH_DAMAGES: dict[str, Callable[[Path], None]] = {
    **LOG_DAMAGES,
    **{k: v for k, v in ARENA_LOG_DAMAGES.items() if k != "belief-init-seat-text"},
    "gratr-settings-unknown": _seat_field("belief_init", "settings", {"bogus": 1}),
    "gratr-settings-list": _seat_field("belief_init", "settings", [1]),
    "gratr-role-number": _seat_field("belief_init", "role", 7),
    "gratr-evidence-unknown": _seat_field("belief_evidence", "evidence", [{"bogus": 1}]),
    "gratr-evidence-number": _seat_field("belief_evidence", "evidence", 5),
    "gratr-subjects-number": _seat_field("belief_consult", "subjects", 5),
    "gratr-step-text": _seat_field("belief_evidence", "step", "2"),
}


def _series_rate(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    return _json_edit(lambda d: edit(d["win_rates"]["werewolves"]))


SERIES_DAMAGES: dict[str, Callable[[Path], None]] = {
    "summary-list": _text("[1, 2]"),
    "summary-deep": _text(DEEP),
    "summary-not-utf8": _not_utf8,
    "summary-cut": _cut,
    "win-rates-number": _json_edit(lambda d: d.update(win_rates=5)),
    "win-rate-number": _json_edit(lambda d: d["win_rates"].update(werewolves=0.5)),
    "ci95-number": _series_rate(lambda r: r.update(ci95=0.5)),
    "rate-text": _series_rate(lambda r: r.update(rate="high")),
    "games-text": _json_edit(lambda d: d.update(games="2")),
}


def _gratr_rates(d: dict[str, Any]) -> dict[str, Any]:
    return d["pairs"][0]["models"]["gratr"]


ARENA_DAMAGES: dict[str, Callable[[Path], None]] = {
    "arena-list": _text("[1]"),
    "arena-deep": _text(DEEP),
    "arena-not-utf8": _not_utf8,
    "rate-is-a-number": _json_edit(lambda d: _gratr_rates(d).update(TWR=0.5)),
    "rate-text": _json_edit(lambda d: _gratr_rates(d)["TWR"].update(rate="x")),
    "ci95-short": _json_edit(lambda d: _gratr_rates(d)["WWR"].update(ci95=[0.1])),
    "pairs-object": _json_edit(lambda d: d.update(pairs={})),
    "pair-number": _json_edit(lambda d: d["pairs"][0].update(pair=5)),
    "models-list": _json_edit(lambda d: d["pairs"][0].update(models=[])),
}


def _decision(d: dict[str, Any]) -> dict[str, Any]:
    return d["days"][0]["decisions"][0]


def _ragged(d: dict[str, Any]) -> None:
    probs = _decision(d)["probs"]
    probs[0] = probs[0][:-1]


DECISIONS_DAMAGES: dict[str, Callable[[Path], None]] = {
    "decisions-list": _text("[1]"),
    "decisions-deep": _text(DEEP),
    "decisions-not-utf8": _not_utf8,
    "decisions-cut": _cut,
    "days-object": _json_edit(lambda d: d.update(days={"0": d["days"][0]})),
    "days-null": _json_edit(lambda d: d.update(days=None)),
    "days-empty": _json_edit(lambda d: d.update(days=[])),
    "day-null": _json_edit(lambda d: d["days"].insert(0, None)),
    "tones-number": _json_edit(lambda d: d.update(tones=5)),
    "speakers-number": _json_edit(lambda d: d["days"][0].update(speakers=5)),
    "probs-ragged": _json_edit(_ragged),
    "probs-number": _json_edit(lambda d: _decision(d).update(probs=5)),
    "history-number": _json_edit(lambda d: _decision(d).update(history=5)),
    "acts-list": _json_edit(lambda d: _decision(d).update(acts=[])),
    "reach-text": _json_edit(lambda d: _decision(d).update(reach="x")),
    "decision-null": _json_edit(lambda d: d["days"][0]["decisions"].insert(0, None)),
}

SOLVE_SUMMARY_DAMAGES: dict[str, Callable[[Path], None]] = {
    "solve-summary-list": _text("[1]"),
    "solve-summary-cut": _cut,
    "settings-number": _json_edit(lambda d: d.update(settings=5)),
}


def _metric_text(path: Path) -> None:
    head, row = path.read_text(encoding="utf-8").splitlines()[:2]
    cells = row.split(",")
    cells[head.split(",").index("nash_conv")] = "abc"
    path.write_text(head + "\n" + ",".join(cells) + "\n", encoding="utf-8")


DAYS_CSV_DAMAGES: dict[str, Callable[[Path], None]] = {
    "days-csv-not-utf8": _not_utf8,
    "days-csv-metric-text": _metric_text,
}


def _leaf_edit(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    """Damage: the first leaf of a dialogues file edited."""

    def damage(path: Path) -> None:
        records = _records(path)
        edit(records[0])
        _write_records(path, records)

    return damage


def _long_dialogue(leaf: dict[str, Any]) -> None:
    leaf["messages"] = [dict(leaf["messages"][i % 2], seed=i) for i in range(3000)]


def _other_opening(leaf: dict[str, Any]) -> None:
    leaf["messages"][0]["text"] = "a different opening"


DIALOGUES_DAMAGES: dict[str, Callable[[Path], None]] = {
    "null-line": _raw("null"),
    "dialogues-not-utf8": _not_utf8,
    "dialogues-cut-middle": _raw('{"init": 0, "mess'),
    "no-sender": _leaf_edit(lambda r: r["messages"][1].pop("sender")),
    "long-dialogue": _leaf_edit(_long_dialogue),
    "messages-number": _leaf_edit(lambda r: r.update(messages=5)),
    "names-number": _leaf_edit(lambda r: r.update(names=5)),
    "payoffs-text": _leaf_edit(lambda r: r.update(payoffs="1,2")),
    "reach-text": _leaf_edit(lambda r: r.update(reach_cfr="x")),
    "guesses-number": _leaf_edit(lambda r: r.update(guesses=5)),
    "seed-text": _leaf_edit(lambda r: r["messages"][1].update(seed="x")),
    "other-opening": _leaf_edit(_other_opening),
}

POLICY_DAMAGES: dict[str, Callable[[Path], None]] = {
    "policy-list": _text("[1]"),
    "policy-deep": _text(DEEP),
    "policy-not-utf8": _not_utf8,
    "subgames-numbers": _json_edit(lambda d: d.update(subgames=[1, 2])),
    "infosets-number": _json_edit(lambda d: d["subgames"][0].update(infosets=5)),
    "infoset-key": _json_edit(lambda d: d["subgames"][0].update(infosets={"k": {"x": 1.0}})),
}


# --------------------------------------------------------------------------- the probes


def _refused(run, damaged: Path) -> None:
    """Exit status not 0, one ``gt-llm: error:`` line naming the file, no traceback."""
    errors = [x for x in run.stderr.splitlines() if x.startswith("gt-llm: error:")]
    assert run.returncode != 0, (run.stdout, run.stderr[-2000:])
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert len(errors) == 1, run.stderr[-2000:]
    assert damaged.name in errors[0], errors[0]


def _copy(made: Path, name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(made / name, dest)
    return dest


def _arena_log(folder: Path) -> Path:
    return sorted((folder / "logs").rglob("*.jsonl"))[0]


@pytest.mark.parametrize("how", LOG_DAMAGES)
def test_view_refuses_a_damaged_game_log_in_one_line(made, tmp_path, how):
    log = tmp_path / "game.jsonl"
    shutil.copy(made / "S" / "logs" / "game_000000.jsonl", log)
    LOG_DAMAGES[how](log)
    _refused(run_cli(["werewolf", "view", str(log)]), log)


@pytest.mark.parametrize("how", ARENA_LOG_DAMAGES)
def test_view_refuses_a_damaged_arena_log_in_one_line(made, tmp_path, how):
    log = tmp_path / "arena game.jsonl"
    shutil.copy(_arena_log(made / "A"), log)
    ARENA_LOG_DAMAGES[how](log)
    _refused(run_cli(["werewolf", "view", str(log)]), log)


@pytest.mark.parametrize("how", GRAPH_DAMAGES)
def test_graph_refuses_a_damaged_arena_log_in_one_line(made, tmp_path, how):
    log = tmp_path / "game.jsonl"
    shutil.copy(_arena_log(made / "A"), log)
    records = _records(log)
    seat = _gratr_seat(records)
    step = max(r["step"] for r in records if isinstance(r.get("step"), int))
    GRAPH_DAMAGES[how](log)
    argv = ["werewolf", "graph", str(log), "--player", str(seat), "--step", str(step)]
    _refused(run_cli([*argv, "--out", str(tmp_path / "g.json")]), log)


def test_graph_still_draws_an_undamaged_log(made, tmp_path):
    log = _arena_log(made / "A")
    records = _records(log)
    seat = _gratr_seat(records)
    out = tmp_path / "g.json"
    run = run_cli(["werewolf", "graph", str(log), "--player", str(seat), "--step", "3",
                   "--out", str(out)])  # fmt: skip
    assert run.returncode == 0 and out.exists(), run.stderr


@pytest.mark.parametrize(
    ("folder", "file", "how"),
    [("S", "summary.json", how) for how in SERIES_DAMAGES]
    + [("A", "arena.json", how) for how in ARENA_DAMAGES]
    + [("V", "decisions.json", how) for how in DECISIONS_DAMAGES]
    + [("V", "summary.json", how) for how in SOLVE_SUMMARY_DAMAGES]
    + [("V", "days.csv", how) for how in DAYS_CSV_DAMAGES],
)
def test_view_refuses_a_damaged_results_folder_in_one_line(made, tmp_path, folder, file, how):
    damages = {
        ("S", "summary.json"): SERIES_DAMAGES,
        ("A", "arena.json"): ARENA_DAMAGES,
        ("V", "decisions.json"): DECISIONS_DAMAGES,
        ("V", "summary.json"): SOLVE_SUMMARY_DAMAGES,
        ("V", "days.csv"): DAYS_CSV_DAMAGES,
    }[(folder, file)]
    out = _copy(made, folder, tmp_path)
    damages[how](out / file)
    _refused(run_cli(["werewolf", "view", str(out)]), out / file)


@pytest.mark.parametrize(
    ("file", "how"),
    [("dialogues_tone.jsonl", how) for how in DIALOGUES_DAMAGES]
    + [("policy_tone.json", how) for how in POLICY_DAMAGES],
)
def test_fruit_view_refuses_a_damaged_export_in_one_line(made, tmp_path, file, how):
    out = _copy(made, "F", tmp_path)
    damages = DIALOGUES_DAMAGES if file.startswith("dialogues") else POLICY_DAMAGES
    damages[how](out / file)
    _refused(run_cli(["fruit-trading", "view", str(out)]), out / file)


def test_a_page_that_cannot_be_built_names_the_log(made):
    """The last guard: records that pass the reader but not the page (here a NaN)."""
    from games.werewolf.play.log import LogError
    from games.werewolf.view.page import log_page
    from games.werewolf.view.timeline import read_records

    records = read_records(made / "S" / "logs" / "game_000000.jsonl")
    records.append({"type": "peer_analysis", "statement": 0, "observer": 1, "suspicion": math.nan})
    with pytest.raises(LogError, match=r"^somewhere/g\.jsonl: cannot be shown \(ValueError"):
        log_page("somewhere/g.jsonl", records)


def test_encoding_errors_name_the_file_and_the_fix(made, tmp_path):
    """Point 12: not 'utf-8 codec can't decode byte 0xff in position N'."""
    out = _copy(made, "V", tmp_path)
    _not_utf8(out / "days.csv")
    run = run_cli(["werewolf", "view", str(out)])
    _refused(run, out / "days.csv")
    assert "codec" not in run.stderr and "re-run" in run.stderr
    out = _copy(made, "S", tmp_path / "s")
    _cut(out / "summary.json")
    run = run_cli(["werewolf", "view", str(out)])
    _refused(run, out / "summary.json")
    assert "re-run" in run.stderr


def test_a_damaged_log_in_a_folder_is_left_out_and_named(made, tmp_path):
    """A series whose one log is damaged: the index shows the rest and names it."""
    out = _copy(made, "S", tmp_path)
    LOG_DAMAGES["votes-list"](out / "logs" / "game_000001.jsonl")
    run = run_cli(["werewolf", "view", str(out)])
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    data = _page_data(out / "view" / "index.html")
    assert [r["log"] for r in data["rows"]] == ["game_000000.jsonl"]
    assert data["skipped"][0]["log"] == "game_000001.jsonl"
    assert "game_000001.jsonl:" in data["skipped"][0]["reason"]


# --------------------------------------------------------------------------- any file name


NAMES = ("game 1.jsonl", "jeu_é.jsonl")
HREF = re.compile(r"^[A-Za-z0-9_./#%~-]+$")  # what page/base.js lets into an href


def _page_data(page: Path) -> dict[str, Any]:
    text = page.read_text(encoding="utf-8")
    block = text.split('<script type="application/json" id="page-data">', 1)[1]
    return json.loads(block.split("</script>", 1)[0])


@pytest.fixture
def odd_names(made, tmp_path) -> Path:
    """A series whose logs are named with a space and a non-ASCII letter, its index
    written as ``my index.html``."""
    out = _copy(made, "S", tmp_path)
    for log, name in zip(sorted((out / "logs").glob("*.jsonl")), NAMES, strict=True):
        log.rename(log.with_name(name))
    run = run_cli(["werewolf", "view", str(out), "--out", str(out / "my index.html")])
    assert run.returncode == 0, run.stderr
    return out


def test_links_are_percent_encoded_and_lead_to_the_pages(odd_names):
    from games.engine.html_page import href

    index = odd_names / "my index.html"
    rows = _page_data(index)["rows"]
    assert sorted(r["log"] for r in rows) == sorted(NAMES)
    for row in rows:
        assert HREF.match(row["link"]), row["link"]
        page = index.parent / unquote(row["link"])
        assert page.exists()
        back = _page_data(page)["back"]
        assert HREF.match(back) and (page.parent / unquote(back)).resolve() == index.resolve()
    assert href(Path("a b/jeu_é.html"), Path(".")) == "a%20b/jeu_%C3%A9.html"
    assert href(Path("x/javascript:1.html"), Path("x")) == "javascript%3A1.html"


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM) as b:
        yield b


def _in_browser(test):
    test = pytest.mark.browser(test)
    return pytest.mark.skipif(
        CHROMIUM is None,
        reason="no Chromium found (apt-get install chromium, or set GT_LLM_CHROMIUM)",
    )(test)


@_in_browser
def test_pages_with_a_space_or_an_accent_in_their_names_render(browser, odd_names):
    index = odd_names / "my index.html"
    browser.open(index)
    assert browser.eval("document.body.dataset.error === undefined")
    links = browser.eval("[...document.querySelectorAll('tr.game-row a')].map(a => a.href)")
    assert len(links) == len(NAMES)
    for url in links:
        page = Path(unquote(urlparse(url).path))
        assert page.name.endswith(".html") and page.exists(), url
        browser.open(page)
        assert browser.eval("document.body.dataset.error === undefined")
        assert browser.eval("document.querySelectorAll('.item').length") > 0
        back = browser.eval("document.querySelector('#back').href")
        assert Path(unquote(urlparse(back).path)) == index.resolve()


@_in_browser
def test_a_solve_page_with_ragged_probs_still_renders(browser, made, tmp_path):
    """The reader refuses ragged ``probs``; a page given them anyway draws them as '–'."""
    data = _page_data_of(solve_page(made / "V"))
    probs = data["days"][0]["decisions"][0]["probs"]
    probs[0] = probs[0][:-1]
    page = write_page(
        tmp_path / "ragged days.html",
        render_page(
            title="ragged",
            data=data,
            scripts=[asset("games.werewolf.view", "solve.js")],
            styles=[asset("games.werewolf.view", "view.css")],
        ),
    )
    browser.open(page)
    assert browser.eval("document.body.dataset.error === undefined")
    assert browser.eval("document.querySelectorAll('table.grid').length") > 0


@_in_browser
def test_a_page_whose_script_fails_says_so(browser, tmp_path):
    page = write_page(
        tmp_path / "broken.html",
        render_page(title="broken", data={}, scripts=["pageData().nothing.here;"]),
    )
    browser.call("Page.navigate", session=True, url="about:blank")
    browser.call("Page.navigate", session=True, url=page.resolve().as_uri())
    browser.wait_for("document.body && document.body.dataset.error === '1'")
    assert "could not be drawn" in browser.eval("document.querySelector('.page-error').textContent")


def _page_data_of(html: str) -> dict[str, Any]:
    block = html.split('<script type="application/json" id="page-data">', 1)[1]
    return json.loads(block.split("</script>", 1)[0])
