"""The structured trade summary is an exchange by construction, or no trade.

The summary's JSON names what each player gives (``"<name> gives"``), each a
basket of the fruits the scenario has, within the giver's endowment, the second
player's options leaving out the first player's fruits; or "nothing" for both
(no trade). These tests enumerate every legal answer for every pair of
endowments the scenarios can draw, in both orders of the summary's cases, and
check that the legal answers are exactly the real exchanges
(:meth:`Trade.is_exchange`) and no trade: none is left out and none is added.
"""

from __future__ import annotations

import itertools
import json

import pytest

from games.engine.calls import run_sync
from games.fruit_trading import dialogue, parsing, prompts
from games.fruit_trading.rules import PrivateInfo, Trade, parse_trade_lines
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, _thaw
from gt_llm.errors import ParseError

ENDOWMENTS = list(itertools.product((1, 2), repeat=3))  # each fruit U{1,2}, as scenarios draw


NO_TRADE = Trade(((0, 0, 0), (0, 0, 0)))


def _fields(a, b, order=prompts.SUMMARY_ORDERS[0]):
    return {
        "player_a": "Ann",
        "player_b": "Ben",
        "endowments": [list(a), list(b)],
        "order": list(order),
    }


def _legal_trades(fields) -> set[Trade]:
    """Every legal answer of the format, read as the dialogue reads it."""
    fmt = prompts.trade_answer(fields)
    out = set()
    for mine, keys in fmt.variants.items():
        (theirs,) = keys
        for other in theirs.options:
            text = json.dumps({"Ann gives": mine, "Ben gives": other})
            value = parsing.STRUCTURED_VALUES[prompts.SUMMARIZE_TRADE.task](fmt.read(text), fields)
            out.add(parse_trade_lines(value, ("Ann", "Ben")))
    return out


@pytest.mark.parametrize(("a", "b"), list(itertools.product(ENDOWMENTS, repeat=2))[::7])
@pytest.mark.parametrize("order", prompts.SUMMARY_ORDERS, ids=lambda o: o[0])
def test_the_legal_answers_are_exactly_the_exchanges_and_no_trade(a, b, order):
    infos = [PrivateInfo("Ann", a, (1, 1, 1)), PrivateInfo("Ben", b, (1, 1, 1))]
    every = {
        Trade((g0, g1))
        for g0 in itertools.product(range(3), repeat=3)
        for g1 in itertools.product(range(3), repeat=3)
    }
    exchanges = {t for t in every if t.is_exchange(infos)}
    assert _legal_trades(_fields(a, b, order)) == exchanges | {NO_TRADE}
    assert exchanges  # endowments of at least one of each fruit always allow some
    # The no-trade option comes where the request offers the no-trade case.
    options = list(prompts.trade_answer(_fields(a, b, order)).variants)
    first_or_last = options[0] if order[0] == prompts.NO_TRADE_CASE else options[-1]
    assert first_or_last == prompts.NOTHING


@pytest.mark.parametrize(
    "answer",
    [
        {"Ann gives": "1 apple", "Ben gives": "1 apple"},  # the same fruit both ways
        {"Ann gives": "2 apples", "Ben gives": "1 banana"},  # more than Ann has
        {"Ann gives": "1 apple", "Ben gives": "nothing"},  # a gift
        {"Ann gives": "nothing", "Ben gives": "1 apple"},  # a gift the other way
        {"Ann gives": "1 apple, 1 banana and 1 orange", "Ben gives": "1 banana"},
        {"Ann receives": "1 apple", "Ben gives": "1 apple"},  # the old shape
    ],
)
def test_an_answer_that_is_no_exchange_is_not_legal(answer):
    fmt = prompts.trade_answer(_fields((1, 1, 1), (2, 2, 2)))
    with pytest.raises(ParseError):
        fmt.read(json.dumps(answer))


def test_the_requests_carry_the_schema_of_their_players_endowments_in_both_orders():
    cfg = dialogue.Config(max_messages=2)
    scenario = cfg.scenario(0)
    # The messages state the exchange the summaries give (a trade counts only when stated).
    first = prompts.trade_answer(
        {**_fields(*(p.endowment for p in scenario.players)), "player_a": "A", "player_b": "B"}
    )
    mine = next(v for v in first.variants if v != prompts.NOTHING)
    stated = "I would give you {} for {}.".format(*_first(first, mine))

    class Yes(ChatModel):
        backend, model = "yes", "y"

        def __init__(self) -> None:
            self.requests: list[ChatRequest] = []

        def complete(self, request: ChatRequest) -> ChatResponse:
            self.requests.append(request)
            if request.task == prompts.SUMMARIZE_TRADE.task:
                fmt = prompts.trade_answer(request.fields)
                text = json.dumps(
                    {
                        f"{n} gives": v
                        for n, v in zip(scenario_names, _first(fmt, mine), strict=True)
                    }
                )
            else:
                text = {
                    prompts.AGREEMENT.task: '{"answer": "Yes"}',
                    prompts.COMPUTE_PAYOFF.task: '{"calculation": "Value: 1"}',
                    prompts.EXTRACT_PAYOFF.task: '{"value": 1}',
                }.get(request.task, json.dumps({"message": stated}))
            return ChatResponse(text, self.backend, self.model)

    scenario_names = [p.name for p in scenario.players]
    model = Yes()
    state = dialogue.initial_state(scenario, cfg)
    while not state.is_terminal():
        state = run_sync(dialogue.step(state, "calm", 0), model)
    reqs = [r for r in model.requests if r.task == prompts.SUMMARIZE_TRADE.task]
    assert sorted(tuple(r.fields["order"]) for r in reqs) == sorted(prompts.SUMMARY_ORDERS)
    for req in reqs:
        assert [list(e) for e in req.fields["endowments"]] == [
            list(p.endowment) for p in scenario.players
        ]
        assert _thaw(req.schema) == prompts.trade_answer(req.fields).schema()
    # A summary of a legal answer is an exchange: the payoff calls follow.
    assert state.agreement and state.not_exchanges == ()
    assert state.payoff is not None and state.payoff.feasible


def _first(fmt, mine):
    (theirs,) = fmt.variants[mine]
    return mine, theirs.options[0]
