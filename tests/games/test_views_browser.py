"""Every page type opened from disk in a real headless Chromium (skipped without one).

The pages are built from small scripted runs (the rule-based stand-in, not an
LLM), loaded as ``file://`` URLs, and checked after their scripts ran: the
DOM holds what the data holds, controls work with real mouse clicks, and
model text never becomes markup. ``GT_LLM_SCREENSHOTS=DIR`` also saves a
screenshot of each page type (how the pictures in ``docs/`` are made).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from games.fruit_trading.experiment import ExperimentSettings, run_experiment
from games.fruit_trading.view import write_fruit_page
from tests.headless_chromium import Browser, find_chromium

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no Chromium found (apt-get install chromium, or set GT_LLM_CHROMIUM)",
    ),
]


@pytest.fixture(scope="module")
def browser():
    with Browser(CHROMIUM) as b:
        yield b


def _shot(browser: Browser, name: str) -> None:
    folder = os.environ.get("GT_LLM_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.screenshot(Path(folder) / name)


@pytest.fixture(scope="module")
def fruit_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fruit_browser")
    run_experiment(
        ExperimentSettings(
            inits=2,
            iterations=30,
            out=str(out),
            progress=False,
            max_messages=3,
            variants=("tone",),
            generalisation=False,
            whole_game=False,
        )
    )
    return out


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
