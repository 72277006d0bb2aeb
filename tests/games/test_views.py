"""Pages without a browser: the shared template's escaping and the fruit-trading tree."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from games.engine.html_page import render_page, script_json
from games.fruit_trading.experiment import ExperimentSettings, run_experiment
from games.fruit_trading.rules import TONES
from games.fruit_trading.view import build_tree, fruit_page, read_subgame
from solvers.results import ResultsError

ROOT = Path(__file__).resolve().parents[2]
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
    cmd = [sys.executable, "-m", "gt_llm.cli", "fruit-trading", "view", str(fruit_dir)]
    ok = subprocess.run(
        [*cmd, "--init", "1", "--out", str(out)], capture_output=True, text=True, cwd=ROOT
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == str(out) and out.stat().st_size > 1000
    bad = subprocess.run(
        [*cmd, "--out", str(tmp_path / "p.txt")], capture_output=True, text=True, cwd=ROOT
    )
    assert bad.returncode != 0 and "--out: end the file name in .html" in bad.stderr
