"""The agreement judge and the trade summary: the requests the game asks, and how they combine.

One block shared by the game (:func:`games.fruit_trading.dialogue.step`) and
the judge's check on a labelled set (:mod:`games.fruit_trading.judge_check`),
so that the check measures exactly what a run asks:

* **The verdict.** The judge reads the dialogue and is asked twice, with its
  two labels offered in both orders (:data:`~games.fruit_trading.prompts.LABEL_ORDERS`);
  the players agreed only when both answers say so (:func:`agreed`), so the
  verdict cannot follow the order of the labels.
* **The trade.** The summary is asked twice too, with its two cases (the
  accepted trade, no trade) offered in both orders
  (:data:`~games.fruit_trading.prompts.SUMMARY_ORDERS`). :func:`read_trade`
  turns the two answers into the trade the game pays for, or none, with the
  reason (:data:`READINGS`): a trade counts only when both answers give the
  same one, it is a real exchange (:meth:`~games.fruit_trading.rules.Trade.is_exchange`)
  and the dialogue states it (:func:`~games.fruit_trading.rules.trade_stated`:
  one message names every quantity of it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from games.engine.calls import Call
from games.fruit_trading import prompts
from games.fruit_trading.parsing import call
from games.fruit_trading.rules import (
    PrivateInfo,
    Trade,
    parse_trade_lines,
    trade_stated,
    trade_summary_lines,
)

__all__ = [
    "READINGS",
    "TradeReading",
    "agreed",
    "agreement_calls",
    "read_trade",
    "summary_calls",
    "summary_trade",
]

#: How the two summaries of a dialogue were read: ``trade`` (a stated exchange, the
#: only one the game pays for), ``no_trade`` (both say no trade), ``orders_differ``
#: (the two orders give different trades), ``unparsed`` (an answer names no trade the
#: players' lines agree on), ``not_exchange`` (the same trade, but no real exchange),
#: ``not_stated`` (the same exchange, but no message of the dialogue names it).
READINGS: tuple[str, ...] = (
    "trade",
    "no_trade",
    "orders_differ",
    "unparsed",
    "not_exchange",
    "not_stated",
)


@dataclasses.dataclass(frozen=True)
class TradeReading:
    """The trade the two summaries give, or none, and why.

    Attributes:
      outcome: One of :data:`READINGS`.
      trade: The trade when ``outcome`` is ``trade``, else None.
      text: The trade in the summary's lines (``Player X: Receives ... Gives ...``)
        when ``outcome`` is ``trade``, else ``""``: what the payoff calls are shown.
      summaries: The trades the two answers gave (None: unreadable), in order.
    """

    outcome: str
    trade: Trade | None = None
    text: str = ""
    summaries: tuple[Trade | None, ...] = ()


def agreement_calls(
    dialogue: str, turns: Sequence[Mapping[str, Any]], *, seed: int, structured: bool
) -> list[Call[Any]]:
    """The judge's two calls on a dialogue: one per label order (each a bool)."""
    return [
        call(
            prompts.AGREEMENT.render(
                {
                    "dialogue": dialogue,
                    "turns": list(turns),
                    "labels": list(order),
                    "labels_text": prompts.labels_text(order),
                },
                seed=seed,
                structured=structured,
            )
        )
        for order in prompts.LABEL_ORDERS
    ]


def agreed(verdicts: Sequence[bool]) -> bool:
    """The verdict of the two answers: an agreement only when both say so."""
    return bool(verdicts) and all(bool(v) for v in verdicts)


def summary_calls(
    dialogue: str,
    turns: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    endowments: Sequence[Sequence[int]],
    *,
    seed: int,
    structured: bool,
) -> list[Call[Any]]:
    """The trade summary's two calls on a dialogue: one per order of its cases (each a text).

    Args:
      dialogue: The dialogue text (:func:`~games.fruit_trading.prompts.render_dialogue`).
      turns: Its messages (``sender``, ``receiver``, ``text``).
      names: The two players, first speaker first.
      endowments: Their endowments (the structured answer's bounds).
      seed: The calls' seed.
      structured: Ask for the JSON answer.
    """
    return [
        call(
            prompts.SUMMARIZE_TRADE.render(
                {
                    "dialogue": dialogue,
                    "turns": list(turns),
                    "player_a": names[0],
                    "player_b": names[1],
                    # The structured answer's bounds: each side gives at most what it has.
                    "endowments": [list(e) for e in endowments],
                    **prompts.summary_cases(order),
                },
                seed=seed,
                structured=structured,
            )
        )
        for order in prompts.SUMMARY_ORDERS
    ]


def summary_trade(text: str | None, names: Sequence[str]) -> Trade | None:
    """The trade one summary answer gives (no trade: nobody gives anything); None if unreadable."""
    if text is None:
        return None
    if text.strip() == prompts.NO_TRADE_TEXT:
        return Trade(((0, 0, 0), (0, 0, 0)))
    try:
        return parse_trade_lines(text, names)
    except ValueError:
        return None


def read_trade(
    texts: Sequence[str | None],
    names: Sequence[str],
    players: Sequence[PrivateInfo],
    messages: Sequence[str],
) -> TradeReading:
    """The trade the game pays for, from the summary's answers in both orders (see the module).

    Args:
      texts: The summary answers (:func:`summary_calls`' values), in order.
      names: The two players' names.
      players: Their private information (the exchange's endowment check).
      messages: The dialogue's message texts (:func:`~games.fruit_trading.rules.trade_stated`).
    """
    trades = tuple(summary_trade(t, names) for t in texts)
    if not trades or any(t is None for t in trades):
        return TradeReading("unparsed", summaries=trades)
    first = trades[0]
    assert first is not None  # checked above; for the type checker
    if any(t != first for t in trades[1:]):
        return TradeReading("orders_differ", summaries=trades)
    if first.is_empty():
        return TradeReading("no_trade", summaries=trades)
    if not first.is_exchange(players):
        return TradeReading("not_exchange", summaries=trades)
    if not trade_stated(first, messages):
        return TradeReading("not_stated", summaries=trades)
    return TradeReading("trade", first, trade_summary_lines(first, names), trades)
