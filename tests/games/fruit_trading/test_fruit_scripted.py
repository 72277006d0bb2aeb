"""The scripted stand-in's fruit-trading answers (rules-v2): steering must matter.

Each test checks one way in which the tone or the belief changes what is
said or what the other side does, on many scenarios and seeds, plus the
contract with the scripted backend (the noise depends only on the declared
fields; the belief acts only through the rules).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from games.engine.calls import run_sync
from games.fruit_trading import dialogue, parsing, prompts, scripted_trades
from games.fruit_trading import scripted as rules_scripted
from games.fruit_trading.rules import FRUITS, PrivateInfo, make_scenario, parse_basket
from gt_llm.parsing import parse_yes_no

ROOT = Path(__file__).resolve().parents[3]
NUM_SCENARIOS = 40
SEEDS = range(4)
CONCRETE = ("assertive", "calm", "submissive")


def _fields(
    me: PrivateInfo, opponent: PrivateInfo, tone: str, believed=(), turns=None, trust=None
) -> dict:
    believed = list(believed)
    fields = {
        "player": 0,
        "speaker": me.name,
        "opponent": opponent.name,
        "private_info": me.describe(),
        "endowment": list(me.endowment),
        "valuation": list(me.valuation),
        "tone": tone,
        "believed_fruits": believed,
        "belief_trust": trust,
        "steering": prompts.steering_text(tone, opponent.name, believed, trust),
    }
    if turns is not None:
        fields["turns"] = turns
        fields["dialogue"] = prompts.render_dialogue(turns)
    return fields


def _render(fields: dict, seed: int):
    tpl = prompts.MESSAGE if "turns" in fields else prompts.OPENING
    return tpl.render(fields, seed=seed)


def _proposal(text: str) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(speaker gives, speaker receives), parsed from the message text."""
    hits = list(rules_scripted._PROPOSAL.finditer(text))
    assert hits, f"no proposal in {text!r}"
    m = hits[-1]
    return parse_basket(m.group("give")), parse_basket(m.group("recv"))


def _accepted(text: str) -> bool:
    return rules_scripted._ACCEPTED.search(text) is not None


def _tr(turns, names):
    return [{"sender": names[s], "receiver": names[1 - s], "text": t} for s, t in turns]


def test_tone_changes_the_offer(scripted):
    """Assertive offers keep more for the speaker; submissive ones give more away."""
    own = {t: [] for t in CONCRETE}
    changed = 0
    for i in range(NUM_SCENARIOS):
        me, opp = make_scenario(i).players
        for seed in SEEDS:
            offers = {}
            for tone in CONCRETE:
                gives, recv = _proposal(
                    scripted.complete(_render(_fields(me, opp, tone), seed)).text
                )
                assert sum(gives) >= 1 and sum(recv) >= 1
                # The speaker never offers more than it has.
                assert all(g <= e for g, e in zip(gives, me.endowment, strict=True))
                own[tone].append(me.value(recv) - me.value(gives))
                offers[tone] = (gives, recv)
            changed += len(set(offers.values())) > 1
    means = {t: np.mean(v) for t, v in own.items()}
    assert means["assertive"] > means["calm"] > means["submissive"], means
    # Not only on average: the tone changes the offer in most scenario/seed pairs.
    assert changed >= 0.6 * NUM_SCENARIOS * len(SEEDS)


def test_belief_changes_the_offer(scripted):
    """A (correct) belief makes calm and submissive offers better for the opponent."""
    gain = {"belief": [], "none": []}
    changed = 0
    for i in range(NUM_SCENARIOS):
        me, opp = make_scenario(i).players
        truth = opp.most_wanted()
        for seed in SEEDS:
            for tone in ("calm", "submissive"):
                texts = {}
                for key, believed in (("belief", truth), ("none", ())):
                    texts[key] = scripted.complete(
                        _render(_fields(me, opp, tone, believed), seed)
                    ).text
                    gives, recv = _proposal(texts[key])
                    gain[key].append(opp.value(gives) - opp.value(recv))
                changed += _proposal(texts["belief"]) != _proposal(texts["none"])
    assert np.mean(gain["belief"]) > np.mean(gain["none"]) + 0.3
    assert changed >= 0.2 * NUM_SCENARIOS * len(SEEDS) * 2


