"""The result pages: the shared template, fruit trading, Werewolf games, folders and days.

Data checks run without a browser. The ``browser`` tests open every page type
from disk in a real headless Chromium (skipped with the reason when there is
none), after its scripts ran: the DOM holds what the log holds, controls work
with real mouse clicks, and model text never becomes markup.
``GT_LLM_SCREENSHOTS=DIR`` also saves a screenshot of each page type (how the
pictures in ``docs/`` are made).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path

import pytest

from games.engine.html_page import render_page, script_json, write_page
from games.fruit_trading.experiment import ExperimentSettings, run_experiment
from games.fruit_trading.rules import TONES
from games.fruit_trading.view import build_tree, fruit_page, read_subgame, write_fruit_page
from games.werewolf.view.index import folder_kind, write_folder_pages
from games.werewolf.view.page import game_page
from games.werewolf.view.timeline import game_data, log_counts, read_records
from runs.atomic import ResultsError
from tests.cli_runner import run_cli
from tests.headless_chromium import Browser, BrowserError, find_chromium

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = find_chromium()


def in_browser(test):
    """Marks a test ``browser`` and skips it, saying why, when there is no Chromium."""
    test = pytest.mark.browser(test)
    return pytest.mark.skipif(
        CHROMIUM is None,
        reason="no Chromium found (apt-get install chromium, or set GT_LLM_CHROMIUM)",
    )(test)


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM) as b:
        yield b


def _shot(browser: Browser, name: str) -> None:
    """With ``GT_LLM_SCREENSHOTS=DIR``, a screenshot of the page (256 colours: small files)."""
    folder = os.environ.get("GT_LLM_SCREENSHOTS")
    if folder:
        from PIL import Image

        Path(folder).mkdir(parents=True, exist_ok=True)
        path = browser.screenshot(Path(folder) / name)
        Image.open(path).convert("RGB").quantize(colors=256).save(path, optimize=True)


EVIL = "</script><script>window.__pwned = 1</script>&\u2028\u2029<!--"


def test_script_json_cannot_close_the_block_and_round_trips():
    text = script_json({"answer": EVIL, "n": [1, 2.5, None]})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"answer": EVIL, "n": [1, 2.5, None]}
    with pytest.raises(ValueError):
        script_json({"x": math.nan})


def test_page_allows_only_its_own_scripts_and_fetches_nothing():
    page = render_page(title="t <b>", data={"a": EVIL}, scripts=["console.log(1);"])
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert (
        "default-src &#x27;none&#x27;" in csp and "unsafe-inline" not in csp.split("script-src")[1]
    )
    # base.js and the page script, each by hash
    assert csp.count("sha256-") == 2
    # the only <script> openings are ours: the data block and the two scripts
    assert page.count("<script") == 3 and "window.__pwned" in page
    assert "<title>t &lt;b&gt;</title>" in page
    assert not re.search(r"(src|href)=\"https?:", page)
    with pytest.raises(ValueError, match="</script"):
        render_page(title="t", data={}, scripts=["x = '</script>'"])


@pytest.fixture(scope="module")
def fruit_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fruit_view")
    settings = ExperimentSettings(
        inits=2,
        iterations=30,
        out=str(out),
        progress=False,
        max_messages=3,
        variants=("tone",),
        generalisation=False,
        whole_game=False,
    )
    run_experiment(settings)
    return out


def _walk(node):
    yield node
    for c in node["children"]:
        yield from _walk(c)


def test_fruit_tree_has_every_leaf_and_every_decision_policy(fruit_dir):
    """Every leaf of the export is a leaf of the tree; reach adds up under both
    policies; every decision finds its σ_CFR row in the policy export."""
    leaves, entry, header = read_subgame(fruit_dir, "tone", 1)
    tree = build_tree(leaves, entry["infosets"], num_seeds=2)
    nodes = list(_walk(tree))
    tips = [n for n in nodes if not n["children"]]
    assert len(tips) == len(leaves) and all("leaf" in n for n in tips)
    assert math.isclose(tree["reach"], 1.0, abs_tol=1e-9)
    assert math.isclose(sum(n["reach_llm"] for n in tips), 1.0, abs_tol=1e-9)
    assert math.isclose(sum(n["reach"] for n in tips), 1.0, abs_tol=1e-9)
    decisions = [n["decision"] for n in nodes if n["children"]]
    assert decisions and all(d["sigma_cfr"] is not None for d in decisions)
    # as many decisions as the acting players' information states in the export
    assert len(decisions) == len(entry["infosets"])
    for n in nodes:
        if n["children"]:
            sigma = n["decision"]["sigma_cfr"]
            assert set(sigma) == set(TONES) and math.isclose(sum(sigma.values()), 1.0)
            assert n["decision"]["sigma_llm"] == {t: float(t == "any") for t in TONES}
            # a child's CFR reach is the parent's times σ_CFR(tone) times 1/2 (seed)
            for c in n["children"]:
                want = n["reach"] * sigma[c["tone"]] / 2
                assert math.isclose(c["reach"], want, rel_tol=1e-6, abs_tol=1e-12)
    assert header["variant"] == "tone"


def test_fruit_page_embeds_the_tree(fruit_dir):
    page = fruit_page(fruit_dir, "tone", 0)
    data = json.loads(re.search(r'id="page-data">(.*?)</script>', page, re.S).group(1))
    assert data["kind"] == "fruit" and data["init"] == 0
    assert "not an LLM" in data["model"]
    assert data["leaves"] == sum(1 for n in _walk(data["tree"]) if not n["children"])


def test_fruit_view_errors_name_the_fix(fruit_dir):
    with pytest.raises(ResultsError, match=r"--variant: .*\(it has tone\)"):
        read_subgame(fruit_dir, "tone+gratr", 0)
    with pytest.raises(ResultsError, match=r"--init: no subgame 7 .* inits \[0, 1\]"):
        read_subgame(fruit_dir, "tone", 7)


def test_fruit_view_cli(fruit_dir, tmp_path):
    out = tmp_path / "page.html"
    cmd = ["fruit-trading", "view", str(fruit_dir)]
    ok = run_cli([*cmd, "--init", "1", "--out", str(out)], cwd=ROOT)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == str(out) and out.stat().st_size > 1000
    bad = run_cli([*cmd, "--out", str(tmp_path / "p.txt")], cwd=ROOT)
    assert bad.returncode != 0 and "--out: end the file name in .html" in bad.stderr


@in_browser
def test_fruit_page_shows_the_whole_tree(browser, fruit_dir, tmp_path):
    page = write_fruit_page(fruit_dir, "tone", 1, tmp_path / "fruit.html")
    browser.open(page)
    data = browser.eval("pageData()")
    assert browser.eval("document.querySelectorAll('.node').length") < data["nodes"]
    _shot(browser, "fruit_trading_view.png")
    browser.click("#expand-all")
    assert browser.eval("document.querySelectorAll('.node').length") == data["nodes"]
    assert browser.eval("document.querySelectorAll('.leaf').length") == data["leaves"]
    decisions = data["nodes"] - data["leaves"]
    assert browser.eval("document.querySelectorAll('table.decision').length") == decisions
    texts = browser.eval("[...document.querySelectorAll('.msg')].map(e => e.textContent)")
    assert data["tree"]["text"] in texts
    # the filter hides branches CFR almost never reaches
    browser.eval(
        "(() => { const s = document.querySelector('#threshold');"
        " s.value = '0.1'; s.dispatchEvent(new Event('change')); })()"
    )
    shown = browser.eval("[...document.querySelectorAll('.node')].filter(e => !e.hidden).length")
    assert 0 < shown < data["nodes"]


# --------------------------------------------------------------------------- Werewolf


def _gt(*argv: str, cwd: Path) -> str:
    """Runs ``gt-llm ARGV`` in this process (``tests/cli_runner.py``); fails the test on error."""
    run = run_cli(argv, cwd=cwd)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.fixture(scope="module")
def ww(tmp_path_factory) -> Path:
    """One scripted game, a 10-round game on 21 seats, a 3-game series and a 3-pair
    arena (scripted stand-in)."""
    d = tmp_path_factory.mktemp("ww_view")
    _gt("werewolf", "play", "--backend", "scripted", "--seed", "7", "--log", "g.jsonl", cwd=d)
    _gt(
        "werewolf",
        "play",
        "--backend",
        "scripted",
        # A seed whose game runs to the round limit (the stand-in's draws depend on the
        # prompts, so the seed moves when they change: 6 since claims offer only the roles
        # in play and choices are listed in each request's own order).
        "--seed",
        "6",
        "--roles",
        "werewolf:3,villager:16,seer:1,doctor:1",
        "--log",
        "long.jsonl",
        cwd=d,
    )
    _gt(
        "werewolf",
        "play",
        "--backend",
        "scripted",
        "--games",
        "3",
        "--out",
        "series",
        "--no-progress",
        cwd=d,
    )
    _gt(
        "werewolf",
        "arena",
        "--models",
        "gratr,dirichlet,native-rag",
        "--games",
        "1",
        "--out",
        "arena",
        "--no-progress",
        cwd=d,
    )
    return d


def _items(data, kind):
    return [i for i in data["items"] if i["k"] == kind]


def test_game_data_holds_every_statement_vote_death_and_answer(ww):
    records = read_records(ww / "g.jsonl")
    data = game_data(records)
    counts = log_counts(records)
    assert counts["statements"] > 0 and counts["votes"] > 0 and counts["deaths"] > 0
    speeches = _items(data, "speech")
    assert len(speeches) == counts["statements"]
    assert sum(len(i["votes"]) for i in _items(data, "votes")) == counts["votes"]
    assert sum(len(i["players"]) for i in _items(data, "deaths")) == counts["deaths"]
    texts = [r["text"] for r in records if r["type"] == "deception_statement"]
    assert [i["text"] for i in speeches] == texts
    peers = [r for r in records if r["type"] == "peer_analysis"]
    assert sum(len(i["peers"]) for i in speeches) == len(peers)
    # Every raw answer of the log is somewhere on the page, none twice.
    answers = sorted(r["answer"] for r in records if r["type"] == "llm_call")
    shown = [c["answer"] for i in data["items"] for c in i.get("calls", [])]
    shown += [q["answer"] for i in speeches for q in i["peers"] if "answer" in q]
    shown += [i["answer"] for i in _items(data, "scratchpad") if i.get("answer")]
    assert sorted(shown) == answers
    assert data["roles"] == next(r for r in records if r["type"] == "result")["roles"]
    assert "not an LLM" in data["model"]


def test_belief_snapshots_match_the_graph_command(ww):
    """The page's GRATR trust at a step is what `werewolf graph` rebuilds for that step;
    Dirichlet seats carry role distributions, retrieval seats their retrieved messages."""
    from games.werewolf.arena.graph import rebuild_trust_graph
    from games.werewolf.view.beliefs import replay_beliefs

    logs = sorted((ww / "arena" / "logs").rglob("*.jsonl"))
    seen = set()
    for log in logs:
        records = read_records(log)
        beliefs = replay_beliefs(records)
        assert not beliefs["skipped"]
        for snap in beliefs["snapshots"]:
            model = beliefs["models"][str(snap["seat"])]
            seen.add(model)
            if model == "gratr":
                graph = rebuild_trust_graph(records, snap["seat"], snap["step"])
                for e in snap["players"]:
                    want = graph.belief(f"Player {e['p'] + 1}").value
                    assert e["trust"] == pytest.approx(want, abs=0.006)
                edges = {(a, b) for a, b, _ in snap["edges"]}
                assert len(edges) == graph.graph.number_of_edges()
            elif model == "dirichlet":
                for e in snap["players"]:
                    assert sum(e["dist"].values()) == pytest.approx(1.0, abs=0.02)
            else:
                assert "retrieved" in snap and not snap["players"]
    assert seen == {"gratr", "dirichlet", "native-rag"}
    assert any(
        s.get("retrieved") for log in logs for s in replay_beliefs(read_records(log))["snapshots"]
    )


def test_game_page_size_and_injection_safety(ww, tmp_path):
    records = read_records(ww / "long.jsonl")
    assert records[-1]["rounds"] == 10  # the longest game the rules allow by default
    assert len(game_page(records).encode()) < 1_000_000
    records = read_records(ww / "g.jsonl")
    page = game_page(records)
    assert page.count("<script") == 3  # data, shared helpers, the page script
    evil = _inject(records)
    page = game_page(evil)
    assert page.count("<script") == 3 and "<img" not in page


EVIL_TEXT = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def _inject(records):
    """A copy of a log whose first statement, first raw answer and scratchpad hold markup."""
    out = [dict(r) for r in records]
    for kind, field in (
        ("deception_statement", "text"),
        ("llm_call", "answer"),
        ("scratchpad", "text"),
    ):
        r = next(r for r in out if r["type"] == kind)
        r[field] = EVIL_TEXT + " " + str(r[field])
    return out


def test_folder_kind_and_errors(ww, tmp_path):
    assert folder_kind(ww / "series") == "series"
    assert folder_kind(ww / "arena") == "arena"
    with pytest.raises(ValueError, match="not a Werewolf results folder"):
        folder_kind(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "result"}\n')
    with pytest.raises(ValueError, match="not a Werewolf log"):
        read_records(bad)
    # an interrupted game: the cut-off last line is dropped, the rest is shown
    cut = tmp_path / "cut.jsonl"
    text = (ww / "g.jsonl").read_text()
    cut.write_text(text[: len(text) // 2].rsplit("\n", 1)[0] + '\n{"type": "acti')
    data = game_data(read_records(cut))
    assert data["result"] is None and _items(data, "speech")


@in_browser
def test_game_page_in_the_browser(browser, ww, tmp_path):
    """Statements, votes and deaths on screen equal the log's; roles appear only when
    'reveal roles' is clicked; moving the slider changes the seats' suspicion."""
    records = read_records(ww / "g.jsonl")
    counts = log_counts(records)
    page = write_page(tmp_path / "game.html", game_page(records))
    seconds = browser.open(page)
    q = "document.querySelectorAll"
    assert browser.eval(f"{q}('.item.speech').length") == counts["statements"]
    assert browser.eval(f"{q}('.item.speech .statement').length") == counts["statements"]
    assert browser.eval(f"{q}('.vote').length") == counts["votes"]
    assert browser.eval(f"{q}('.death').length") == counts["deaths"]
    assert browser.eval(f"{q}('.exiled').length") == counts["exiles"]
    visible_roles = f"[...{q}('.roster .role')].filter(e => e.offsetParent !== null).length"
    visible_night = f"[...{q}('.item.night')].filter(e => e.offsetParent !== null).length"
    assert browser.eval(visible_roles) == 0 and browser.eval(visible_night) == 0
    roles = next(r for r in records if r["type"] == "result")["roles"]
    assert "werewolf" not in browser.eval(
        f"[...{q}('.roster .seat')].map(e => e.innerText).join(' ')"
    )
    browser.click("#reveal")
    _shot(browser, "werewolf_game.png")
    assert browser.eval(visible_roles) == len(roles)
    assert browser.eval(visible_night) > 0
    shown = browser.eval(f"[...{q}('.roster .role')].map(e => e.innerText)")
    assert shown == roles
    # The suspicion matrix at the first step is empty, at the last step it is not.
    filled = f"[...{q}('#matrix td.cell')].filter(e => e.textContent !== '').length"
    last = browser.eval(filled)
    browser.eval(
        "(() => { const s = document.querySelector('#step'); s.value = 0;"
        " s.dispatchEvent(new Event('input')); })()"
    )
    assert browser.eval(filled) == 0 < last
    assert seconds < 5


