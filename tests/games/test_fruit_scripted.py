"""The scripted stand-in's fruit-trading answers: the game's decisions must matter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from games.engine.calls import run_sync
from games.fruit_trading import dialogue, prompts
from games.fruit_trading import scripted as rules_scripted
from games.fruit_trading.rules import FRUITS, PrivateInfo, make_scenario, parse_basket
from gt_llm.parsing import parse_yes_no

ROOT = Path(__file__).resolve().parents[2]
NUM_SCENARIOS = 40
SEEDS = range(4)


def _opening_fields(me: PrivateInfo, opponent: PrivateInfo, tone: str, believed=()) -> dict:
    believed = list(believed)
    return {
        "speaker": me.name,
        "opponent": opponent.name,
        "private_info": me.describe(),
        "endowment": list(me.endowment),
        "valuation": list(me.valuation),
        "tone": tone,
        "believed_fruits": believed,
        "steering": prompts.steering_text(tone, opponent.name, believed),
    }


def _proposal(text: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(speaker gives, speaker receives), parsed from the message text."""
    hits = list(rules_scripted._PROPOSAL.finditer(text))
    assert hits, f"no proposal in {text!r}"
    m = hits[-1]
    return parse_basket(m.group("give")), parse_basket(m.group("recv"))


def _open(model, me, opponent, tone, seed, believed=()):
    req = prompts.OPENING.render(_opening_fields(me, opponent, tone, believed), seed=seed)
    return model.complete(req).text


def test_assertive_asks_more_and_offers_less_than_submissive(scripted):
    asked = {"assertive": [], "submissive": []}
    offered = {"assertive": [], "submissive": []}
    for i in range(NUM_SCENARIOS):
        sc = make_scenario(i)
        me, opp = sc.players
        for seed in SEEDS:
            for tone in asked:
                gives, recv = _proposal(_open(scripted, me, opp, tone, seed))
                assert sum(gives) >= 1 and sum(recv) >= 1
                # The speaker never offers more than it has.
                assert all(g <= e for g, e in zip(gives, me.endowment, strict=True))
                asked[tone].append(sum(recv))
                offered[tone].append(sum(gives))
    assert np.mean(asked["assertive"]) > np.mean(asked["submissive"]) + 0.5
    assert np.mean(offered["assertive"]) < np.mean(offered["submissive"]) - 0.3
    # Per proposal, too: an assertive speaker never asks for less.
    assert min(asked["assertive"]) >= max(asked["submissive"])


def test_correct_belief_makes_proposals_better_for_the_opponent(scripted):
    gain = {"belief": [], "none": []}
    offered_wanted = {"belief": 0, "none": 0}
    for i in range(NUM_SCENARIOS):
        sc = make_scenario(i)
        me, opp = sc.players
        truth = opp.most_wanted()
        for seed in SEEDS:
            for tone in ("assertive", "calm", "submissive"):
                for key, believed in (("belief", truth), ("none", ())):
                    gives, recv = _proposal(_open(scripted, me, opp, tone, seed, believed))
                    # The opponent receives what the speaker gives.
                    gain[key].append(opp.value(gives) - opp.value(recv))
                    offered_wanted[key] += any(gives[FRUITS.index(f)] > 0 for f in truth)
    assert np.mean(gain["belief"]) > np.mean(gain["none"]) + 0.3
    assert offered_wanted["belief"] > offered_wanted["none"]


def test_steering_text_has_tone_and_belief_lines():
    assert prompts.steering_text("assertive", "Bob", ()) == "Tone: Use an assertive tone."
    assert prompts.steering_text("calm", "Bob", ()) == "Tone: Use a calm tone."
    assert prompts.steering_text("any", "Bob", ["apples", "oranges"]) == (
        "Tone: Use any tone.\nBelief: You believe that Bob wants apples or oranges."
    )


def _message_texts(model, n_seeds=8):
    sc = make_scenario(2)
    cfg = dialogue.Config(max_messages=4)
    state = run_sync(dialogue.opening_step(dialogue.initial_state(sc, cfg)), model)
    out = {}
    for tone in ("assertive", "calm", "submissive", "any"):
        for seed in range(n_seeds):
            req = dialogue._message_request(state, state.next_speaker(), tone, seed)
            assert req.task == prompts.MESSAGE.task
            out[f"{tone}/{seed}"] = model.complete(req).text
    return out


def test_scripted_answers_vary_with_seed_for_messages(scripted):
    texts = _message_texts(scripted)
    for tone in ("assertive", "calm", "submissive", "any"):
        assert len({texts[f"{tone}/{s}"] for s in range(8)}) > 1, tone
    # And with the tone.
    assert texts["assertive/0"] != texts["submissive/0"]