def test_trust_in_the_claims_steers_how_far_the_belief_counts(scripted):
    """GRATR's trust line: full trust offers as a plain belief does, full distrust as
    no belief does, and the trust is stated in the prompt."""
    same_full = same_none = differ = 0
    for i in range(NUM_SCENARIOS):
        me, opp = make_scenario(i).players
        truth = opp.most_wanted()
        for seed in SEEDS:

            def offer(believed, trust, me=me, opp=opp, seed=seed):
                req = _render(_fields(me, opp, "submissive", believed, trust=trust), seed)
                return _proposal(scripted.complete(req).text)

            plain, none = offer(truth, None), offer((), None)
            same_full += offer(truth, 1.0) == plain
            same_none += offer(truth, -1.0) == none
            differ += plain != none
    n = NUM_SCENARIOS * len(SEEDS)
    assert same_full == n and same_none == n
    assert differ > 0  # otherwise the two checks above prove nothing
    text = prompts.steering_text("calm", "Bob", ["apples"], -0.5, "adversary")
    assert "Trust: Your trust in Bob's claims is -0.50" in text


def test_belief_acts_only_through_the_rules(scripted):
    """Where the rules do not use the belief (accepting an offer), it changes nothing."""
    me = PrivateInfo("Alice", (2, 2, 2), (4, 0, 1))
    opp = PrivateInfo("Bob", (2, 2, 2), (0, 4, 1))
    names = (me.name, opp.name)
    good = "Hi Alice,\n\nI would like to trade you 2 apples for 1 banana.\n\nBest,\nBob"
    turns = _tr([(1, good)], names)
    accepted = 0
    for seed in range(20):
        texts = [
            scripted.complete(_render(_fields(me, opp, "calm", b, turns), seed)).text
            for b in ((), ("bananas",), ("apples", "oranges"))
        ]
        # An acceptance (the belief plays no part) is the same text with or without it;
        # a misread offer is countered, and the counter may follow the belief.
        if any(_accepted(t) for t in texts):
            assert len(set(texts)) == 1
            accepted += 1
    assert accepted >= 12


def test_noise_reads_only_declared_fields(scripted):
    """Changing a field the rules do not read leaves every answer identical."""
    me, opp = make_scenario(3).players
    names = (me.name, opp.name)
    turns = _tr([(1, "Hi,\n\nI would like to trade you 1 apple for 1 banana.\n\nBest,\nX")], names)
    for seed in range(6):
        for tone in ("any", "calm"):
            base = _fields(me, opp, tone, turns=turns)
            ref = scripted.complete(_render(base, seed)).text
            for key, junk in (
                ("steering", "Tone: shout."),
                ("private_info", "nothing"),
                ("dialogue", "(another rendering)"),
            ):
                assert scripted.complete(_render({**base, key: junk}, seed)).text == ref, key
    # The evaluation tasks too: the judge reads the turns, not the rendered dialogue nor the
    # order of its labels.
    answers = {
        scripted.complete(
            prompts.AGREEMENT.render(
                {"dialogue": text, "turns": turns, "labels": list(order),
                 "labels_text": prompts.labels_text(order)},
                seed=0,
            )
        ).text
        for text in ("a", "b")
        for order in prompts.LABEL_ORDERS
    }  # fmt: skip
    assert len(answers) == 1
    guess = {
        "player": 0,
        "observer": me.name,
        "opponent": opp.name,
        "dialogue": "a",
        "turns": turns,
    }
    assert (
        scripted.complete(prompts.GUESS_FRUIT.render(guess, seed=0)).text
        == scripted.complete(
            prompts.GUESS_FRUIT.render({**guess, "observer": "Zed", "dialogue": "b"}, seed=0)
        ).text
    )


