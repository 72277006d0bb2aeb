"""Scripted (offline, rule-based) answers to the fruit-trading tasks.

These are *not* an LLM: they are a deterministic stand-in so that the whole
pipeline runs offline and in CI. They read the request's typed fields (own
private information, tone, believed fruits, the dialogue turns) and write
natural-language text that the game's parsers then read, exactly as they
would read a real model's text. The rules are chosen so that the game's
decisions matter:

* tone: an assertive speaker asks for more fruit, offers less, and accepts
  only clearly profitable offers; a submissive one asks less, offers more and
  accepts break-even offers; "any" lets the model pick one of the three at
  random (per seed);
* belief: a speaker told what the opponent wants offers that fruit when it
  can, which makes the proposal worth more to the opponent and so more often
  accepted;
* seed: phrasing, tie-breaks and some acceptance margins vary with the seed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from games.fruit_trading.rules import (
    CONCRETE_TONES,
    FRUITS,
    Trade,
    basket_text,
    fruit_word,
    parse_basket,
    parse_trade_lines,
    trade_summary_lines,
)
from gt_llm.backends.scripted import register_scripted_task

# Per tone: (wanted fruit asked for, fruit offered, minimum gain to accept).
_TONE_TERMS = {
    "assertive": (2, 1, 3),
    "calm": (1, 1, 2),
    "submissive": (1, 2, 1),
}
_GREETING = {
    "assertive": ("{o},", "{o}, let's be direct."),
    "calm": ("Hi {o},", "Hello {o},"),
    "submissive": ("Dear {o}, I hope you are well.", "Hi {o}, sorry to bother you."),
}
_PITCH = {
    "assertive": ("This is my offer and I expect you to take it.", "Take it or leave it."),
    "calm": ("I think this could work well for both of us.", "Let me know what you think."),
    "submissive": ("Only if that is all right with you, of course.", "I hope that is fair."),
}
_ACCEPT = {
    "assertive": "Fine. I accept your offer: {recv} for {give}. Deal.",
    "calm": "That works for me. I accept your offer: {recv} for {give}.",
    "submissive": "Thank you, I gladly accept your offer: {recv} for {give}.",
}
_REJECT = "I am not interested in trading with you on these terms."

_PROPOSAL = re.compile(r"trade you (?P<give>.+?) for (?P<recv>.+?)[.!?]", re.IGNORECASE)
_ACCEPTED = re.compile(r"\bI (?:gladly )?accept\b", re.IGNORECASE)
_REJECTED = re.compile(r"not interested in trading", re.IGNORECASE)


def _pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


def _proposal_in(text: str) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
    """(sender gives, sender receives) of the last proposal in a message, if any."""
    hits = list(_PROPOSAL.finditer(text))
    if not hits:
        return None
    m = hits[-1]
    return parse_basket(m.group("give")), parse_basket(m.group("recv"))


def _last_offer(turns: Sequence[Mapping[str, Any]]):
    """(proposer, gives, receives) of the latest proposal in the dialogue."""
    for t in reversed(turns):
        offer = _proposal_in(str(t["text"]))
        if offer is not None:
            return str(t["sender"]), offer[0], offer[1]
    return None


def _argmax_random(values: Sequence[float], rng: np.random.Generator) -> int:
    top = max(values)
    return int(_pick(rng, [i for i, v in enumerate(values) if v == top]))


def _compose(tone: str, sender: str, receiver: str, body: str, rng: np.random.Generator) -> str:
    greet = _pick(rng, _GREETING[tone]).format(o=receiver)
    return f"{greet}\n\n{body}\n\nBest,\n{sender}"


def _proposal(fields: Mapping[str, Any], tone: str, rng: np.random.Generator) -> str:
    endow = list(fields["endowment"])
    vals = list(fields["valuation"])
    believed = [FRUITS.index(f) for f in fields["believed_fruits"]]
    ask, offer, _ = _TONE_TERMS[tone]
    # Each earlier proposal of the speaker's is a round of concession: ask one fruit
    # less (down to one) and offer one more (up to what the speaker has).
    rounds = sum(
        1
        for t in fields.get("turns", ())
        if t["sender"] == fields["speaker"] and _proposal_in(str(t["text"])) is not None
    )
    ask = max(1, ask - rounds)
    offer = offer + rounds
    want = _argmax_random(vals, rng)
    candidates = [i for i in range(len(FRUITS)) if i != want and endow[i] > 0]
    if not candidates:
        candidates = [i for i in range(len(FRUITS)) if endow[i] > 0]
    preferred = [i for i in candidates if i in believed]
    pool = preferred or candidates
    give = _argmax_random([-vals[i] for i in pool], rng)
    give = pool[give]
    give_n = min(offer, endow[give])
    recv = [0, 0, 0]
    recv[want] = ask
    gives = [0, 0, 0]
    gives[give] = give_n
    pitch = _pick(rng, _PITCH[tone])
    body = f"I would like to trade you {basket_text(gives)} for {basket_text(recv)}. {pitch}"
    return _compose(tone, fields["speaker"], fields["opponent"], body, rng)


def _resolve_tone(tone: str, rng: np.random.Generator) -> str:
    return str(_pick(rng, CONCRETE_TONES)) if tone == "any" else tone


def opening(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """First message: a proposal in the requested tone."""
    return _proposal(fields, _resolve_tone(str(fields["tone"]), rng), rng)


def message(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """A reply: accept the last offer if good enough for the tone, else counter or reject."""
    tone = _resolve_tone(str(fields["tone"]), rng)
    vals = np.asarray(fields["valuation"])
    endow = np.asarray(fields["endowment"])
    last = _last_offer(fields["turns"])
    if last is not None and last[0] != fields["speaker"]:
        _, they_give, they_want = last
        gain = int(vals @ np.asarray(they_give) - vals @ np.asarray(they_want))
        feasible = bool(np.all(np.asarray(they_want) <= endow))
        # The acceptance margin loosens by one on some seeds: models are not exact.
        threshold = _TONE_TERMS[tone][2] - int(rng.random() < 0.25)
        if feasible and gain >= threshold:
            body = _ACCEPT[tone].format(recv=basket_text(they_give), give=basket_text(they_want))
            return _compose(tone, fields["speaker"], fields["opponent"], body, rng)
        if tone == "assertive" and gain < -2 and rng.random() < 0.5:
            return _compose(tone, fields["speaker"], fields["opponent"], _REJECT, rng)
    return _proposal(fields, tone, rng)


def _describe_offer(proposer: str, gives, receives) -> str:
    return f"{proposer} offered to give {basket_text(gives)} for {basket_text(receives)}."


def summarize_dialogue(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Who proposed what, and how the last message responds."""
    turns = list(fields["turns"])
    if not turns:
        return "No messages have been exchanged."
    last = turns[-1]
    text = str(last["text"])
    if _ACCEPTED.search(text):
        offer = _last_offer(turns[:-1])
        if offer is not None:
            proposer, gives, receives = offer
            return (
                f"{_describe_offer(proposer, gives, receives)} {last['sender']} accepted the trade."
            )
        return f"{last['sender']} said they accept, but no specific trade was proposed."
    if _REJECTED.search(text):
        return f"{last['sender']} rejected the negotiation."
    offer = _proposal_in(text)
    if offer is not None:
        lead = _pick(rng, ("", "The negotiation continues. "))
        return f"{lead}{_describe_offer(str(last['sender']), *offer)} No one has accepted it yet."
    return f"{last['sender']} replied without a concrete proposal."


