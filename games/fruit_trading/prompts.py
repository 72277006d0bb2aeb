"""Every prompt of the fruit-trading game, in one place.

Templates follow the structure of the chat-games fruit trade (instructions,
the player's private information, the dialogue so far, then the ask); the
sentences are gt-llm's own. The steering lines follow the paper's formats:
``Tone: Use {tone} tone.`` and ``Belief: You believe that {name} wants
{fruit(s)}.``
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from games.fruit_trading.rules import FRUITS, PAYOFF_BOUND, basket_text
from gt_llm.answers import AnswerFormat, choice, number, text
from gt_llm.prompts import PromptBook, PromptTemplate

#: What one player gives: a count per fruit.
Basket = tuple[int, int, int]

# --- structured answers: one format per task (the schema and the validator) ----------

#: The range of the structured payoff answer: any number from ``-PAYOFF_RANGE`` to
#: ``PAYOFF_RANGE``, decimals included (a calculation ending "1.5" is read as 1.5). It is
#: one wider than what any trade can pay (:data:`PAYOFF_BOUND`, the game clips to that)
#: because the ``local`` backend narrows a number range to hundredths of it for its
#: grammar (:func:`gt_llm.answers.grammar_schema`): hundredths of -25..25 are steps of
#: 0.5, so every whole number and every half a calculation can end in stays writable.
#: (A whole-number schema turned SmolLM2-135M's "Value for Olivia: 1.5" into 15.)
PAYOFF_RANGE = PAYOFF_BOUND + 1
#: The two answers of the agreement question.
YES_NO = ("Yes", "No")
#: The orders in which the agreement judge is offered its two labels. The judge is
#: asked once in each order and the players agreed only when both answers say so, so
#: its verdict cannot depend on which label comes first.
LABEL_ORDERS: tuple[tuple[str, str], ...] = (YES_NO, (YES_NO[1], YES_NO[0]))


def agreement_answer(fields: Mapping[str, Any]) -> AnswerFormat:
    """``{"answer": label}`` with the labels in the order the request offers them."""
    return AnswerFormat((choice("answer", [str(x) for x in fields["labels"]]),))


#: The trade summary's two cases: the accepted trade, or none. The summary is asked
#: once with each case first (:data:`SUMMARY_ORDERS`), and a trade counts only when
#: both answers give the same one (:mod:`games.fruit_trading.judge`), so the answer
#: cannot follow the order in which the cases are offered.
TRADE_CASE, NO_TRADE_CASE = "trade", "no trade"
SUMMARY_ORDERS: tuple[tuple[str, str], ...] = (
    (TRADE_CASE, NO_TRADE_CASE),
    (NO_TRADE_CASE, TRADE_CASE),
)
#: What a player gives in the summary of no trade (both players, in both answer modes:
#: no trade is the trade in which nobody gives anything).
NOTHING = "nothing"
#: A free-text summary may also say no trade in these words (read as nobody giving anything).
NO_TRADE_TEXT = "No trade"

_CASE_TEXT = {
    TRADE_CASE: (
        "If the last message accepts, unchanged, a specific trade that the other person "
        "proposed earlier, report that trade: what each player gives the other."
    ),
    NO_TRADE_CASE: (
        "If the last message accepts no specific trade that the other person proposed "
        "earlier (it asks a question, makes a counter-proposal or rejects, or there is no "
        "such proposal), report no trade: each player gives nothing."
    ),
}


def summary_cases(order: Sequence[str]) -> dict[str, Any]:
    """The summary request's fields that offer its two cases in ``order``.

    ``cases`` (the two instructions of the user message, in ``order``) and
    ``order`` (the cases' names, which the structured answer's options follow).

    Raises:
      ValueError: ``order`` is not one of :data:`SUMMARY_ORDERS`.
    """
    order = tuple(order)
    if order not in SUMMARY_ORDERS:
        raise ValueError(f"summary_cases: order must be one of {SUMMARY_ORDERS}, got {order}")
    return {"cases": "\n".join(_CASE_TEXT[c] for c in order), "order": list(order)}


def labels_text(labels: Sequence[str]) -> str:
    """``("No", "Yes") -> "No or Yes"``: the labels in the order they are offered."""
    return " or ".join(labels)


def gives_key(name: str) -> str:
    """The trade summary's key of what ``name`` gives: ``"<name> gives"``."""
    return f"{name} gives"


def baskets(endowment: Sequence[int], *, without: Sequence[int] = ()) -> list[Basket]:
    """The non-empty baskets a player can give: at most its endowment of each fruit.

    ``without``: a basket whose fruits are left out (what the other side gives, so no
    fruit goes both ways). Ordered by the number of fruit, then by the counts.
    """
    out: list[Basket] = [
        (counts[0], counts[1], counts[2])
        for counts in itertools.product(*(range(int(e) + 1) for e in endowment))
        if any(counts) and not any(c and w for c, w in zip(counts, without, strict=False))
    ]
    return sorted(out, key=lambda b: (sum(b), b[::-1]))


