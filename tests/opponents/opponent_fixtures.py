"""Shared helpers of the opponent-model tests: an 8-player Werewolf-like context.

A uniquely named module (not ``conftest``), so that importing it by name never
picks up another folder's conftest.
"""

from __future__ import annotations

from gt_llm.opponents import OpponentContext

PLAYERS = tuple(f"Player {i}" for i in range(1, 9))
ROLES = ("werewolf", "villager", "seer", "witch", "guard")
ALIGNMENT = {"werewolf": -1.0, "villager": 1.0, "seer": 1.0, "witch": 1.0, "guard": 1.0}


def werewolf_context(**overrides) -> OpponentContext:
    fields = dict(
        players=PLAYERS,
        self_id="Player 1",
        hypotheses=ROLES,
        alignment=ALIGNMENT,
        self_role="villager",
        k=15,
        top_k=3,
    )
    fields.update(overrides)
    return OpponentContext(**fields)
