"""Parsers of the fruit-trading requests, their documented fallbacks, and the engine Call.

Per task (:mod:`games.fruit_trading.prompts`) a free-text parser
(:data:`PARSERS`), a value read from the task's JSON answer when the request
asks for one (:data:`STRUCTURED_VALUES`, validated by the task's answer
format), the fallback used only after every re-ask failed (:data:`FALLBACKS`,
logged and counted), and an optional hook from the parsed answer to the value
the step receives (:data:`FINISH`). :func:`call` puts them together into the
:class:`~games.engine.calls.Call` a dialogue step yields.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from games.engine.calls import Call
from games.fruit_trading import prompts
from games.fruit_trading.rules import FRUITS, Trade, parse_basket, trade_summary_lines
from gt_llm.chat import ChatRequest
from gt_llm.errors import ParseError
from gt_llm.parsing import Parsed, parse_choice, parse_number, parse_yes_no


def parse_text(text: str) -> str:
    """A non-empty free-text answer."""
    if not text.strip():
        raise ParseError("a non-empty answer", text)
    return text.strip()


def parse_fruit(text: str) -> str:
    return parse_choice(text, FRUITS)


def parse_payoff(text: str) -> float:
    """The first number of the answer, decimals kept (``"1.5"`` is 1.5, never 15)."""
    return parse_number(text)


_NO_TRADE = re.compile(r"\W*no\s+trade\b\W*$", re.IGNORECASE)


def parse_trade_text(text: str) -> str:
    """Accepts a trade summary that has a well-formed line for each player, or says no trade.

    The player names are not known to the parser, so it checks the form only;
    the dialogue step matches the names afterwards. The summary of no trade is
    both players giving nothing; an answer of only the words "no trade" is read
    as that too (:data:`~games.fruit_trading.prompts.NO_TRADE_TEXT`).
    """
    if _NO_TRADE.match(text):
        return prompts.NO_TRADE_TEXT
    if len(re.findall(r"Player\s+\S+\s*:\s*Receives\b.*\bGives\b", text, re.I)) < 2:
        raise ParseError("two lines 'Player [Name]: Receives ... Gives ...'", text)
    return text.strip()


#: Fallbacks, used only after every re-ask failed; each is logged and counted.
FALLBACKS: dict[str, Callable[[ChatRequest], Any]] = {
    # An unparseable message is kept as an explicit placeholder turn.
    prompts.OPENING.task: lambda r: "(no message)",
    prompts.MESSAGE.task: lambda r: "(no message)",
    # Unreadable agreement answer: no agreement (the negotiation goes on).
    prompts.AGREEMENT.task: lambda r: False,
    # Unreadable trade summary: the raw text is still passed to the payoff calls.
    prompts.SUMMARIZE_TRADE.task: lambda r: None,
    prompts.COMPUTE_PAYOFF.task: lambda r: "(no calculation)",
    # Unreadable payoff number: 0, the payoff of no trade.
    prompts.EXTRACT_PAYOFF.task: lambda r: 0.0,
    # Unreadable guess: no belief update for this message.
    prompts.GUESS_FRUIT.task: lambda r: None,
}

PARSERS: dict[str, Callable[[str], Any]] = {
    prompts.OPENING.task: parse_text,
    prompts.MESSAGE.task: parse_text,
    prompts.AGREEMENT.task: parse_yes_no,
    prompts.SUMMARIZE_TRADE.task: parse_trade_text,
    prompts.COMPUTE_PAYOFF.task: parse_text,
    prompts.EXTRACT_PAYOFF.task: parse_payoff,
    prompts.GUESS_FRUIT.task: parse_fruit,
}


# Structured answers: each task's JSON answer, validated by the task's answer format
# (prompts.py: the same description the request's schema comes from), read as the value
# the free-text parser above would give.


def _structured_trade(obj: Mapping[str, Any], fields: Mapping[str, Any]) -> str:
    """The trade summary lines ``Player X: Receives ... Gives ...`` of a JSON trade.

    The JSON names what each player gives (:func:`~games.fruit_trading.prompts.trade_answer`);
    each receives what the other gives, so the two lines always match. No trade
    (:data:`~games.fruit_trading.prompts.NOTHING` for both) gives the lines of
    nobody giving anything.
    """
    names = (str(fields["player_a"]), str(fields["player_b"]))
    a, b = (parse_basket(obj[prompts.gives_key(n)]) for n in names)
    return trade_summary_lines(Trade((a, b)), names)


#: ``value(validated JSON answer, request fields)`` per task.
STRUCTURED_VALUES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Any]] = {
    prompts.OPENING.task: lambda o, f: o["message"],
    prompts.MESSAGE.task: lambda o, f: o["message"],
    prompts.AGREEMENT.task: lambda o, f: o["answer"] == "Yes",
    prompts.SUMMARIZE_TRADE.task: _structured_trade,
    prompts.COMPUTE_PAYOFF.task: lambda o, f: o["calculation"],
    prompts.EXTRACT_PAYOFF.task: lambda o, f: float(o["value"]),
    prompts.GUESS_FRUIT.task: lambda o, f: o["fruit"],
}


def parser_for(request: ChatRequest) -> Callable[[str], Any]:
    """The parser of a request: its task's answer format when it is structured, else free text."""
    t = request.task
    if request.schema is None:
        return PARSERS[t]
    fmt = prompts.BOOK[t].answer_format(request.fields)
    fields = request.fields
    return lambda text: STRUCTURED_VALUES[t](fmt.read(text), fields)


def _trade_text(p: Parsed[Any]) -> Any:
    """A failed trade summary still passes its raw text on to the payoff calls."""
    if p.fell_back:
        return p.response.text if p.response is not None else ""
    return p.value


#: Per-task hook from the parsed answer to the value the step receives.
FINISH: dict[str, Callable[[Parsed[Any]], Any]] = {prompts.SUMMARIZE_TRADE.task: _trade_text}


def call(request: ChatRequest) -> Call[Any]:
    """The engine Call of a fruit-trading request: parser, fallback and hook by task."""
    t = request.task
    return Call(request, parser_for(request), FALLBACKS[t], FINISH.get(t))


__all__ = [
    "FALLBACKS",
    "FINISH",
    "PARSERS",
    "STRUCTURED_VALUES",
    "call",
    "parse_fruit",
    "parse_payoff",
    "parse_text",
    "parse_trade_text",
    "parser_for",
]