@in_browser
def test_model_markup_is_text_and_never_runs(browser, ww, tmp_path):
    records = _inject(read_records(ww / "g.jsonl"))
    page = write_page(tmp_path / "evil.html", game_page(records))
    browser.open(page, fragment="reveal")
    # open every <details> so the raw answers and the scratchpad are in the DOM
    browser.eval("document.querySelectorAll('details').forEach(d => { d.open = true; })")
    # their contents are built on the toggle event, a later task: wait for the last one
    browser.wait_for("[...document.querySelectorAll('details')].every(d => d.children.length > 1)")
    assert browser.eval("window.__pwned === undefined")
    assert browser.eval("document.querySelectorAll('img, main script').length") == 0
    statement = browser.eval("document.querySelector('.item.speech .statement').textContent")
    assert statement.startswith(EVIL_TEXT)
    answers = browser.eval("[...document.querySelectorAll('pre.answer')].map(e => e.textContent)")
    assert any(a.startswith(EVIL_TEXT) for a in answers)
    pads = browser.eval(
        "[...document.querySelectorAll('.scratchpad .text')].map(e => e.textContent)"
    )
    assert any(a.startswith(EVIL_TEXT) for a in pads)


@in_browser
def test_arena_game_page_draws_the_trust_graph_of_each_step(browser, ww, tmp_path):
    log = sorted((ww / "arena" / "logs").rglob("gratr_vs_dirichlet/*.jsonl"))[0]
    records = read_records(log)
    from games.werewolf.view.beliefs import replay_beliefs

    snaps = [s for s in replay_beliefs(records)["snapshots"] if "edges" in s]
    seat = snaps[-1]["seat"]
    page = write_page(tmp_path / "arena_game.html", game_page(records))
    browser.open(page, fragment=f"seat={seat}")
    mine = [s for s in snaps if s["seat"] == seat]
    for snap in (mine[0], mine[-1]):
        browser.open(page, fragment=f"seat={seat}&step={snap['step']}")
        assert browser.eval(
            "document.querySelectorAll('svg.graph circle.node').length"
        ) == ww_players(records)
        assert browser.eval("document.querySelectorAll('svg.graph line.edge').length") == len(
            snap["edges"]
        )
        trusts = browser.eval(
            "[...document.querySelectorAll('table.beliefs tr.belief-row td:nth-child(4)')].map(e => e.textContent)"
        )
        assert trusts == [f"{e['trust']:.2f}" for e in snap["players"]]
    browser.eval("document.querySelector('.minds').scrollTop = 380")  # the graph in view
    _shot(browser, "werewolf_arena_game.png")