def _acceptance_rate(model, receiver_tone, offer_text, n_turns=1, seeds=range(60)) -> float:
    me = PrivateInfo("Alice", (2, 2, 2), (3, 1, 2))
    opp = PrivateInfo("Bob", (2, 2, 2), (1, 3, 2))
    names = (me.name, opp.name)
    # Earlier turns (if any) are neutral proposals by Alice and Bob; the offer is Bob's.
    filler = [
        (0, "Hi Bob,\n\nI would like to trade you 1 banana for 1 orange.\n\nBest,\nAlice"),
        (1, "Hi Alice,\n\nI would like to trade you 1 orange for 2 apples.\n\nBest,\nBob"),
    ]
    history = filler[len(filler) - (n_turns - 1) :] if n_turns > 1 else []
    turns = _tr([*history, (1, offer_text)], names)
    hits = 0
    for seed in seeds:
        text = model.complete(_render(_fields(me, opp, receiver_tone, turns=turns), seed)).text
        hits += _accepted(text)
    return hits / len(seeds)


def _voices(body: str) -> tuple[str, str, str]:
    """The same offer by Bob: pushy, meek, and without any tone's stock phrases."""
    return (
        f"Alice, let's be direct.\n\n{body} Take it or leave it.\n\nBest,\nBob",
        f"Dear Alice, I hope you are well.\n\n{body} I hope that is fair.\n\nBest,\nBob",
        f"Alice:\n\n{body}\n\nBob",
    )


# Worth +3 to Alice (valuations 3, 1, 2; her best trade is worth 4), and -2.
_PUSHY, _MEEK, _PLAIN = _voices("I would like to trade you 1 apple and 1 orange for 2 bananas.")
_PUSHY_LOSS, _MEEK_LOSS, _ = _voices("I would like to trade you 1 banana for 1 apple.")


def test_sender_tone_is_read_from_the_text():
    assert rules_scripted.read_tone(_PUSHY) == "assertive"
    assert rules_scripted.read_tone(_MEEK) == "submissive"
    assert rules_scripted.read_tone(_PLAIN) is None


def test_own_tone_changes_acceptance(scripted):
    rates = {t: _acceptance_rate(scripted, t, _PLAIN) for t in CONCRETE}
    assert rates["submissive"] > rates["calm"] > rates["assertive"], rates
    assert rates["submissive"] >= 0.7 and rates["assertive"] <= 0.3


def test_sender_tone_changes_acceptance(scripted):
    """Pressure works on a submissive receiver and backfires on a calm one."""
    calm = {
        k: _acceptance_rate(scripted, "calm", t) for k, t in (("push", _PUSHY), ("meek", _MEEK))
    }
    assert calm["meek"] > calm["push"] + 0.2, calm
    # A submissive receiver gives in to pressure: it takes a loss it would refuse politely.
    sub = {
        k: _acceptance_rate(scripted, "submissive", t)
        for k, t in (("push", _PUSHY_LOSS), ("meek", _MEEK_LOSS))
    }
    assert sub["push"] > sub["meek"] + 0.15, sub


def test_acceptance_softens_as_the_dialogue_grows(scripted):
    early = _acceptance_rate(scripted, "calm", _PLAIN, n_turns=1)
    late = _acceptance_rate(scripted, "calm", _PLAIN, n_turns=3)
    assert late > early + 0.2, (early, late)


def test_an_offer_asking_for_more_than_the_receiver_has_is_scaled_down(scripted):
    me = PrivateInfo("Alice", (1, 1, 1), (1, 0, 4))
    opp = PrivateInfo("Bob", (2, 2, 2), (4, 0, 1))
    turns = _tr(
        [(1, "Hi Alice,\n\nI would like to trade you 2 oranges for 2 apples.\n\nBest,\nBob")],
        (me.name, opp.name),
    )
    scaled = 0
    for seed in range(20):
        text = scripted.complete(_render(_fields(me, opp, "submissive", turns=turns), seed)).text
        assert not _accepted(text)  # Alice has only one apple
        if "I only have 1 apple" in text:
            assert _proposal(text) == ((1, 0, 0), (0, 0, 2))
            scaled += 1
    assert scaled >= 10


def test_any_tone_writes_in_a_concrete_voice_with_a_blended_style():
    style = scripted_trades.blend_styles([0.2, 0.3, 0.5])
    assert style.voice == "submissive"
    lo, hi = sorted(scripted_trades.STYLES[t].share for t in CONCRETE)[::2]
    assert lo < style.share < hi
    assert scripted_trades.blend_styles([1.0, 0.0, 0.0]) == scripted_trades.STYLES["assertive"]


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