def trade_answer(fields: Mapping[str, Any]) -> AnswerFormat:
    """The trade summary: what each player gives the other -- an exchange, or no trade.

    ``{"<player_a> gives": basket, "<player_b> gives": basket}``, each basket one of
    the texts :func:`~games.fruit_trading.rules.basket_text` writes (``"1 apple and
    2 oranges"``): a union on the first player's basket (the discriminator), each
    branch listing the second player's baskets without that basket's fruits. Every
    legal answer but one is therefore an exchange (:meth:`~games.fruit_trading.rules.Trade.is_exchange`):
    each side gives something, no fruit goes both ways, and nobody gives more than
    its endowment (``fields["endowments"]``, the players' endowments in order). A
    basket of every fruit kind is left out of the first player's options: the other
    could then give nothing. The one other answer is no trade: :data:`NOTHING` for
    both. Its option comes first or last as the request offers the no-trade case
    (``fields["order"]``, :func:`summary_cases`).

    Raises:
      ValueError: the endowments leave no exchange at all.
    """
    a, b = str(fields["player_a"]), str(fields["player_b"])
    own, other = (tuple(int(x) for x in e) for e in fields["endowments"])
    variants = {
        basket_text(mine): (choice(gives_key(b), [basket_text(t) for t in theirs]),)
        for mine in baskets(own)
        if (theirs := baskets(other, without=mine))
    }
    if not variants:
        raise ValueError(f"trade_answer: no exchange fits the endowments {own} and {other}")
    none = {NOTHING: (choice(gives_key(b), [NOTHING]),)}
    if list(fields["order"])[0] == NO_TRADE_CASE:
        variants = {**none, **variants}
    else:
        variants = {**variants, **none}
    return AnswerFormat(
        (choice(gives_key(a), list(variants)),), discriminator=gives_key(a), variants=variants
    )


# Text lengths bound each task's answer budget (gt_llm.prompts: a structured request's
# max_tokens is what its format can take): a message of a few sentences, a short
# calculation.
MESSAGE_ANSWER = AnswerFormat((text("message", 400),))
CALCULATION_ANSWER = AnswerFormat((text("calculation", 240),))
PAYOFF_ANSWER = AnswerFormat((number("value", -PAYOFF_RANGE, PAYOFF_RANGE),))
GUESS_ANSWER = AnswerFormat((choice("fruit", FRUITS),))

MESSAGE_HEADER = "#####\nTrade Proposal Message:\nfrom: {sender}\nto: {receiver}\n#####\n\n{text}"

_RULES = (
    "You are {speaker}, one of two people trading fruit by message. Each of you privately "
    "owns some apples, bananas and oranges and values each fruit differently. A trade is "
    "good for you when the fruit you receive is worth more to you than the fruit you give "
    "away. Write as {speaker} and sign with your name."
)

OPENING = PromptTemplate(
    task="fruit_trading.opening",
    system=_RULES,
    user=(
        "Your private information:\n{private_info}\n\n"
        "{steering}\n\n"
        "Write the first message to {opponent}, proposing a trade: say how many of which "
        "of your fruits you would give and how many of which fruits you want in return. "
        "Reply with the message only."
    ),
    # "player" (0 or 1, the speaker's index; implied by its name) routes the request to that
    # player's backend (games/fruit_trading/seats.py); so does it in the tasks below.
    extra_fields=("player", "endowment", "valuation", "tone", "believed_fruits", "belief_trust"),
    temperature=1.0,
    max_tokens=256,
    answer=MESSAGE_ANSWER,
    answer_line='Answer with a JSON object with the key "message" (your message).',
)

MESSAGE = PromptTemplate(
    task="fruit_trading.message",
    system=_RULES,
    user=(
        "Your private information:\n{private_info}\n\n"
        "The dialogue so far:\n{dialogue}\n\n"
        "{steering}\n\n"
        "Reply to {opponent}. You may accept the last proposal, reject the negotiation "
        "altogether, or counter-propose a different trade of specific numbers of fruit. "
        "Reply with the message only."
    ),
    extra_fields=(
        "player",
        "endowment",
        "valuation",
        "tone",
        "believed_fruits",
        "belief_trust",
        "turns",
    ),
    temperature=1.0,
    max_tokens=256,
    answer=MESSAGE_ANSWER,
    answer_line='Answer with a JSON object with the key "message" (your message).',
)

AGREEMENT = PromptTemplate(
    task="fruit_trading.agreement",
    system="You judge whether two people trading fruit have agreed on a trade.",
    user=(
        "The negotiation so far:\n{dialogue}\n\n"
        "They have agreed only if the last message accepts, unchanged, a specific trade "
        "that the other person proposed earlier. A question, a counter-proposal or a "
        "rejection is not an agreement. Have they agreed? Answer {labels_text}."
    ),
    extra_fields=("turns", "labels"),
    temperature=0.0,
    max_tokens=8,
    answer=agreement_answer,
    answer_line='Answer with a JSON object with the key "answer" ({labels_text}).',
)