def ww_players(records) -> int:
    return len(records[0]["players"])


def _arrived(browser: Browser) -> bool:
    """Whether the game page opened from the index is ready (False while it navigates)."""
    try:
        return bool(
            browser.eval(
                "location.href.endsWith('.html') && !location.href.endsWith('index.html') "
                "&& document.body && document.body.dataset.ready === '1'"
            )
        )
    except BrowserError as e:  # the evaluation raced the navigation: ask again
        if "navigated or closed" not in str(e):
            raise
        return False


@in_browser
def test_folder_index_pages_link_every_game(browser, ww, tmp_path):
    for folder, name in (
        ("series", "werewolf_series_index.png"),
        ("arena", "werewolf_arena_index.png"),
    ):
        index = write_folder_pages(ww / folder, tmp_path / folder / "index.html")
        logs = sorted((ww / folder / "logs").rglob("*.jsonl"))
        browser.open(index)
        assert browser.eval("document.querySelectorAll('tr.game-row').length") == len(logs)
        assert browser.eval("document.querySelectorAll('tr.rate').length") > 0
        _shot(browser, name)
        browser.click("tr.game-row a")
        deadline = time.monotonic() + 10
        while not _arrived(browser):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert browser.eval("document.querySelector('#back').getAttribute('href')").endswith(
            "index.html"
        )


