"""Every prompt of the fruit-trading game, in one place.

Templates follow the structure of the chat-games fruit trade (instructions,
the player's private information, the dialogue so far, then the ask); the
sentences are gt-llm's own. The steering lines follow the paper's formats:
``Tone: Use {tone} tone.`` and ``Belief: You believe that {name} wants
{fruit(s)}.``
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.fruit_trading.rules import FRUITS, PAYOFF_BOUND
from gt_llm.answers import AnswerFormat, choice, integer, nested, text
from gt_llm.prompts import PromptBook, PromptTemplate

# --- structured answers: one format per task (the schema and the validator) ----------

#: Largest count of one fruit a trade summary may name: two players' largest endowments.
MAX_TRADE_COUNT = 4
#: Legal payoff values: whole numbers within what any trade can pay.
PAYOFF_VALUES = range(-PAYOFF_BOUND, PAYOFF_BOUND + 1)
#: The two answers of the agreement question.
YES_NO = ("Yes", "No")
#: The orders in which the agreement judge is offered its two labels. The judge is
#: asked once in each order and the players agreed only when both answers say so, so
#: its verdict cannot depend on which label comes first.
LABEL_ORDERS: tuple[tuple[str, str], ...] = (YES_NO, (YES_NO[1], YES_NO[0]))


def _basket(name: str) -> Any:
    return nested(name, [integer(f, range(MAX_TRADE_COUNT + 1)) for f in FRUITS])


def agreement_answer(fields: Mapping[str, Any]) -> AnswerFormat:
    """``{"answer": label}`` with the labels in the order the request offers them."""
    return AnswerFormat((choice("answer", [str(x) for x in fields["labels"]]),))


def labels_text(labels: Sequence[str]) -> str:
    """``("No", "Yes") -> "No or Yes"``: the labels in the order they are offered."""
    return " or ".join(labels)


def trade_answer(fields: Mapping[str, Any]) -> AnswerFormat:
    """The trade summary: for each of the two players, the fruit received and given."""
    return AnswerFormat(
        tuple(
            nested(str(fields[k]), [_basket("receives"), _basket("gives")])
            for k in ("player_a", "player_b")
        )
    )


# Text lengths bound each task's answer budget (gt_llm.prompts: a structured request's
# max_tokens is what its format can take): a message of a few sentences, a short
# calculation.
MESSAGE_ANSWER = AnswerFormat((text("message", 400),))
CALCULATION_ANSWER = AnswerFormat((text("calculation", 240),))
PAYOFF_ANSWER = AnswerFormat((integer("value", PAYOFF_VALUES),))
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
    extra_fields=("endowment", "valuation", "tone", "believed_fruits", "belief_trust"),
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
    extra_fields=("endowment", "valuation", "tone", "believed_fruits", "belief_trust", "turns"),
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
    user=(
        "The negotiation:\n{dialogue}\n\n"
        "The last message accepts a trade. Report that trade with one line per player, in "
        "exactly this format:\n"
        "Player [Name]: Receives [fruit] Gives [fruit]\n"
        "using the players {player_a} and {player_b} and numbers of apples, bananas and "
        "oranges (write 'nothing' for no fruit)."
    ),
    extra_fields=("turns",),
    temperature=0.0,
    max_tokens=80,
    answer=trade_answer,
    answer_line=(
        "Answer with a JSON object with one key per player ({player_a} and {player_b}), "
        'each holding "receives" and "gives": the numbers of apples, bananas and oranges.'
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
    extra_fields=("valuation",),
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
    extra_fields=("turns",),
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
