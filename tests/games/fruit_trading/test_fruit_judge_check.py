"""The agreement judge's labelled set, its check, and the trade rules the check relies on.

The set is package data checked for what its scores depend on (counts per
category, every agreement a stated exchange within the endowments, the game's
fruits only); ``gt-llm fruit-trading judge-check`` runs end to end on the
stand-in and refuses a bad option before any call; a run stores its judge's
scores in ``summary.json``; the summary can say no trade, a summarised trade
counts only when the dialogue states it, and payoffs keep their decimals.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
from importlib import resources
from pathlib import Path

import pytest
import tomllib

import games  # noqa: F401  (registers the game and the stand-in's answers)
from games.engine.calls import run_sync
from games.fruit_trading import judge, judge_check, parsing, prompts
from games.fruit_trading import judge_set as judge_set_module
from games.fruit_trading.experiment import ExperimentSettings, run_experiment
from games.fruit_trading.rules import (
    FRUITS,
    PAYOFF_BOUND,
    PrivateInfo,
    Trade,
    quantities,
    trade_stated,
)
from games.fruit_trading.scripted_reader import accepted_proposal
from gt_llm.answers import grammar_schema
from gt_llm.backends.scripted import ScriptedModel
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from gt_llm.cli import main

ROOT = Path(__file__).resolve().parents[3]
#: Fewest dialogues per category (and in all) the set must hold.
MIN_PER_CATEGORY = {
    "acceptance": 12,
    "refusal": 6,
    "counter_offer": 6,
    "proposal_no_reply": 6,
    "ambiguous": 6,
    "junk": 6,
}
MIN_DIALOGUES = 48
#: Fruit words that are not the game's: the set must not name them.
OTHER_FRUITS = ("pear", "grape", "melon", "mango", "cherry", "cherries", "lemon", "peach",
                "plum", "kiwi", "berry", "berries", "pineapple", "strawberr", "lime")  # fmt: skip


@pytest.fixture(scope="module")
def judge_set():
    return judge_set_module.load_judge_set()


# --- the set ----------------------------------------------------------------------------


def test_the_set_ships_as_package_data():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = pyproject["tool"]["setuptools"]["package-data"]["games.fruit_trading"]
    assert "data/*.json" in data
    path = resources.files("games.fruit_trading").joinpath("data", "judge_set.json")
    assert path.is_file()


def test_the_set_has_enough_dialogues_of_every_category(judge_set):
    counts = judge_set.counts()
    assert counts["dialogues"] >= MIN_DIALOGUES
    for category, least in MIN_PER_CATEGORY.items():
        assert counts["categories"][category] >= least, (category, counts)
    # Agreements come from clear acceptances and from ambiguous dialogues labelled yes.
    assert counts["agreements"] >= MIN_PER_CATEGORY["acceptance"]
    assert all(d.agreement for d in judge_set.dialogues if d.category == "acceptance")
    assert not any(
        d.agreement
        for d in judge_set.dialogues
        if d.category in ("refusal", "counter_offer", "proposal_no_reply", "junk")
    )


def test_every_ambiguous_dialogue_names_a_documented_rule(judge_set):
    ambiguous = [d for d in judge_set.dialogues if d.category == "ambiguous"]
    assert all(d.rule in judge_set.rules for d in ambiguous)
    assert {d.agreement for d in ambiguous} == {True, False}  # the rules decide both ways


def test_every_agreement_is_an_exchange_the_dialogue_states(judge_set):
    for d in judge_set.dialogues:
        if d.trade is None:
            continue
        assert d.trade.is_exchange(d.infos()), d.id
        # One message names every quantity of the trade (rules.trade_stated).
        assert trade_stated(d.trade, d.texts()), d.id


def test_messages_alternate_and_endowments_are_the_games(judge_set):
    for d in judge_set.dialogues:
        senders = [s for s, _ in d.messages]
        assert senders == [d.players[i % 2] for i in range(len(senders))], d.id
        assert all(n in (1, 2) for e in d.endowments for n in e), d.id


def test_the_set_names_only_the_games_fruits(judge_set):
    raw = json.loads(
        resources.files("games.fruit_trading").joinpath("data", "judge_set.json").read_text()
    )
    assert tuple(raw["fruits"]) == FRUITS
    for d in judge_set.dialogues:
        for _, text in d.messages:
            low = text.lower()
            assert not any(re.search(rf"\b{f}", low) for f in OTHER_FRUITS), (d.id, text)


def test_a_malformed_set_is_refused_naming_the_fix():
    bad = {
        "dialogues": [
            {
                "id": "x",
                "category": "acceptance",
                "players": ["A", "B"],
                "endowments": [[1, 1, 1], [1, 1, 1]],
                "messages": [{"sender": "A", "text": "hi"}],
                "agreement": True,
                "trade": None,
            }
        ]
    }
    with pytest.raises(ValueError, match="parse_judge_set: x: agreement must be true with a trade"):
        judge_set_module.parse_judge_set(bad)


# --- the trade rules --------------------------------------------------------------------


def test_quantities_read_digits_number_words_and_articles():
    assert quantities("I give you an apple and two Bananas for 1 orange") == {
        (1, "apples"),
        (2, "bananas"),
        (1, "oranges"),
    }
    assert quantities("some apples, 2 of my oranges") == set()


def test_a_trade_is_stated_only_when_one_message_names_all_its_quantities():
    trade = Trade(((2, 0, 0), (0, 1, 0)))  # 2 apples for 1 banana
    assert trade_stated(trade, ["Hi", "I'll give you 2 apples for a banana."])
    # Which side gives which is not read: the quantities are.
    assert trade_stated(trade, ["Give me 2 apples for 1 banana"])
    # Pieced together from two messages, other counts, or named nowhere: not stated.
    assert not trade_stated(trade, ["2 apples?", "For 1 banana."])
    assert not trade_stated(trade, ["I'll give you 1 apple for 1 banana."])
    assert not trade_stated(trade, ["Deal.", "Deal."])
    assert not trade_stated(Trade(((0, 0, 0), (0, 0, 0))), ["anything"])


def _infos():
    return (PrivateInfo("Ann", (2, 1, 1), (0, 0, 0)), PrivateInfo("Ben", (1, 2, 1), (0, 0, 0)))


LINES = "Player Ann: Receives 1 banana Gives 2 apples\nPlayer Ben: Receives 2 apples Gives 1 banana"
NOTHING = "Player Ann: Receives nothing Gives nothing\nPlayer Ben: Receives nothing Gives nothing"
GIFT = "Player Ann: Receives 1 banana Gives nothing\nPlayer Ben: Receives nothing Gives 1 banana"


@pytest.mark.parametrize(
    ("texts", "messages", "outcome"),
    [
        ([LINES, LINES], ["2 apples for 1 banana?", "Deal."], "trade"),
        ([NOTHING, prompts.NO_TRADE_TEXT], ["2 apples for 1 banana?", "No."], "no_trade"),
        ([LINES, NOTHING], ["2 apples for 1 banana?", "Hm."], "orders_differ"),
        ([LINES, "I do not know"], ["2 apples for 1 banana?", "Deal."], "unparsed"),
        ([LINES, LINES], ["Deal.", "Deal."], "not_stated"),
        ([GIFT, GIFT], ["1 banana", "ok"], "not_exchange"),
    ],
)
def test_the_two_summaries_give_a_trade_only_when_they_agree_on_a_stated_exchange(
    texts, messages, outcome
):
    reading = judge.read_trade(texts, ("Ann", "Ben"), _infos(), messages)
    assert reading.outcome == outcome
    assert (reading.trade is not None) == (outcome == "trade")
    if outcome == "trade":
        assert reading.trade == Trade(((2, 0, 0), (0, 1, 0)))
        assert reading.text == LINES


def test_the_summary_can_say_no_trade_in_both_answer_modes():
    fields = {
        "player_a": "Ann",
        "player_b": "Ben",
        "endowments": [[2, 1, 1], [1, 2, 1]],
        "order": list(prompts.SUMMARY_ORDERS[0]),
    }
    fmt = prompts.trade_answer(fields)
    answer = json.dumps({"Ann gives": "nothing", "Ben gives": "nothing"})
    text = parsing.STRUCTURED_VALUES[prompts.SUMMARIZE_TRADE.task](fmt.read(answer), fields)
    assert judge.summary_trade(text, ("Ann", "Ben")) == Trade(((0, 0, 0), (0, 0, 0)))
    # Free text: the lines of nobody giving anything, or the words "no trade".
    for free in (NOTHING, "No trade.", "no trade"):
        value = parsing.parse_trade_text(free)
        assert judge.summary_trade(value, ("Ann", "Ben")).is_empty(), free
    # Both orders of the cases are offered, and the prompt text follows the order.
    requests = [
        c.request
        for c in judge.summary_calls(
            "d", [], ("Ann", "Ben"), [[2, 1, 1], [1, 2, 1]], seed=0, structured=True
        )
    ]
    users = [r.messages[-1].content for r in requests]
    first = [u.index("report no trade") < u.index("report that trade") for u in users]
    assert sorted(first) == [False, True]


# --- payoffs keep their decimals --------------------------------------------------------


def test_payoff_extraction_keeps_decimals_in_both_answer_modes():
    assert parsing.parse_payoff("1.5") == 1.5
    assert parsing.parse_payoff("Value for Olivia: -2.5") == -2.5
    fields = {"player": 0, "name": "Olivia", "calculation": "Value for Olivia: 1.5"}
    request = prompts.EXTRACT_PAYOFF.render(fields, structured=True)
    assert parsing.parser_for(request)('{"value": 1.5}') == 1.5
    # The stand-in reads the number as written.
    assert ScriptedModel().complete(request).text == '{"value": 1.5}'
    # The local backend's grammar (hundredths of the range) can write every half in range.
    (values,) = [grammar_schema(request.schema_dict())["properties"]["value"]["enum"]]
    halves = {x / 2 for x in range(-2 * PAYOFF_BOUND, 2 * PAYOFF_BOUND + 1)}
    assert halves <= set(values)


# --- the check --------------------------------------------------------------------------


def _cli(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse refuses a flag's value this way
            code = int(stop.code or 0)
    return code, buf.getvalue()


def test_judge_check_runs_end_to_end_on_the_stand_in_and_stores_its_scores(tmp_path):
    out = tmp_path / "jc"
    argv = ["fruit-trading", "judge-check", "--out", str(out), "--no-progress"]
    code, output = _cli(argv)
    assert code == 0, output
    result = json.loads((out / "judge_check.json").read_text())
    n = result["judge_set"]["dialogues"]
    assert len(result["dialogues"]) == n >= MIN_DIALOGUES
    assert result["backend"] == "scripted" and result["is_llm"] is False
    v = result["verdict"]
    assert v["accuracy"]["n"] == n
    assert v["precision"]["n"] == v["confusion"]["tp"] + v["confusion"]["fp"]
    assert 0.0 <= v["precision"]["low"] <= v["precision"]["value"] <= v["precision"]["high"]
    assert result["trade_summary"]["accuracy"]["n"] == n
    assert sum(result["trade_summary"]["readings"].values()) == n
    assert result["llm_calls"]["made"] == 4 * n  # 2 verdicts and 2 summaries per dialogue
    assert "verdict precision" in output and "trade summary accuracy" in output
    # The scores are stored beside the call cache; asking again costs no model call.
    stored = judge_check.ScoreStore(judge_check.scores_path(str(out / "llm_cache.sqlite")))
    assert stored.get(result["key"])["verdict"] == v
    code, output = _cli(argv)
    assert code == 0 and "0 made" in output, output


@pytest.mark.parametrize(
    "extra",
    [["--concurrency", "0"], ["--backend", "nosuch"], ["--structured", "maybe"], ["--out", ""]],
    ids=["concurrency", "backend", "structured", "out"],
)
def test_judge_check_refuses_a_bad_option_before_any_call(tmp_path, extra):
    out = tmp_path / "jc"
    code, output = _cli(["fruit-trading", "judge-check", "--out", str(out), *extra])
    assert code != 0
    assert not out.exists()  # nothing written, no cache: no call was made
    flag = extra[0]
    assert flag in output or "--out" in output, output


class _YesJudge(ChatModel):
    """The stand-in, except that the judge says Yes to everything."""

    backend, model = "yes", "always"

    def __init__(self) -> None:
        self.inner = ScriptedModel()

    def complete(self, request: ChatRequest) -> ChatResponse:
        if request.task == prompts.AGREEMENT.task:
            text = '{"answer": "Yes"}' if request.schema is not None else "Yes"
            return ChatResponse(text, self.backend, self.model)
        r = self.inner.complete(request)
        return ChatResponse(r.text, self.backend, self.model)


def _tiny(tmp_path, **kw):
    return ExperimentSettings(
        out=str(tmp_path),
        inits=1,
        iterations=3,
        variants=("tone",),
        max_messages=3,
        num_seeds=1,
        generalisation=False,
        whole_game=False,
        progress=False,
        **kw,
    )


def test_a_tiny_run_stores_its_judges_scores_in_its_summary(tmp_path):
    first = run_experiment(_tiny(tmp_path / "a", cache=str(tmp_path / "calls.sqlite")))
    summary = json.loads((first.out / "summary.json").read_text())
    j = summary["judge"]
    assert j["source"] == "measured" and j["backend"] == "scripted"
    assert j["verdict"]["precision"]["n"] > 0 and j["below_floor"] is False
    assert j["precision_floor"] == judge_check.PRECISION_FLOOR
    # Another run on the same cache reuses the stored scores.
    again = run_experiment(_tiny(tmp_path / "b", cache=str(tmp_path / "calls.sqlite")))
    assert again.summary["judge"]["source"] == "stored"
    assert again.summary["judge"]["verdict"] == j["verdict"]


def test_a_run_prints_its_judges_scores_and_the_payoff_disagreements(tmp_path):
    argv = ["fruit-trading", "run", "--inits", "1", "--max-messages", "3", "--num-seeds", "1",
            "--iterations", "3", "--variants", "tone", "--no-generalisation", "--no-whole-game",
            "--no-progress", "--out", str(tmp_path / "run")]  # fmt: skip
    code, output = _cli(argv)
    assert code == 0, output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["settings"]["payoff"] == "exact"  # the default
    assert "judge" in summary and "payoff_disagreements" in summary["variants"]["tone"]
    assert "agreement judge scripted:rules-v2" in output and "verdict precision" in output
    assert "LLM payoff differs from the exact payoff in 0 of" in output
    assert "payoffs used: exact" in output
    assert "The agreement judge" in (tmp_path / "run" / "tables.md").read_text()


def test_a_judge_that_always_says_yes_warns_in_one_line(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        r = run_experiment(_tiny(tmp_path), model=_YesJudge())
    j = r.summary["judge"]
    assert j["below_floor"] is True
    assert j["verdict"]["recall"]["value"] == 1.0
    warnings = [m for m in caplog.messages if "agreement judge" in m]
    assert len(warnings) == 1 and "\n" not in warnings[0], warnings


def test_the_stand_in_answers_both_summary_orders_alike_on_the_set(judge_set):
    model = ScriptedModel()
    for d in judge_set.dialogues:
        result = run_sync(judge_check.check_step(d, seed=0, structured=True), model)
        assert len(set(result.verdicts)) == 1, d.id
        assert result.reading.outcome in ("trade", "no_trade"), d.id


def _turns(*messages: str) -> list[dict[str, str]]:
    names = ("Ann", "Ben")
    return [
        {"sender": names[i % 2], "receiver": names[1 - i % 2], "text": t}
        for i, t in enumerate(messages)
    ]


@pytest.mark.parametrize(
    ("messages", "accepted"),
    [
        (("Give me 2 bananas and I will give you 1 orange.", "OK, I agree."), ("Ann", (0, 0, 1))),
        (
            ("I'll trade you 2 apples for 1 banana.", "Deal: 2 apples for 1 banana."),
            ("Ann", (2, 0, 0)),
        ),
        (("I'll trade you 2 apples for 1 banana.", "How about 1 apple for 1 banana?"), None),
        (("I'll trade you 2 apples for 1 banana.", "Deal, but only 1 apple."), None),
        (("I'll trade you 2 apples for 1 banana.", "No deal."), None),
        (("Hello.", "I offer 1 apple for 1 banana. Deal!"), None),  # its own proposal
        (("Deal.", "Deal."), None),  # nothing proposed
    ],
)
def test_the_stand_ins_reader_finds_the_accepted_proposal(messages, accepted):
    found = accepted_proposal(_turns(*messages))
    assert (None if found is None else (found.sender, found.gives)) == accepted
