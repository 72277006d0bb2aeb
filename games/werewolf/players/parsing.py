"""Parsers and documented fallbacks of the Werewolf LLM tasks.

Every parser reads the first JSON object of an answer (code fences and text
around it are tolerated), then validates it against the legal options the
request itself carries in its typed fields (``options``, ``acts``, ...). An
unknown or dead player, an act or tone not offered, a missing key or an
out-of-range number raises :class:`gt_llm.errors.ParseError` carrying the
raw text; the call driver then re-asks with deterministic seeds
(:class:`gt_llm.parsing.ParsePolicy`) and, when every attempt failed, uses
the task's fallback, which is logged and counted in
:class:`gt_llm.parsing.ParseStats`.

Fallbacks (one per task, :data:`FALLBACKS`):

* ``night_kill`` / ``night_protect`` / ``night_check`` / ``vote``: ``None`` —
  no choice (the runner treats it as abstaining / no action);
* ``night_witch``: ``WitchChoice(save=False, poison=None)`` — no potion used;
* ``bid``: ``0`` — the player does not ask to speak;
* ``speech_act``: the ``nothing`` act in the first tone offered;
* ``statement``: the flat rendering of the act (:func:`prompts.plain_statement`);
* ``scratchpad``: the old notes, unchanged;
* ``self_analysis`` / ``peer_analysis``: ``None`` — no analysis recorded (the
  deception scores are not updated).

Use :func:`parser_for` to get the one-argument parser of a request
(``text -> value``) that the call driver expects.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from games.werewolf.players import prompts
from games.werewolf.rules import SpeechAct
from gt_llm.chat import ChatRequest
from gt_llm.errors import ParseError
from gt_llm.parsing import parse_json_object

__all__ = [
    "FALLBACKS",
    "PARSERS",
    "FieldParser",
    "PeerReport",
    "SelfReport",
    "WitchChoice",
    "fallback_for",
    "parse_bid",
    "parse_peer_analysis",
    "parse_scratchpad",
    "parse_self_analysis",
    "parse_speech_act",
    "parse_statement",
    "parse_target",
    "parse_vote",
    "parse_witch",
    "parser_for",
    "read_bool",
    "read_choice",
    "read_player",
    "read_unit",
]


class FieldParser(Protocol):
    """``parse(text, fields) -> value``: a parser that validates against a request's fields."""

    def __call__(self, text: str, fields: Mapping[str, Any]) -> Any: ...


_PLAYER = re.compile(r"^\s*(?:player\s*)?(\d+)\s*$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class WitchChoice:
    """The witch's night: whether to save tonight's victim, and whom to poison."""

    save: bool = False
    poison: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"save": self.save, "poison": self.poison}


@dataclasses.dataclass(frozen=True)
class SelfReport:
    """A speaker's analysis of its own statement (parsed answer)."""

    deceptive: bool
    kind: str
    confidence: float


@dataclasses.dataclass(frozen=True)
class PeerReport:
    """An observer's analysis of another player's statement (parsed answer)."""

    deceptive: bool
    confidence: float
    suspicion: float
    reasoning: str


# --- value readers ------------------------------------------------------------------


def _obj(text: str, keys: tuple[str, ...]) -> dict[str, Any]:
    return parse_json_object(text, keys=keys)


def read_player(value: Any, options: Any, text: str, *, key: str) -> int:
    """The player id behind an answered number (``3``, ``"3"``, ``"Player 3"``).

    Raises:
      ParseError: not a player number, or not one of ``options`` (ids).
    """
    if isinstance(value, bool):
        raise ParseError(f'"{key}" as a player number', text)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _PLAYER.match(value):
        number = int(_PLAYER.match(value).group(1))  # type: ignore[union-attr]
    else:
        raise ParseError(f'"{key}" as a player number', text)
    player = prompts.player_from_number(number)
    legal = [int(p) for p in options]
    if player not in legal:
        raise ParseError(
            f'"{key}" one of {prompts.players_text(legal)} (got Player {number})', text
        )
    return player


def read_unit(value: Any, text: str, *, key: str) -> float:
    """A number in [0, 1].

    Raises:
      ParseError: not a number, or out of range.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ParseError(f'"{key}" as a number from 0 to 1', text)
    try:
        x = float(value)
    except ValueError:
        raise ParseError(f'"{key}" as a number from 0 to 1', text) from None
    if not math.isfinite(x) or not 0.0 <= x <= 1.0:
        raise ParseError(f'"{key}" from 0 to 1 (got {value!r})', text)
    return x


def read_bool(value: Any, text: str, *, key: str) -> bool:
    """``true``/``false`` (also the strings ``"true"``/``"false"``, ``"yes"``/``"no"``).

    Raises:
      ParseError: anything else.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    raise ParseError(f'"{key}" as true or false', text)