@in_browser
def test_notebook_display_renders_the_game_in_a_sandboxed_frame(browser, ww, tmp_path):
    from games.werewolf.view import display_game

    records = read_records(ww / "g.jsonl")
    shown = display_game(ww / "g.jsonl", height=500)
    assert 'sandbox="allow-scripts"' in shown.data and "allow-same-origin" not in shown.data
    host = tmp_path / "notebook.html"
    host.write_text(f"<!DOCTYPE html><html><body><h1>notebook</h1>{shown.data}</body></html>")
    browser.call("Page.navigate", session=True, url=host.resolve().as_uri())
    n = browser.frame_eval("document.querySelectorAll('.item.speech').length")
    assert n == log_counts(records)["statements"]


# --------------------------------------------------------------------------- the day study


@pytest.fixture(scope="module")
def solve_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("solve_view")
    _gt(
        "werewolf",
        "solve",
        "--days",
        "2",
        "--iterations",
        "30",
        "--models",
        "none,gratr",
        "--out",
        "solve",
        "--no-progress",
        cwd=d,
    )
    return d / "solve"


@pytest.mark.slow  # a two-day solve with GRATR listeners
def test_decisions_export_agrees_with_the_summary(solve_dir):
    """Reach-weighted, decisions.json's tone and act probabilities per role group are
    summary.json's CFR strategies; first- and second-turn reaches sum to one per day
    (the first turn once per deal of the root chance node)."""
    doc = json.loads((solve_dir / "decisions.json").read_text())
    summary = json.loads((solve_dir / "summary.json").read_text())
    assert doc["format"] == "gt-llm.werewolf.day_decisions/2" and "not an LLM" in doc["label"]
    tones, acts = doc["tones"], doc["acts"]
    for model in ("none", "gratr"):
        days = [d for d in doc["days"] if d["opponent_model"] == model]
        assert len(days) == 2
        mass = {
            g: {"tones": [0.0] * len(tones), "acts": [0.0] * len(acts)}
            for g in ("werewolf", "village")
        }
        for d in days:
            first = [x for x in d["decisions"] if x["turn"] == 0]
            assert len(first) == d["deals"]["kept"]
            assert sum(x["reach"] for x in first) == pytest.approx(1.0)
            second = [x for x in d["decisions"] if x["turn"] == 1]
            assert sum(x["reach"] for x in second) == pytest.approx(1.0)
            for x in d["decisions"]:
                legal = [p for row in x["probs"] for p in row if p is not None]
                assert sum(legal) == pytest.approx(1.0)
                g = "werewolf" if x["role"] == "werewolf" else "village"
                for i, row in enumerate(x["probs"]):
                    for j, p in enumerate(row):
                        mass[g]["tones"][i] += x["reach"] * (p or 0.0)
                        mass[g]["acts"][j] += x["reach"] * (p or 0.0)
        for g, m in mass.items():
            want = summary["models"][model]["strategies"][g]["all"]
            total = sum(m["tones"])
            for kind, names in (("tones", tones), ("acts", acts)):
                for k, name in enumerate(names):
                    if want[kind][name] is None:
                        assert total == 0
                    else:
                        assert m[kind][k] / total == pytest.approx(want[kind][name], abs=1e-9)