def agreement(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    summary = str(fields["summary"])
    if "accepted the trade" in summary:
        return "Yes. The last message accepts a specific proposal."
    return "No. The last message does not accept a specific proposal."


_OFFERED = re.compile(r"(?P<who>[A-Z][a-z]+) offered to give (?P<give>.+?) for (?P<recv>.+?)\.")


def summarize_trade(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    names = [str(fields["player_a"]), str(fields["player_b"])]
    hits = list(_OFFERED.finditer(str(fields["summary"])))
    if not hits:
        return trade_summary_lines(Trade(((0, 0, 0), (0, 0, 0))), names)
    m = hits[-1]
    proposer = names.index(m.group("who")) if m.group("who") in names else 0
    gives = [(0, 0, 0), (0, 0, 0)]
    gives[proposer] = parse_basket(m.group("give"))
    gives[1 - proposer] = parse_basket(m.group("recv"))
    return trade_summary_lines(Trade((gives[0], gives[1])), names)


def compute_payoff(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    name = str(fields["name"])
    vals = list(fields["valuation"])
    text = str(fields["trade"])
    other = re.findall(r"Player\s+([A-Za-z]+)\s*:", text)
    names = [name] + [n for n in other if n != name][:1]
    try:
        trade = parse_trade_lines(text, names)
    except ValueError:
        return f"I cannot find a trade for {name}. Value for {name}: 0"
    lines = []
    totals = []
    for label, basket in (("receives", trade.receives(0)), ("gives", trade.gives[0])):
        parts = [
            f"{n} {fruit_word(f, n)} worth {v} each ({n * v})"
            for f, n, v in zip(FRUITS, basket, vals, strict=True)
            if n > 0
        ]
        total = sum(n * v for n, v in zip(basket, vals, strict=True))
        totals.append(total)
        lines.append(f"{name} {label} {', '.join(parts) or 'nothing'}: {total}.")
    lines.append(
        f"Calculation: Receives - Gives = {totals[0]} - {totals[1]} = {totals[0] - totals[1]}."
    )
    lines.append(f"Value for {name}: {totals[0] - totals[1]}")
    return "\n".join(lines)


_VALUE_FOR = re.compile(r"Value for [A-Za-z]+:\s*([-+]?\d+)")


def extract_payoff(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    hits = _VALUE_FOR.findall(str(fields["calculation"]))
    return hits[-1] if hits else "unknown"


def guess_fruit(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """The fruit the opponent asked for most often; a random slip 15% of the time."""
    opponent = str(fields["opponent"])
    asked = np.zeros(len(FRUITS))
    for t in fields["turns"]:
        if t["sender"] != opponent:
            continue
        offer = _proposal_in(str(t["text"]))
        if offer is not None:
            asked += np.asarray(offer[1], dtype=float)
    if asked.sum() == 0 or rng.random() < 0.15:
        return str(_pick(rng, FRUITS)).capitalize() + "."
    return FRUITS[_argmax_random(list(asked), rng)].capitalize() + "."


for _task, _handler in {
    "fruit_trading.opening": opening,
    "fruit_trading.message": message,
    "fruit_trading.summarize_dialogue": summarize_dialogue,
    "fruit_trading.agreement": agreement,
    "fruit_trading.summarize_trade": summarize_trade,
    "fruit_trading.compute_payoff": compute_payoff,
    "fruit_trading.extract_payoff": extract_payoff,
    "fruit_trading.guess_fruit": guess_fruit,
}.items():
    register_scripted_task(_task, _handler)