def read_choice(value: Any, options: Any, text: str, *, key: str) -> str:
    """One of ``options`` (case-insensitive; spaces and underscores equal).

    Raises:
      ParseError: not one of the options.
    """
    norm = {str(o).lower().replace(" ", "_"): str(o) for o in options}
    if isinstance(value, str) and value.strip().lower().replace(" ", "_") in norm:
        return norm[value.strip().lower().replace(" ", "_")]
    raise ParseError(f'"{key}" one of {list(options)} (got {value!r})', text)


# --- task parsers -------------------------------------------------------------------


def parse_target(text: str, fields: Mapping[str, Any]) -> int:
    """``{"target": n}`` with ``n`` one of ``fields["options"]`` (night kill/protect/check)."""
    obj = _obj(text, ("target",))
    return read_player(obj["target"], fields["options"], text, key="target")


def parse_vote(text: str, fields: Mapping[str, Any]) -> int:
    """``{"vote": n}`` with ``n`` one of ``fields["options"]``."""
    obj = _obj(text, ("vote",))
    return read_player(obj["vote"], fields["options"], text, key="vote")


def parse_witch(text: str, fields: Mapping[str, Any]) -> WitchChoice:
    """``{"save": bool, "poison": n | null}``, checked against the potions left.

    Raises:
      ParseError: saving with no victim or no healing potion, poisoning with no
        poison left or a player not in ``options``, or poisoning the victim one
        also saves.
    """
    obj = _obj(text, ("save", "poison"))
    save = read_bool(obj["save"], text, key="save")
    if save and (not fields["can_save"] or fields["victim"] is None):
        raise ParseError('"save": false (no victim to save, or the potion is used)', text)
    poison = None
    if obj["poison"] not in (None, "null", "none", "nobody", ""):
        if not fields["can_poison"]:
            raise ParseError('"poison": null (the poison is used)', text)
        poison = read_player(obj["poison"], fields["options"], text, key="poison")
        if save and poison == fields["victim"]:
            raise ParseError("not both saving and poisoning the same player", text)
    return WitchChoice(save=save, poison=poison)


def parse_bid(text: str, fields: Mapping[str, Any]) -> int:
    """``{"bid": b}`` with ``b`` a whole number in :data:`prompts.BID_RANGE`."""
    obj = _obj(text, ("bid",))
    value = obj["bid"]
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    lo, hi = prompts.BID_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ParseError(f'"bid" a whole number from {lo} to {hi} (got {value!r})', text)
    return value


def parse_speech_act(text: str, fields: Mapping[str, Any]) -> SpeechAct:
    """``{"act", "tone"[, "target"][, "role"][, "result"]}`` among the offered options.

    accuse/defend need a target; share_check needs a target and a result;
    claim needs a role; nothing needs neither. Keys an act does not need are ignored.
    """
    obj = _obj(text, ("act", "tone"))
    kind = read_choice(obj["act"], fields["acts"], text, key="act")
    tone = read_choice(obj["tone"], fields["tones"], text, key="tone")
    target = role = result = None
    if kind in ("accuse", "defend", "share_check"):
        if "target" not in obj:
            raise ParseError(f'a "target" for the act {kind}', text)
        target = read_player(obj["target"], fields["targets"], text, key="target")
    if kind == "claim":
        if "role" not in obj:
            raise ParseError('a "role" for the act claim', text)
        role = read_choice(obj["role"], fields["roles"], text, key="role")
    if kind == "share_check":
        if "result" not in obj:
            raise ParseError('a "result" for the act share_check', text)
        result = read_choice(obj["result"], fields["results"], text, key="result")
    return SpeechAct(kind, tone, target=target, role=role, result=result)


def parse_statement(text: str, fields: Mapping[str, Any]) -> str:
    """``{"statement": "..."}``, non-empty."""
    obj = _obj(text, ("statement",))
    value = obj["statement"]
    if not isinstance(value, str) or not value.strip():
        raise ParseError('"statement" as non-empty text', text)
    return value.strip()


def parse_scratchpad(text: str, fields: Mapping[str, Any]) -> str:
    """``{"scratchpad": "..."}`` (text; may be empty)."""
    obj = _obj(text, ("scratchpad",))
    value = obj["scratchpad"]
    if not isinstance(value, str):
        raise ParseError('"scratchpad" as text', text)
    return value.strip()