@pytest.mark.slow  # a two-day solve with GRATR listeners
def test_view_command_on_every_input(ww, solve_dir, tmp_path):
    out = _gt(
        "werewolf", "view", str(ww / "g.jsonl"), "--out", str(tmp_path / "g.html"), cwd=tmp_path
    )
    assert out.strip() == str(tmp_path / "g.html")
    out = _gt(
        "werewolf",
        "view",
        str(ww / "arena"),
        "--out",
        str(tmp_path / "a" / "index.html"),
        cwd=tmp_path,
    )
    assert "3 game pages beside it" in out
    assert len(list((tmp_path / "a").rglob("game_*.html"))) == 3
    out = _gt(
        "werewolf", "view", str(solve_dir), "--out", str(tmp_path / "days.html"), cwd=tmp_path
    )
    assert (tmp_path / "days.html").stat().st_size > 1000
    for argv, message in (
        ([str(tmp_path / "nope")], "no such log or folder"),
        ([str(tmp_path)], "not a Werewolf results folder"),
        ([str(ww / "g.jsonl"), "--out", "g.txt"], "--out: end the file name in .html"),
    ):
        run = run_cli(["werewolf", "view", *argv], cwd=tmp_path)
        assert run.returncode != 0 and message in run.stderr and "Traceback" not in run.stderr


