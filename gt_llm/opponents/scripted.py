"""Scripted stand-in answers for the opponent models' tasks (not an LLM).

Registered with :func:`gt_llm.backends.scripted.register_scripted_task`. Each
handler decides from the request's typed fields — the statement's structured
speech act (``act``: kind, speaker, target, role), the observer (``self_id``,
``self_role``), the ``unique`` identities and the ``impostor`` — never from the
prompt text, and writes its answer in the paper's line formats so that it goes
through the same parsers as a real model's.

Rules (deterministic; the request's generator is not needed):

* ``opponents.identity``:
  ``reveal`` -> ``[target][role][10]``;
  ``claim`` of a unique role the observer holds -> the speaker is the impostor (8),
  otherwise -> ``[speaker][role][7]``;
  ``share_check`` about the observer that contradicts its own role -> the speaker is
  the impostor (8), about another player -> ``[target][role][6]``;
  ``accuse`` -> ``[target][impostor][4]`` (``unsure`` without an impostor);
  ``defend`` -> ``[target][unsure][0]``; ``nothing`` -> ``none``.
* ``opponents.intent``:
  ``accuse`` -> Attack 8; ``defend`` -> Defend 7;
  ``claim`` -> Deceive towards the observer (8) when it is a lie as above, else
  self-defence (Defend the speaker, 5);
  ``share_check`` -> Deceive 9 when it lies about the observer, Attack 9 when it
  reports the impostor, else Defend 6; ``reveal`` / ``nothing`` -> ``none``.
* ``opponents.rerank``: ``Relevance: N`` with N = 6 if the speaker is one of the
  decision's ``focus`` players, + 4 if the message is about one of them (another
  player than the speaker), capped at 10.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gt_llm.backends.scripted import register_scripted_task
from gt_llm.opponents.base import UNSURE


def _impostor(fields: Mapping[str, Any]) -> str:
    imp = str(fields.get("impostor", ""))
    return "" if imp in ("", "none") else imp


def _claim_is_lie(fields: Mapping[str, Any], role: str) -> bool:
    return role in tuple(fields.get("unique", ())) and role == fields.get("self_role")


def _check_is_lie(fields: Mapping[str, Any], target: str, role: str) -> bool:
    own = fields.get("self_role", "unknown")
    return target == fields.get("self_id") and own != "unknown" and role != own


def scripted_identity(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Identity judgments from the speech act (module docstring)."""
    act = fields["act"]
    kind, speaker, target, role = act["kind"], act["speaker"], act["target"], act["role"]
    imp = _impostor(fields) or UNSURE
    if kind == "reveal":
        return f"[{target}][{role}][10][The moderator says so.]"
    if kind == "claim":
        if _claim_is_lie(fields, role):
            return f"[{speaker}][{imp}][8][{role} is my own identity, so this claim is false.]"
        return f"[{speaker}][{role}][7][{speaker} claims to be the {role}.]"
    if kind == "share_check":
        if _check_is_lie(fields, target, role):
            return f"[{speaker}][{imp}][8][The check about me is false.]"
        return f"[{target}][{role}][6][{speaker} reports checking {target}.]"
    if kind == "accuse":
        conf = 4 if imp != UNSURE else 0
        return f"[{target}][{imp}][{conf}][{speaker} accuses {target}.]"
    if kind == "defend":
        return f"[{target}][{UNSURE}][0][{speaker} defends {target}; that alone says little.]"
    return "none"


def scripted_intent(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Intents from the speech act (module docstring)."""
    act = fields["act"]
    kind, speaker, target, role = act["kind"], act["speaker"], act["target"], act["role"]
    me = fields["self_id"]
    if kind == "accuse":
        return f"[{speaker}][Attack][{target}][{speaker} accuses {target}.][8]"
    if kind == "defend":
        return f"[{speaker}][Defend][{target}][{speaker} vouches for {target}.][7]"
    if kind == "claim":
        if _claim_is_lie(fields, role):
            return f"[{speaker}][Deceive][{me}][A false claim to my own identity.][8]"
        return f"[{speaker}][Defend][{speaker}][Self-defence by claiming {role}.][5]"
    if kind == "share_check":
        if _check_is_lie(fields, target, role):
            return f"[{speaker}][Deceive][{me}][A false check about me.][9]"
        if role == _impostor(fields):
            return f"[{speaker}][Attack][{target}][Reports {target} as {role}.][9]"
        return f"[{speaker}][Defend][{target}][Reports {target} as {role}.][6]"
    return "none"


def scripted_rerank(fields: Mapping[str, Any], rng: np.random.Generator) -> str:
    """Relevance from who spoke and whom the message is about (module docstring)."""
    focus = set(fields.get("focus", ()))
    score = 6 if fields["speaker"] in focus else 0
    if fields["target"] != fields["speaker"] and fields["target"] in focus:
        score += 4
    return f"Relevance: {min(score, 10)}"


def _whole(x: float) -> int:
    if not float(x).is_integer():
        raise ValueError(f"not a whole number: {x}")
    return int(x)


def identity_json(text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The structured form of a bracket-line identity answer (same records)."""
    from gt_llm.opponents.extraction import parse_identity_judgments

    parsed = parse_identity_judgments(
        text, players=list(fields["players"]), identities=list(fields["options"]), strict=True
    )
    return {
        "judgments": [
            {
                "player": j.player,
                "identity": j.identity,
                "confidence": _whole(j.confidence),
                "analysis": j.analysis,
            }
            for j in parsed.items
        ]
    }


def intent_json(text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The structured form of a bracket-line intent answer (same records)."""
    from gt_llm.opponents.extraction import parse_intents

    parsed = parse_intents(text, players=list(fields["players"]), strict=True)
    return {
        "intents": [
            {
                "actor": i.actor,
                "type": i.type,
                "target": i.target,
                "reason": i.reason,
                "score": _whole(i.score),
            }
            for i in parsed.items
        ]
    }


def rerank_json(text: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The structured form of a ``Relevance: N`` answer."""
    from gt_llm.opponents.extraction import parse_relevance

    return {"relevance": _whole(parse_relevance(text))}


register_scripted_task("opponents.identity", scripted_identity, as_json=identity_json)
register_scripted_task("opponents.intent", scripted_intent, as_json=intent_json)
register_scripted_task("opponents.rerank", scripted_rerank, as_json=rerank_json)

__all__ = ["scripted_identity", "scripted_intent", "scripted_rerank"]
