"""Scripted (offline, rule-based) answers to the fruit-trading tasks.

These are *not* an LLM: they are a deterministic stand-in (model
``scripted:rules-v2``) so that the whole pipeline runs offline and in CI.
They read the request's typed fields (own private information, tone,
believed fruits, the dialogue turns) and write natural-language text that
the game's parsers then read, exactly as they would read a real model's
text. The rules are a small negotiator whose behaviour the steering changes,
as it would change an LLM's:

* **Proposal.** The speaker searches a small set of trades (a basket of at
  most two fruit it owns for a basket of at most two other fruit) for the
  best ``own gain + w(tone) * estimated opponent gain`` among trades whose
  own gain reaches its *aspiration*, ``share(tone) * best available gain +
  offset(tone)``: an assertive speaker weighs the opponent little and aspires
  to its best trade, a submissive one weighs the opponent fully and is ready
  to lose a little. Aspirations soften as the dialogue grows (the prompt does
  not say how many messages are left; like a model reading the dialogue, the
  stand-in concedes as messages accumulate), and the speaker does not repeat
  a proposal of its own that was turned down.
* **Belief.** The opponent's gain is estimated from the prompted belief: the
  believed fruit(s) are worth much to the opponent, the others little;
  without a belief every fruit is worth the prior mean. A belief therefore
  changes which trade is offered. When the prompt also states a trust in the
  opponent's claims (GRATR), the belief counts in proportion to that trust:
  weight ``(1 + trust) / 2`` on the believed worth, the rest on the prior
  (full trust believes, distrust falls back to the prior).
* **Acceptance.** The receiver accepts an offer it can fulfil when its own
  gain reaches its aspiration shifted by the *sender's tone as read from the
  text* (the tones' stock phrases) and by noise: an assertive receiver
  resists pressure and never takes a first offer below its best, a
  submissive one gives in to pressure, a calm one meets politeness halfway.
  With probability :data:`MISREAD_PROB` it reads the offer the wrong way
  round (who gives what) and judges it by the opposite gain -- the kind of
  slip that makes language models accept losing trades (Lindström et al.,
  Table 3). An offer asking for more than the receiver has is answered, when
  the affordable part would do, by proposing that part. An assertive
  receiver sometimes breaks off when offered a clear loss.
* **"any" tone.** The paper's "any" lets the model choose a tone, not
  necessarily one of the three: the stand-in draws a random blend of the
  three tones' numbers and writes in the voice of the largest component.
* **Noise.** Thresholds, misreads, tie-breaks between trades, the blend for
  "any" and the phrasing vary with the seed. All noise is drawn up front in a
  fixed order from a generator seeded by the fields the rules read *except
  the belief* (see :mod:`gt_llm.backends.scripted`), so a belief changes an
  answer only through the rules above.
* **Guess (Table 1).** The guesser scores each fruit from what it has seen:
  fruit the opponent asked for count for it, fruit it offered count against
  it, fruit it accepted count a little for it; the guess is drawn from a
  softmax of the scores, so it is uncertain when the dialogue says little.
* **Evaluation calls** (agreement, trade, payoffs) are rule-based readings of
  the texts (:mod:`games.fruit_trading.scripted_reader`): the judge sees an
  agreement when the last message accepts the other player's standing
  proposal, whatever order its labels are offered in, and the summary gives
  that proposal's trade, or no trade (nobody gives anything), whatever order
  its cases are offered in. The same rules read any dialogue, so the stand-in
  also answers the judge's check on the labelled set
  (``gt-llm fruit-trading judge-check --backend scripted``); on its own
  messages they give what its earlier reading of its fixed phrases gave, so
  its runs are unchanged (and its model name stays ``rules-v2``). The payoff
  calculation is exact, and the number is read as written, decimals included.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from games.fruit_trading.prompts import gives_key
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
from games.fruit_trading.scripted_reader import accepted_proposal
from games.fruit_trading.scripted_trades import (
    CANDIDATES,
    STYLES,
    Basket,
    Style,
    acceptance_threshold,
    best_gain,
    blend_styles,
    choose_trade,
)
from gt_llm.backends.scripted import register_scripted_task
from gt_llm.parsing import parse_choice, parse_number, parse_yes_no

THRESHOLD_NOISE = 0.6
#: Chance that a receiver misreads an offer the wrong way round (who gives what), a
#: common slip of language models; it then judges the offer by the opposite gain.
MISREAD_PROB = 0.15
TIE_NOISE = 0.4
#: An assertive receiver may break off when its gain is at most this.
BREAK_OFF_GAIN = -3
BREAK_OFF_PROB = 0.4
#: Guess: evidence weights (asked for, offered, accepted) and softmax sharpness.
GUESS_WEIGHTS = (1.0, -0.5, 0.5)
GUESS_SHARPNESS = 1.0

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


def _cues(phrases: Sequence[str]) -> tuple[str, ...]:
    """Distinctive parts of a tone's stock phrases (names and short words dropped)."""
    out = []
    for p in phrases:
        for part in re.split(r"\{o\}|\{recv\}|\{give\}", p):
            part = part.strip(" ,.:")
            if len(part) >= 8:
                out.append(part.lower())
    return tuple(out)