@in_browser
@pytest.mark.slow  # a two-day solve with GRATR listeners
def test_solve_page_shows_every_decision_of_a_day(browser, solve_dir, tmp_path):
    from games.werewolf.view.solve import write_solve_page

    doc = json.loads((solve_dir / "decisions.json").read_text())
    page = write_solve_page(solve_dir, tmp_path / "days.html")
    browser.open(page)
    _shot(browser, "werewolf_day_study.png")
    seeds = sorted(
        {d["game_seed"] for d in doc["days"]},
        key=lambda s: [d["game_seed"] for d in doc["days"]].index(s),
    )
    assert browser.eval("document.querySelectorAll('tr.day-row').length") == len(seeds)
    for k, seed in enumerate(seeds):
        browser.click(f"tr.day-row:nth-child({k + 2})")
        browser.eval("document.querySelectorAll('details.more').forEach(d => { d.open = true; })")
        want = sum(len(d["decisions"]) for d in doc["days"] if d["game_seed"] == seed)
        # <details> fill on their toggle event, which the browser dispatches as a later task
        browser.wait_for(f"document.querySelectorAll('.decision-card').length >= {want}")
        assert browser.eval("document.querySelectorAll('.decision-card').length") == want
        cells = len(doc["tones"]) * len(doc["acts"])
        assert (
            browser.eval("document.querySelectorAll('.decision-card td.prob').length")
            == want * cells
        )
        assert browser.eval("document.querySelector('#day h2').textContent").endswith(
            f"seed {seed}"
        )