def test_evaluation_chain_on_an_accepted_offer(scripted):
    """Agreement (both label orders) -> trade -> payoff calculation -> number, by the stand-in."""
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

    def judge(turns):
        return [
            parse_yes_no(
                ask(
                    prompts.AGREEMENT,
                    {"dialogue": prompts.render_dialogue(turns), "turns": turns,
                     "labels": list(order), "labels_text": prompts.labels_text(order)},
                )
            )
            for order in prompts.LABEL_ORDERS
        ]  # fmt: skip

    assert judge(turns) == [True, True]
    trades = [
        ask(
            prompts.SUMMARIZE_TRADE,
            {"dialogue": dialogue_text, "turns": turns, "player_a": "Alice", "player_b": "Bob",
             "endowments": [[2, 2, 2], [2, 2, 2]], **prompts.summary_cases(order)},
        )
        for order in prompts.SUMMARY_ORDERS
    ]  # fmt: skip
    # The same trade whichever case the request offers first.
    assert trades[0] == trades[1]
    trade = trades[0]
    assert trade == (
        "Player Alice: Receives 2 apples Gives 1 banana\n"
        "Player Bob: Receives 1 banana Gives 2 apples"
    )
    calc = ask(
        prompts.COMPUTE_PAYOFF,
        {
            "player": 0,
            "name": "Alice",
            "private_info": alice.describe(),
            "trade": trade,
            "valuation": list(alice.valuation),
        },
    )
    value = ask(prompts.EXTRACT_PAYOFF, {"player": 0, "name": "Alice", "calculation": calc})
    assert float(value) == 8.0  # 2 apples * 4 - 1 banana * 0
    # A counter-proposal is not an agreement.
    assert judge(turns[:1]) == [False, False]
    # Nor is "accepting" one's own offer.
    own = [turns[0], {**turns[1], "sender": "Bob", "receiver": "Alice"}]
    assert judge(own) == [False, False]


def _guess_accuracy(model, turns, truth, opponent="Bob", seeds=range(80)) -> float:
    right = 0
    for seed in seeds:
        req = prompts.GUESS_FRUIT.render(
            {
                "player": 0,
                "observer": "Alice",
                "opponent": opponent,
                "dialogue": prompts.render_dialogue(turns),
                "turns": turns,
            },
            seed=seed,
        )
        right += parsing.parse_fruit(model.complete(req).text) == truth
    return right / len(seeds)


def test_guess_follows_the_evidence_and_is_uncertain_when_it_is_thin(scripted):
    names = ("Alice", "Bob")
    alice = (0, "Hi Bob,\n\nI would like to trade you 1 banana for 1 orange.\n\nBest,\nAlice")
    weak = _tr(
        [alice, (1, "Hi,\n\nI would like to trade you 1 banana for 1 apple.\n\nBest,\nBob")], names
    )
    strong = _tr(
        [
            (1, "Hi,\n\nI would like to trade you 2 bananas for 2 apples.\n\nBest,\nBob"),
            alice,
            (1, "Hi,\n\nI would like to trade you 1 banana for 2 apples.\n\nBest,\nBob"),
        ],
        names,
    )
    none = _tr([alice], names)
    acc = {
        "none": _guess_accuracy(scripted, none, "apples"),
        "weak": _guess_accuracy(scripted, weak, "apples"),
        "strong": _guess_accuracy(scripted, strong, "apples"),
    }
    # No evidence: about a third; thin evidence: better but unsure; strong: mostly right.
    assert 0.15 <= acc["none"] <= 0.55, acc
    assert acc["none"] < acc["weak"] < acc["strong"], acc
    assert acc["weak"] <= 0.8 and acc["strong"] >= 0.85, acc
    # The guess reads only the opponent's messages: Alice's ask for oranges is not evidence.
    scores = rules_scripted.guess_scores(weak, "Bob")
    assert scores[FRUITS.index("apples")] > 0 and scores[FRUITS.index("oranges")] == 0
