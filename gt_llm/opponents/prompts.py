"""The prompt book of the opponent models' own LLM tasks.

* ``opponents.identity`` — GRATR appendix 1: identity judgments in the format
  ``[Player][identity][confidence][analysis]``;
* ``opponents.intent`` — GRATR appendix 2: intents in the format
  ``[Role1][Type][Role2][Reason][Score]`` (Attack / Defend / Deceive);
* ``opponents.rerank`` — the rerank baseline's relevance score, ``Relevance: N``.

The line formats are the paper's; the sentences are ours. The reasoning
prompt of appendix 3 belongs to each game's prompt book: it is rendered from
the :class:`~gt_llm.opponents.base.PromptFields` every opponent model gives.
Requests are built by :mod:`gt_llm.opponents.extraction`.
"""

from __future__ import annotations

from gt_llm.prompts import PromptBook, PromptTemplate

_IDENTITY_SYSTEM = (
    "You read statements made in a social deduction game and infer the hidden identities of "
    "players, with a confidence for each inference."
)

_IDENTITY_USER = """Players: {players_text}. You are {self_id}; your own identity is {self_role}.
Possible identities: {options_text}.
Identities that only one player can have: {unique_text}. Someone who claims one of these while another player holds it is lying, and a liar is most likely: {impostor}.
Anything the moderator says is true.

Statement by {speaker}:
{statement}

For every player this statement tells you something about, write one line
[Player][identity][confidence][analysis]
with identity one of the possible identities or unsure, confidence a number from 0 to 10
(10 is certain, below 5 is a guess) and a short analysis. One player per line; nothing else.
If it tells you nothing, answer none."""

_INTENT_SYSTEM = (
    "You analyse what players of a social deduction game try to do to each other with their "
    "statements."
)

_INTENT_USER = """Players: {players_text}. You are {self_id}; your own identity is {self_role}.
Identities that only one player can have: {unique_text}. A liar is most likely: {impostor}.

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
Nothing else; answer none if the statement concerns nobody."""

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
        ),
        PromptTemplate(
            task="opponents.intent",
            system=_INTENT_SYSTEM,
            user=_INTENT_USER,
            extra_fields=("players", "unique", "act"),
            temperature=0.3,
            max_tokens=400,
        ),
        PromptTemplate(
            task="opponents.rerank",
            system=_RERANK_SYSTEM,
            user=_RERANK_USER,
            extra_fields=("focus",),
            temperature=0.0,
            max_tokens=16,
        ),
    ]
)

__all__ = ["OPPONENT_PROMPTS"]