def test_scripted_answers_identical_across_processes(scripted, child_env):
    # The child loads this very file and runs the same function with its own model.
    code = (
        "import importlib.util, json, sys, gt_llm\n"
        "spec = importlib.util.spec_from_file_location('fruit_scripted_child', sys.argv[1])\n"
        "mod = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(mod)\n"
        "print(json.dumps(mod._message_texts(gt_llm.load_model('scripted'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, __file__],
        capture_output=True,
        text=True,
        env=child_env,
        cwd=ROOT,
        check=True,
    ).stdout
    assert json.loads(out) == _message_texts(scripted)


def _tr(turns, names):
    return [{"sender": names[s], "receiver": names[1 - s], "text": t} for s, t in turns]


def test_message_accepts_good_offers_and_counters_bad_ones(scripted):
    me = PrivateInfo("Alice", (2, 2, 2), (4, 0, 1))
    opp = PrivateInfo("Bob", (2, 2, 2), (0, 4, 1))
    names = (me.name, opp.name)
    good = "Hi Alice,\n\nI would like to trade you 2 apples for 1 banana. Fair?\n\nBest,\nBob"
    bad = "Hi Alice,\n\nI would like to trade you 1 banana for 2 apples. Fair?\n\nBest,\nBob"
    for offer, should_accept in ((good, True), (bad, False)):
        accepted = 0
        for seed in range(10):
            fields = _opening_fields(me, opp, "assertive")
            fields["turns"] = _tr([(1, offer)], names)
            fields["dialogue"] = prompts.render_dialogue(fields["turns"])
            text = scripted.complete(prompts.MESSAGE.render(fields, seed=seed)).text
            accepted += rules_scripted._ACCEPTED.search(text) is not None
        assert accepted == (10 if should_accept else 0)


def test_evaluation_chain_on_an_accepted_offer(scripted):
    """Summary -> agreement -> trade -> payoff calculation -> number, by the scripted model."""
    names = ("Alice", "Bob")
    alice = PrivateInfo("Alice", (2, 2, 2), (4, 0, 1))
    turns = _tr(
        [
            (1, "Hi Alice,\n\nI would like to trade you 2 apples for 1 banana. Ok?\n\nBest,\nBob"),
            (0, "Fine. I accept your offer: 2 apples for 1 banana. Deal.\n\nBest,\nAlice"),
        ],
        names,
    )
    dialogue_text = prompts.render_dialogue(turns)

    def ask(tpl, fields):
        return scripted.complete(tpl.render(fields, seed=0)).text

    summary = ask(prompts.SUMMARIZE_DIALOGUE, {"dialogue": dialogue_text, "turns": turns})
    assert "accepted the trade" in summary
    assert parse_yes_no(ask(prompts.AGREEMENT, {"summary": summary})) is True
    trade = ask(
        prompts.SUMMARIZE_TRADE, {"summary": summary, "player_a": "Alice", "player_b": "Bob"}
    )
    assert trade == (
        "Player Alice: Receives 2 apples Gives 1 banana\n"
        "Player Bob: Receives 1 banana Gives 2 apples"
    )
    calc = ask(
        prompts.COMPUTE_PAYOFF,
        {
            "name": "Alice",
            "private_info": alice.describe(),
            "trade": trade,
            "valuation": list(alice.valuation),
        },
    )
    value = ask(prompts.EXTRACT_PAYOFF, {"name": "Alice", "calculation": calc})
    assert float(value) == 8.0  # 2 apples * 4 - 1 banana * 0
    # A counter-proposal is not an agreement.
    turns2 = turns[:1]
    summary2 = ask(
        prompts.SUMMARIZE_DIALOGUE,
        {"dialogue": prompts.render_dialogue(turns2), "turns": turns2},
    )
    assert parse_yes_no(ask(prompts.AGREEMENT, {"summary": summary2})) is False


@pytest.mark.parametrize("opponent_asks", ["apples", "oranges"])
def test_guess_fruit_reads_what_the_opponent_asks_for(scripted, opponent_asks):
    names = ("Alice", "Bob")
    turns = _tr(
        [
            (0, "Hi Bob,\n\nI would like to trade you 1 banana for 1 orange.\n\nBest,\nAlice"),
            (
                1,
                f"Hi Alice,\n\nI would like to trade you 1 banana for 2 {opponent_asks}.\n\nBest,\nBob",
            ),
        ],
        names,
    )
    right = 0
    for seed in range(40):
        req = prompts.GUESS_FRUIT.render(
            {
                "observer": "Alice",
                "opponent": "Bob",
                "dialogue": prompts.render_dialogue(turns),
                "turns": turns,
            },
            seed=seed,
        )
        right += dialogue.parse_fruit(scripted.complete(req).text) == opponent_asks
    # Mostly right (a 15% slip rate, sometimes still right by chance).
    assert right >= 28
