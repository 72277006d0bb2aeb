"""The prompt book of the opponent models' own LLM tasks.

* ``opponents.identity`` — GRATR appendix 1: identity judgments in the format
  ``[Player][identity][confidence][analysis]``;
* ``opponents.intent`` — GRATR appendix 2: intents in the format
  ``[Role1][Type][Role2][Reason][Score]`` (Attack / Defend / Deceive);
* ``opponents.rerank`` — the rerank baseline's relevance score, ``Relevance: N``.

Each task also declares its structured answer (:mod:`gt_llm.answers`): the
same records as JSON lists whose players, identities and intent types are the
request's own options and whose scores are whole numbers from 0 to 10.

The line formats are the paper's; the sentences are ours. The reasoning
prompt of appendix 3 belongs to each game's prompt book: it is rendered from
the :class:`~gt_llm.opponents.base.PromptFields` every opponent model gives.
Requests are built by :mod:`gt_llm.opponents.extraction`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gt_llm.answers import AnswerFormat, choice, integer, items, text
from gt_llm.opponents.base import UNSURE
from gt_llm.prompts import PromptBook, PromptTemplate

#: GRATR's intent types (appendix 2).
INTENT_TYPES: tuple[str, ...] = ("Attack", "Defend", "Deceive")
#: Scores, confidences and relevances: whole numbers from 0 to 10.
SCORES = range(11)
#: Longest analysis or reason in a structured record.
REASON_CHARS = 120


def identity_answer(fields: Mapping[str, Any]) -> AnswerFormat:
    """``{"judgments": [{"player", "identity", "confidence", "analysis"}, ...]}``."""
    players = [str(p) for p in fields["players"]]
    record = [
        choice("player", players),
        choice("identity", [str(o) for o in fields["options"]] + [UNSURE]),
        integer("confidence", SCORES),
        text("analysis", REASON_CHARS),
    ]
    return AnswerFormat((items("judgments", record, max_items=len(players)),))


def intent_answer(fields: Mapping[str, Any]) -> AnswerFormat:
    """``{"intents": [{"actor", "type", "target", "reason", "score"}, ...]}``."""
    players = [str(p) for p in fields["players"]]
    record = [
        choice("actor", players),
        choice("type", INTENT_TYPES),
        choice("target", players),
        text("reason", REASON_CHARS),
        integer("score", SCORES),
    ]
    return AnswerFormat((items("intents", record, max_items=len(players)),))


RERANK_ANSWER = AnswerFormat((integer("relevance", SCORES),))

_IDENTITY_SYSTEM = (
    "You read statements made in a social deduction game and infer the hidden identities of "
    "players, with a confidence for each inference."
)

# Laid out for prefix reuse: the table and the statement (the same for every observer of
# it) first, then the task's instructions, and the observer's own part last (who it is,
# its identity, whom it takes for a liar), so that every observer's request about one
# statement shares all but its last lines.
_IDENTITY_USER = """Players: {players_text}.
Possible identities: {options_text}.
Identities that only one player can have: {unique_text}. Someone who claims one of these while another player holds it is lying.
Anything the moderator says is true.

Statement by {speaker}:
{statement}

For every player this statement tells you something about, write one line
[Player][identity][confidence][analysis]
with identity one of the possible identities or unsure, confidence a number from 0 to 10
(10 is certain, below 5 is a guess) and a short analysis. One player per line; nothing else.
If it tells you nothing, answer none.

You are {self_id}; your own identity is {self_role}. Whoever lies about an identity that only one player can have is most likely: {impostor}."""

_INTENT_SYSTEM = (
    "You analyse what players of a social deduction game try to do to each other with their "
    "statements."
)

_INTENT_USER = """Players: {players_text}.
Identities that only one player can have: {unique_text}.

Statement by {speaker}:
{statement}

Classify what the speaker does to each player the statement concerns:
Attack - questions or accuses the player, or gives evidence against them;
Defend - argues the player is innocent (the player may be the speaker, in self-defence);
Deceive - tries to mislead with false information.
Write one line per player in the form
[Role1][Type][Role2][Reason][Score]
where Role1 is the speaker, Role2 the player concerned (names as listed above), Type one of
Attack, Defend, Deceive, and Score from 0 (very weak) to 10 (very strong).
Nothing else; answer none if the statement concerns nobody.

You are {self_id}; your own identity is {self_role}. A liar is most likely: {impostor}."""

_RERANK_SYSTEM = "You judge how useful a past message is for a decision in a game."

_RERANK_USER = """Decision: {goal}
Players it concerns: {focus_text}

Message {step}, by {speaker}, about {target}:
{message}

How relevant is this message to the decision? Answer with one line
Relevance: N
with N from 0 (irrelevant) to 10 (essential)."""

OPPONENT_PROMPTS = PromptBook(
    [
        PromptTemplate(
            task="opponents.identity",
            system=_IDENTITY_SYSTEM,
            user=_IDENTITY_USER,
            # Typed copies of what the text spells out (players, options, unique
            # identities) and the speech act the statement text performs.
            extra_fields=("players", "options", "unique", "act"),
            temperature=0.3,
            max_tokens=400,
            answer=identity_answer,
            answer_line=(
                'Answer with a JSON object with the key "judgments": a list with one object '
                'per player (keys "player", "identity", "confidence", "analysis"), empty if '
                "the statement tells you nothing."
            ),
        ),
        PromptTemplate(
            task="opponents.intent",
            system=_INTENT_SYSTEM,
            user=_INTENT_USER,
            extra_fields=("players", "unique", "act"),
            temperature=0.3,
            max_tokens=400,
            answer=intent_answer,
            answer_line=(
                'Answer with a JSON object with the key "intents": a list with one object '
                'per player concerned (keys "actor", "type", "target", "reason", "score"), '
                "empty if the statement concerns nobody."
            ),
        ),
        PromptTemplate(
            task="opponents.rerank",
            system=_RERANK_SYSTEM,
            user=_RERANK_USER,
            extra_fields=("focus",),
            temperature=0.0,
            max_tokens=16,
            answer=RERANK_ANSWER,
            answer_line='Answer with a JSON object with the key "relevance" (N).',
        ),
    ]
)

__all__ = ["INTENT_TYPES", "OPPONENT_PROMPTS", "RERANK_ANSWER", "identity_answer", "intent_answer"]