_TONE_CUES = {
    t: _cues(_GREETING[t] + _PITCH[t] + (_ACCEPT[t],) + ((_REJECT,) if t == "assertive" else ()))
    for t in CONCRETE_TONES
}

_PROPOSAL = re.compile(r"trade you (?P<give>.+?) for (?P<recv>.+?)[.!?]", re.IGNORECASE)
_ACCEPTED = re.compile(r"\bI (?:gladly )?accept\b", re.IGNORECASE)


def read_tone(text: str) -> str | None:
    """The tone a message reads as, from its stock phrases; None if it shows none."""
    low = text.lower()
    hits = {t: sum(c in low for c in cues) for t, cues in _TONE_CUES.items()}
    best = max(hits.values())
    if best == 0:
        return None
    top = [t for t, n in hits.items() if n == best]
    return top[0] if len(top) == 1 else None


# --- the noise of one answer -------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Draws:
    """All the noise of one answer, drawn up front in a fixed order.

    Drawing everything before any rule runs keeps each draw tied to its
    purpose: a rule that takes another branch (because a belief changed the
    offer, say) does not shift the noise of the others.
    """

    mix: np.ndarray
    threshold: float
    misread: float
    break_off: float
    ties: np.ndarray
    greeting: int
    pitch: int
    lead: int
    guess: float

    @classmethod
    def from_rng(cls, rng: np.random.Generator) -> Draws:
        return cls(
            mix=rng.dirichlet(np.ones(len(CONCRETE_TONES))),
            threshold=float(rng.normal(0.0, THRESHOLD_NOISE)),
            misread=float(rng.random()),
            break_off=float(rng.random()),
            ties=rng.normal(0.0, TIE_NOISE, size=len(CANDIDATES)),
            greeting=int(rng.integers(2)),
            pitch=int(rng.integers(2)),
            lead=int(rng.integers(2)),
            guess=float(rng.random()),
        )


def style_of(tone: str, draws: Draws) -> Style:
    """The style a request's tone asks for ("any": a random blend)."""
    return blend_styles(draws.mix) if tone == "any" else STYLES[tone]


def _proposal_in(text: str) -> tuple[Basket, Basket] | None:
    """(sender gives, sender receives) of the last proposal in a message, if any."""
    hits = list(_PROPOSAL.finditer(text))
    if not hits:
        return None
    m = hits[-1]
    return parse_basket(m.group("give")), parse_basket(m.group("recv"))


def _last_offer(turns: Sequence[Mapping[str, Any]]) -> tuple[str, Basket, Basket] | None:
    """(proposer, gives, receives) of the latest proposal in the dialogue."""
    for t in reversed(turns):
        offer = _proposal_in(str(t["text"]))
        if offer is not None:
            return str(t["sender"]), offer[0], offer[1]
    return None


# --- message tasks ---------------------------------------------------------------------


def _compose(voice: str, sender: str, receiver: str, body: str, draws: Draws) -> str:
    greet = _GREETING[voice][draws.greeting].format(o=receiver)
    return f"{greet}\n\n{body}\n\nBest,\n{sender}"


