"""Pure rules of the fruit-trading game (no pyspiel, no LLM)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from games.fruit_trading.rules import (
    FRUITS,
    NAMES,
    TONES,
    PrivateInfo,
    Trade,
    basket_text,
    fruit_index,
    fruit_word,
    make_scenario,
    parse_basket,
    parse_trade_lines,
    trade_summary_lines,
)


def _draws(init: int, seed: int = 0):
    """The three endowments and three valuations drawn for an initialisation."""
    rng = np.random.default_rng([seed, init])
    endowments = rng.integers(1, 3, size=(3, len(FRUITS)))
    valuations = rng.integers(0, 5, size=(3, len(FRUITS)))
    return {tuple(int(x) for x in e) for e in endowments}, {
        tuple(int(x) for x in v) for v in valuations
    }


def test_make_scenario_is_deterministic_within_a_process():
    for i in range(20):
        assert make_scenario(i) == make_scenario(i)
        assert make_scenario(i, seed=7) == make_scenario(i, seed=7)
    # Different initialisations are not all the same scenario.
    assert len({make_scenario(i).to_dict().__repr__() for i in range(20)}) > 15


def test_make_scenario_is_deterministic_across_processes(child_env):
    code = (
        "import json; from games.fruit_trading.rules import make_scenario; "
        "print(json.dumps([make_scenario(i, seed=s).to_dict() for s in (0, 3) for i in range(12)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env, check=True
    ).stdout
    here = [make_scenario(i, seed=s).to_dict() for s in (0, 3) for i in range(12)]
    assert json.loads(out) == here


def test_make_scenario_ranges_types_and_draws():
    tones_seen = set()
    for seed in (0, 1):
        for i in range(60):
            sc = make_scenario(i, seed=seed)
            assert sc.init == i
            assert sc.opening_tone in TONES
            tones_seen.add(sc.opening_tone)
            endowments, valuations = _draws(i, seed)
            names = [p.name for p in sc.players]
            assert len(set(names)) == 2 and all(n in NAMES for n in names)
            for p in sc.players:
                assert isinstance(p.endowment, tuple) and isinstance(p.valuation, tuple)
                assert len(p.endowment) == len(p.valuation) == 3
                assert all(type(x) is int for x in p.endowment + p.valuation)
                assert all(x in (1, 2) for x in p.endowment)
                assert all(0 <= x <= 4 for x in p.valuation)
                # Each player's info is one of the three drawn per initialisation.
                assert p.endowment in endowments
                assert p.valuation in valuations
    assert tones_seen == set(TONES)


def test_make_scenario_seed_changes_scenarios_and_negative_init_fails():
    a = [make_scenario(i, seed=0) for i in range(10)]
    b = [make_scenario(i, seed=1) for i in range(10)]
    assert a != b
    with pytest.raises(ValueError, match="init"):
        make_scenario(-1)


def test_trade_payoff_by_hand():
    info = PrivateInfo("Alice", endowment=(2, 2, 1), valuation=(3, 1, 2))
    bob = PrivateInfo("Bob", endowment=(2, 1, 1), valuation=(1, 4, 0))
    # Alice gives 1 banana and receives 2 apples: 2*3 - 1*1 = 5.
    trade = Trade(gives=((0, 1, 0), (2, 0, 0)))
    assert trade.receives(0) == (2, 0, 0)
    assert trade.receives(1) == (0, 1, 0)
    assert trade.payoff(0, info) == 5
    # Bob receives 1 banana (4) and gives 2 apples (2*1): 2.
    assert trade.payoff(1, bob) == 2
    assert trade.feasible([info, bob])
    assert not trade.is_empty()
    # Bob has only 1 banana: he cannot give 2.
    assert not Trade(gives=((0, 0, 0), (0, 2, 0))).feasible([info, bob])
    assert Trade(gives=((0, 0, 0), (0, 0, 0))).is_empty()
    # Value of a basket is the dot product with the valuation.
    assert info.value((1, 2, 3)) == 3 + 2 + 6


def test_fruit_words():
    assert fruit_word("apples", 1) == "apple"
    assert fruit_word("apples", 2) == "apples"
    assert fruit_word("oranges", 0) == "oranges"
    assert fruit_index("Banana") == 1
    assert fruit_index(" ORANGES ") == 2
    with pytest.raises(ValueError, match="unknown fruit"):
        fruit_index("pears")


@pytest.mark.parametrize(
    "counts, text",
    [
        ((0, 0, 0), "nothing"),
        ((1, 0, 0), "1 apple"),
        ((0, 2, 0), "2 bananas"),
        ((1, 0, 2), "1 apple and 2 oranges"),
        ((2, 1, 1), "2 apples, 1 banana and 1 orange"),
    ],
)
def test_basket_text_and_parse_basket(counts, text):
    assert basket_text(counts) == text
    assert parse_basket(text) == counts


def test_parse_basket_sums_and_ignores_other_words():
    assert parse_basket("3 Apples, then 1 apple and 2 bananas, 5 pears") == (4, 2, 0)
    assert parse_basket("no fruit at all") == (0, 0, 0)


def test_trade_summary_round_trip_all_small_trades():
    names = ("Alice", "Bob")
    rng = np.random.default_rng(0)
    for _ in range(200):
        g = rng.integers(0, 3, size=(2, 3))
        trade = Trade(gives=(tuple(int(x) for x in g[0]), tuple(int(x) for x in g[1])))
        text = trade_summary_lines(trade, names)
        assert text.count("\n") == 1
        assert text.startswith("Player Alice: Receives ")
        assert parse_trade_lines(text, names) == trade
        # Lines in the other order parse to the same trade.
        swapped = "\n".join(reversed(text.split("\n")))
        assert parse_trade_lines(swapped, names) == trade


def test_trade_summary_exact_text():
    trade = Trade(gives=((0, 1, 0), (2, 0, 0)))
    assert trade_summary_lines(trade, ("Alice", "Bob")) == (
        "Player Alice: Receives 2 apples Gives 1 banana\n"
        "Player Bob: Receives 1 banana Gives 2 apples"
    )


def test_parse_trade_lines_errors():
    names = ("Alice", "Bob")
    with pytest.raises(ValueError, match="do not match"):
        parse_trade_lines(
            "Player Alice: Receives 2 apples Gives 1 banana\n"
            "Player Bob: Receives 1 banana Gives 1 apple",
            names,
        )
    with pytest.raises(ValueError, match="expected a line"):
        parse_trade_lines("Player Alice: Receives 2 apples Gives 1 banana", names)
    with pytest.raises(ValueError, match="expected a line"):
        # Lines for players that are not in the game do not count.
        parse_trade_lines(
            "Player Alice: Receives 2 apples Gives 1 banana\n"
            "Player Carol: Receives 1 banana Gives 2 apples",
            names,
        )


def test_most_wanted_with_and_without_ties():
    def mw(v):
        return PrivateInfo("X", (1, 1, 1), v).most_wanted()

    assert mw((3, 1, 2)) == ("apples",)
    assert mw((0, 4, 1)) == ("bananas",)
    assert mw((2, 1, 2)) == ("apples", "oranges")
    assert mw((0, 0, 0)) == FRUITS


def test_describe_lists_endowment_and_valuation():
    text = PrivateInfo("X", (1, 2, 1), (4, 0, 3)).describe()
    assert "Fruit Endowment:\napples: 1\nbananas: 2\noranges: 1" in text
    assert "Fruit Valuations:\napples: 4\nbananas: 0\noranges: 3" in text


def test_fixed_names_and_shared_pools_keep_the_rest_of_the_scenario():
    from games.fruit_trading.rules import FIXED_NAMES

    for init in range(10):
        paper = make_scenario(init, seed=3)
        fixed = make_scenario(init, seed=3, names="fixed")
        assert tuple(p.name for p in fixed.players) == FIXED_NAMES
        assert fixed.opening_tone == paper.opening_tone
        assert [p.valuation for p in fixed.players] == [p.valuation for p in paper.players]
    pooled = [make_scenario(i, seed=3, pools="shared") for i in range(30)]
    # Three endowments and three valuations for every initialisation together.
    assert len({p.endowment for s in pooled for p in s.players}) <= 3
    assert len({p.valuation for s in pooled for p in s.players}) <= 3
    assert [s.opening_tone for s in pooled] == [
        make_scenario(i, seed=3).opening_tone for i in range(30)
    ]
    with pytest.raises(ValueError, match="make_scenario: names"):
        make_scenario(0, names="odd")
