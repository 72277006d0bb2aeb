"""How long the result pages take to open in a real browser, and how big they are.

Builds, with the scripted stand-in (rule-based, not an LLM):

* a ``--games``-game series (``werewolf play --games N``, default 200) and its
  index page (:func:`games.werewolf.view.index.write_folder_pages`, every
  game's page written beside it);
* a 10-round game: seed 8 on a 21-seat table (3 werewolves, 16 villagers,
  seer, doctor), the longest game the stand-in plays under the default
  ``--max-rounds 10`` among the seeds we tried;
* a 22-seat arena game (gratr vs dirichlet, seed 8, 7 rounds): the largest
  page (every seat's opponent model at every step);

then opens each page from disk in headless Chromium (``tests/headless_chromium.py``),
best of ``--repeats``: the wall time from navigation until the page's scripts
marked it rendered, and the page's own script time (``data-render-ms``). The
reference is a blank page of the same template opened the same way in the same
browser; the ratios say how much of the time is the page's own. Prints sizes
in bytes.

Usage::

    python -m benchmarks.views [--games 200] [--repeats 3] [--keep DIR]

(as a module from the repository root: run as a script, ``benchmarks/solvers.py``
would shadow the ``solvers`` package)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from games.engine.html_page import render_page, write_page
from games.werewolf.view.index import write_folder_pages
from games.werewolf.view.page import write_game_page
from tests.headless_chromium import Browser, find_chromium

ROOT = Path(__file__).resolve().parents[1]


def gt(*argv: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        [sys.executable, "-m", "gt_llm.cli", *argv],
        cwd=cwd,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def timed_open(browser: Browser, page: Path, repeats: int) -> tuple[float, float]:
    """Best wall time (s) and the page's own render time (ms) at that run."""
    best = (float("inf"), 0.0)
    for _ in range(repeats):
        wall = browser.open(page)
        own = float(browser.eval("document.body.dataset.renderMs"))
        best = min(best, (wall, own))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", default=None, help="build in this folder and keep it")
    args = ap.parse_args()
    chromium = find_chromium()
    if chromium is None:
        sys.exit("benchmarks/views.py: no Chromium (apt-get install chromium)")
    work = Path(args.keep or tempfile.mkdtemp(prefix="gt-llm-views-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if not (work / "series" / "summary.json").exists():
        gt(
            "werewolf",
            "play",
            "--backend",
            "scripted",
            "--games",
            str(args.games),
            "--out",
            "series",
            "--no-progress",
            cwd=work,
        )
    if not (work / "long.jsonl").exists():
        gt(
            "werewolf",
            "play",
            "--backend",
            "scripted",
            "--seed",
            "8",
            "--roles",
            "werewolf:3,villager:16,seer:1,doctor:1",
            "--log",
            "long.jsonl",
            cwd=work,
        )
    if not (work / "arena" / "arena.json").exists():
        gt(
            "werewolf",
            "arena",
            "--models",
            "gratr,dirichlet",
            "--games",
            "1",
            "--seed",
            "8",
            "--roles",
            "werewolf:3,villager:16,seer:1,doctor:1,guard:1",
            "--out",
            "arena",
            "--no-progress",
            cwd=work,
        )
    built = time.perf_counter() - t0

    t0 = time.perf_counter()
    index = write_folder_pages(work / "series", work / "series_view" / "index.html")
    t_index = time.perf_counter() - t0
    t0 = time.perf_counter()
    long_page = write_game_page(work / "long.jsonl", work / "long.html")
    t_long = time.perf_counter() - t0
    arena_log = next((work / "arena" / "logs").rglob("*.jsonl"))
    t0 = time.perf_counter()
    arena_page = write_game_page(arena_log, work / "arena_game.html")
    t_arena = time.perf_counter() - t0
    blank = write_page(
        work / "blank.html", render_page(title="blank", data={}, scripts=["ready();"])
    )
    rounds = {}
    for name, log in (("long", work / "long.jsonl"), ("arena", arena_log)):
        last = log.read_text().rstrip().rsplit("\n", 1)[-1]
        rounds[name] = (
            last.split('"rounds": ', 1)[1].split(",", 1)[0] if '"rounds"' in last else "?"
        )

    with Browser(chromium) as browser:
        ref, ref_own = timed_open(browser, blank, args.repeats)
        rows = [
            (f"series index, {args.games} games", index, t_index),
            (f"game page, 21 seats, {rounds['long']} rounds", long_page, t_long),
            (f"arena game page, 22 seats, {rounds['arena']} rounds", arena_page, t_arena),
        ]
        print(f"load average {os.getloadavg()[0]:.2f}; inputs built in {built:.1f} s in {work}")
        print(f"reference: blank page opens in {ref * 1000:.0f} ms (own scripts {ref_own:.1f} ms)")
        print(
            f"{'page':44s} {'bytes':>9s} {'write s':>8s} {'open ms':>8s} {'x ref':>6s} {'own ms':>7s}"
        )
        for name, page, write_s in rows:
            wall, own = timed_open(browser, page, args.repeats)
            print(
                f"{name:44s} {page.stat().st_size:9d} {write_s:8.2f} {wall * 1000:8.0f} "
                f"{wall / ref:6.1f} {own:7.1f}"
            )


if __name__ == "__main__":
    main()