def _own_proposals(fields: Mapping[str, Any]) -> list[tuple[Basket, Basket]]:
    out = []
    for t in fields.get("turns", ()):
        if t["sender"] == fields["speaker"]:
            offer = _proposal_in(str(t["text"]))
            if offer is not None:
                out.append(offer)
    return out


def _propose(
    fields: Mapping[str, Any],
    voice: str,
    gives: Basket,
    recv: Basket,
    draws: Draws,
    lead: str = "",
) -> str:
    pitch = _PITCH[voice][draws.pitch]
    body = f"{lead}I would like to trade you {basket_text(gives)} for {basket_text(recv)}. {pitch}"
    return _compose(voice, fields["speaker"], fields["opponent"], body, draws)


def _proposal(fields: Mapping[str, Any], style: Style, draws: Draws) -> str:
    gives, recv = choose_trade(
        fields["endowment"],
        fields["valuation"],
        style,
        list(fields["believed_fruits"]),
        len(fields.get("turns", ())),
        draws.ties,
        exclude=_own_proposals(fields),
        trust=fields.get("belief_trust"),
    )
    return _propose(fields, style.voice, gives, recv, draws)


def opening(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """First message: a proposal in the requested tone."""
    draws = Draws.from_rng(rng)
    return _proposal(fields, style_of(str(fields["tone"]), draws), draws)


def message(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """A reply to the opponent's standing offer: accept, scale down, break off, or counter.

    An offer asking for more than the speaker has is answered, when the
    affordable part would be accepted, by proposing that part instead.
    """
    draws = Draws.from_rng(rng)
    style = style_of(str(fields["tone"]), draws)
    voice = style.voice
    turns = list(fields["turns"])
    vals = np.asarray(fields["valuation"])
    endow = np.asarray(fields["endowment"])
    last = _last_offer(turns)
    if last is not None and last[0] != fields["speaker"]:
        _, they_give, they_want = last
        threshold = acceptance_threshold(
            style,
            best_gain(endow, vals),
            read_tone(str(turns[-1]["text"])),
            len(turns),
            draws.threshold,
        )
        cap = np.minimum(they_want, endow)
        capped: Basket = (int(cap[0]), int(cap[1]), int(cap[2]))
        gain = int(vals @ np.asarray(they_give) - vals @ np.asarray(capped))
        seen = -gain if draws.misread < MISREAD_PROB else gain
        if seen >= threshold:
            if capped == tuple(they_want):
                body = _ACCEPT[voice].format(
                    recv=basket_text(they_give), give=basket_text(they_want)
                )
                return _compose(voice, fields["speaker"], fields["opponent"], body, draws)
            if sum(capped) > 0:
                lead = f"I only have {basket_text(capped)} of what you ask for. "
                return _propose(fields, voice, capped, they_give, draws, lead)
        if voice == "assertive" and seen <= BREAK_OFF_GAIN and draws.break_off < BREAK_OFF_PROB:
            return _compose(voice, fields["speaker"], fields["opponent"], _REJECT, draws)
    return _proposal(fields, style, draws)


# --- evaluation tasks --------------------------------------------------------------------


def agreement(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Yes when the last message accepts the other player's standing proposal.

    Reads the dialogue's turns (:func:`~games.fruit_trading.scripted_reader.accepted_proposal`),
    never the order of the offered labels: both orders of the question get the
    same verdict.
    """
    if accepted_proposal(list(fields["turns"])) is not None:
        return "Yes. The last message accepts a specific proposal."
    return "No. The last message does not accept a specific proposal."


def summarize_trade(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """The trade the last message accepts, one line per player; no trade: nobody gives anything.

    Never reads the order in which the request offers its two cases.
    """
    names = [str(fields["player_a"]), str(fields["player_b"])]
    offer = accepted_proposal(list(fields["turns"]))
    if offer is None:
        return trade_summary_lines(Trade(((0, 0, 0), (0, 0, 0))), names)
    proposer = names.index(offer.sender) if offer.sender in names else 0
    gives = [(0, 0, 0), (0, 0, 0)]
    gives[proposer] = offer.gives
    gives[1 - proposer] = offer.receives
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


_VALUE_FOR = re.compile(r"Value for [A-Za-z]+:\s*([-+]?\d+(?:\.\d+)?)")


def extract_payoff(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    hits = _VALUE_FOR.findall(str(fields["calculation"]))
    return hits[-1] if hits else "unknown"


def guess_scores(turns: Sequence[Mapping[str, Any]], opponent: str) -> np.ndarray:
    """Evidence per fruit that ``opponent`` wants it, from the dialogue text only.

    Its proposals count the fruit it asks for (weight ``GUESS_WEIGHTS[0]``) and
    the fruit it offers (``GUESS_WEIGHTS[1]``); an acceptance counts the fruit
    it agreed to receive (``GUESS_WEIGHTS[2]``).
    """
    asked_w, offered_w, accepted_w = GUESS_WEIGHTS
    score = np.zeros(len(FRUITS))
    for i, t in enumerate(turns):
        if t["sender"] != opponent:
            continue
        text = str(t["text"])
        if _ACCEPTED.search(text):
            offer = _last_offer(turns[:i])
            if offer is not None and offer[0] != opponent:
                score += accepted_w * np.asarray(offer[1], dtype=float)
            continue
        proposal = _proposal_in(text)
        if proposal is not None:
            score += asked_w * np.asarray(proposal[1], dtype=float)
            score += offered_w * np.asarray(proposal[0], dtype=float)
    return score


def guess_fruit(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """A fruit drawn from a softmax of the evidence (uniform without any)."""
    draws = Draws.from_rng(rng)
    score = GUESS_SHARPNESS * guess_scores(list(fields["turns"]), str(fields["opponent"]))
    p = np.exp(score - score.max())
    p /= p.sum()
    k = min(int(np.searchsorted(np.cumsum(p), draws.guess, side="right")), len(FRUITS) - 1)
    return FRUITS[k].capitalize() + "."


# --- the same answers as JSON (structured requests) ------------------------------------


def _trade_json(text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """What each player gives (:func:`games.fruit_trading.prompts.trade_answer`)."""
    names = (str(fields["player_a"]), str(fields["player_b"]))
    trade = parse_trade_lines(text, names)
    return {gives_key(names[p]): basket_text(trade.gives[p]) for p in range(2)}


def _payoff_json(text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    value = parse_number(text)
    return {"value": int(value) if value.is_integer() else value}


AS_JSON: dict[str, Any] = {
    "fruit_trading.opening": lambda t, f: {"message": t.strip()},
    "fruit_trading.message": lambda t, f: {"message": t.strip()},
    "fruit_trading.agreement": lambda t, f: {"answer": "Yes" if parse_yes_no(t) else "No"},
    "fruit_trading.summarize_trade": _trade_json,
    "fruit_trading.compute_payoff": lambda t, f: {"calculation": t.strip()},
    "fruit_trading.extract_payoff": _payoff_json,
    "fruit_trading.guess_fruit": lambda t, f: {"fruit": parse_choice(t, FRUITS)},
}

# What each task reads, and what seeds its noise. The belief ("believed_fruits",
# "belief_trust") is read but does not seed: it acts only through the rules. Prompt texts ("steering",
# "private_info", "dialogue") are never read: the typed fields carry the same facts.
_MESSAGE_READS = ("speaker", "opponent", "endowment", "valuation", "tone")
for _task, _handler, _reads, _seeded_by in (
    (
        "fruit_trading.opening",
        opening,
        _MESSAGE_READS + ("believed_fruits", "belief_trust"),
        _MESSAGE_READS,
    ),
    (
        "fruit_trading.message",
        message,
        _MESSAGE_READS + ("turns", "believed_fruits", "belief_trust"),
        _MESSAGE_READS + ("turns",),
    ),
    ("fruit_trading.agreement", agreement, ("turns",), None),
    ("fruit_trading.summarize_trade", summarize_trade, ("turns", "player_a", "player_b"), None),
    ("fruit_trading.compute_payoff", compute_payoff, ("name", "valuation", "trade"), None),
    ("fruit_trading.extract_payoff", extract_payoff, ("calculation",), None),
    ("fruit_trading.guess_fruit", guess_fruit, ("opponent", "turns"), None),
):
    register_scripted_task(
        _task, _handler, reads=_reads, seeded_by=_seeded_by, as_json=AS_JSON[_task]
    )