def parse_self_analysis(text: str, fields: Mapping[str, Any]) -> SelfReport:
    """``{"deceptive", "type", "confidence"}``; type is none exactly when not deceptive."""
    obj = _obj(text, ("deceptive", "type", "confidence"))
    deceptive = read_bool(obj["deceptive"], text, key="deceptive")
    kind = read_choice(obj["type"], prompts.DECEPTION_TYPES, text, key="type")
    if deceptive == (kind == "none"):
        raise ParseError('"type" none exactly when "deceptive" is false', text)
    confidence = read_unit(obj["confidence"], text, key="confidence")
    return SelfReport(deceptive=deceptive, kind=kind, confidence=confidence)


def parse_peer_analysis(text: str, fields: Mapping[str, Any]) -> PeerReport:
    """``{"label", "confidence", "suspicion", "reasoning"}``."""
    obj = _obj(text, ("label", "confidence", "suspicion", "reasoning"))
    label = read_choice(obj["label"], prompts.PEER_LABELS, text, key="label")
    confidence = read_unit(obj["confidence"], text, key="confidence")
    suspicion = read_unit(obj["suspicion"], text, key="suspicion")
    reasoning = obj["reasoning"]
    if not isinstance(reasoning, str):
        raise ParseError('"reasoning" as text', text)
    return PeerReport(
        deceptive=label == "deceptive",
        confidence=confidence,
        suspicion=suspicion,
        reasoning=reasoning.strip(),
    )


# --- fallbacks ----------------------------------------------------------------------


def _fallback_speech_act(request: ChatRequest) -> SpeechAct:
    tones = list(request.fields["tones"])
    return SpeechAct("nothing", tones[0] if tones else "calm")


def _fallback_statement(request: ChatRequest) -> str:
    return prompts.plain_statement(request.fields["act"])


PARSERS: dict[str, FieldParser] = {
    prompts.NIGHT_KILL.task: parse_target,
    prompts.NIGHT_PROTECT.task: parse_target,
    prompts.NIGHT_CHECK.task: parse_target,
    prompts.NIGHT_WITCH.task: parse_witch,
    prompts.BID.task: parse_bid,
    prompts.SPEECH_ACT.task: parse_speech_act,
    prompts.STATEMENT.task: parse_statement,
    prompts.VOTE.task: parse_vote,
    prompts.SCRATCHPAD.task: parse_scratchpad,
    prompts.SELF_ANALYSIS.task: parse_self_analysis,
    prompts.PEER_ANALYSIS.task: parse_peer_analysis,
}

#: Fallbacks, used only after every re-ask failed (see the module docstring).
FALLBACKS: dict[str, Callable[[ChatRequest], Any]] = {
    prompts.NIGHT_KILL.task: lambda r: None,
    prompts.NIGHT_PROTECT.task: lambda r: None,
    prompts.NIGHT_CHECK.task: lambda r: None,
    prompts.NIGHT_WITCH.task: lambda r: WitchChoice(),
    prompts.BID.task: lambda r: 0,
    prompts.SPEECH_ACT.task: _fallback_speech_act,
    prompts.STATEMENT.task: _fallback_statement,
    prompts.VOTE.task: lambda r: None,
    prompts.SCRATCHPAD.task: lambda r: str(r.fields["scratchpad"]),
    prompts.SELF_ANALYSIS.task: lambda r: None,
    prompts.PEER_ANALYSIS.task: lambda r: None,
}


def parser_for(request: ChatRequest) -> Callable[[str], Any]:
    """The one-argument parser of ``request``: its task's parser bound to its fields.

    A structured request (one with a schema) is first read through its task's
    answer format (:mod:`games.werewolf.players.prompts`), built from the same
    fields: an answer outside the format is a parse error even where the
    tolerant parser below would accept it (e.g. ``"Player 3"`` for a number).
    """
    try:
        parse = PARSERS[request.task]
    except KeyError:
        raise KeyError(
            f"parser_for: no Werewolf parser for task {request.task!r}; known: {sorted(PARSERS)}"
        ) from None
    bound = functools.partial(parse, fields=request.fields)
    if request.schema is None:
        return bound
    fmt = prompts.BOOK[request.task].answer_format(request.fields)

    def structured(text: str) -> Any:
        fmt.read(text)
        return bound(text)

    return structured


def fallback_for(request: ChatRequest) -> Any:
    """The documented fallback value of ``request``'s task."""
    return FALLBACKS[request.task](request)