SUMMARIZE_TRADE = PromptTemplate(
    task="fruit_trading.summarize_trade",
    system="You record agreed fruit trades exactly.",
    # {cases}: the trade case and the no-trade case, in the order the request offers them
    # (summary_cases); the format below serves both (no trade: each gives nothing).
    user=(
        "The negotiation:\n{dialogue}\n\n{cases}\n\n"
        "Report it with one line per player, in exactly this format:\n"
        "Player [Name]: Receives [fruit] Gives [fruit]\n"
        "using the players {player_a} and {player_b} and numbers of apples, bananas and "
        "oranges (write 'nothing' for no fruit)."
    ),
    extra_fields=("turns", "endowments", "order"),
    temperature=0.0,
    max_tokens=80,
    answer=trade_answer,
    answer_line=(
        'Answer with a JSON object with the keys "{player_a} gives" and "{player_b} gives": '
        "the fruit each of them gives the other (write 'nothing' for no fruit)."
    ),
)

COMPUTE_PAYOFF = PromptTemplate(
    task="fruit_trading.compute_payoff",
    system="You calculate the value of fruit trades step by step.",
    user=(
        "Private information of {name}:\n{private_info}\n\n"
        "The agreed trade:\n{trade}\n\n"
        "Calculate the value of this trade for {name} only: the value of the fruit {name} "
        "receives minus the value of the fruit {name} gives, using {name}'s valuations. "
        "Show the calculation and end with a line 'Value for {name}: <number>'."
    ),
    extra_fields=("player", "valuation"),
    temperature=0.0,
    max_tokens=200,
    answer=CALCULATION_ANSWER,
    answer_line=(
        'Answer with a JSON object with the key "calculation" (your calculation, ending '
        "with the value line)."
    ),
)

EXTRACT_PAYOFF = PromptTemplate(
    task="fruit_trading.extract_payoff",
    system="You extract numbers from text.",
    user=(
        "Here is a calculation of the value of a trade for {name}:\n{calculation}\n\n"
        "What is the final value for {name}? Answer with the number only."
    ),
    extra_fields=("player",),
    temperature=0.0,
    max_tokens=10,
    answer=PAYOFF_ANSWER,
    answer_line='Answer with a JSON object with the key "value" (the number).',
)

GUESS_FRUIT = PromptTemplate(
    task="fruit_trading.guess_fruit",
    system="You read negotiations and infer what people want.",
    user=(
        "You are {observer}, trading fruit with {opponent}. The dialogue so far:\n"
        "{dialogue}\n\n"
        "Which fruit does {opponent} want most: apples, bananas, or oranges? Answer with "
        "one word only."
    ),
    extra_fields=("player", "turns"),
    temperature=0.0,
    max_tokens=5,
    answer=GUESS_ANSWER,
    answer_line=('Answer with a JSON object with the key "fruit" (apples, bananas or oranges).'),
)

BOOK = PromptBook(
    [OPENING, MESSAGE, AGREEMENT, SUMMARIZE_TRADE, COMPUTE_PAYOFF, EXTRACT_PAYOFF,
     GUESS_FRUIT]
)  # fmt: skip

TONE_LINE = "Tone: Use {article} tone."
BELIEF_LINE = "Belief: You believe that {name} wants {fruits}."
#: The trust line of a model that keeps trust (GRATR): how far to rely on the belief.
TRUST_LINE = (
    "Trust: Your trust in {name}'s claims is {trust:+.2f} on a scale from -1 to 1 ({stance})."
)


def _article(tone: str) -> str:
    if tone == "any":
        return "any"
    return ("an " if tone[0] in "aeiou" else "a ") + tone


def join_fruits(fruits: Sequence[str]) -> str:
    """``["apples", "oranges"] -> "apples or oranges"``."""
    fruits = list(fruits)
    if len(fruits) <= 1:
        return "".join(fruits)
    return ", ".join(fruits[:-1]) + " or " + fruits[-1]


def steering_text(
    tone: str,
    opponent: str,
    believed_fruits: Sequence[str],
    trust: float | None = None,
    stance: str = "unsure",
) -> str:
    """The steering lines: always the tone; the belief only when one is given, and
    the trust in the opponent's claims when the opponent model keeps one."""
    lines = [TONE_LINE.format(article=_article(tone))]
    if believed_fruits:
        lines.append(BELIEF_LINE.format(name=opponent, fruits=join_fruits(believed_fruits)))
        if trust is not None:
            lines.append(TRUST_LINE.format(name=opponent, trust=trust, stance=stance))
    return "\n".join(lines)


def render_dialogue(turns: Sequence[dict]) -> str:
    """Dialogue text from turns ``{"sender", "receiver", "text"}``."""
    if not turns:
        return "(no messages yet)"
    return "\n\n".join(MESSAGE_HEADER.format(**t) for t in turns)
