"""The two traders on different backends: which backend answers each fruit-trading request.

A player's own requests carry its index as ``player`` (:mod:`games.fruit_trading.dialogue`):
its messages (opening and replies), its payoff computation and the number read
from it, and its guess of the opponent's fruit. The agreement judge and the
trade summary are neutral: they go to the default backend (``--backend``). A
task this rule does not know is an error (:class:`~gt_llm.routing.UnroutedRequest`),
never a silent default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gt_llm.chat import ChatModel, ChatRequest
from gt_llm.routing import RoutedModel, UnroutedRequest

__all__ = ["NEUTRAL_TASKS", "PLAYER_TASKS", "player_of_request", "player_routed_model"]

#: Tasks made on behalf of one player (their ``player`` field).
PLAYER_TASKS = frozenset(
    {
        "fruit_trading.opening",
        "fruit_trading.message",
        "fruit_trading.compute_payoff",
        "fruit_trading.extract_payoff",
        "fruit_trading.guess_fruit",
    }
)
#: Tasks of the neutral judge (the default backend).
NEUTRAL_TASKS = frozenset({"fruit_trading.agreement", "fruit_trading.summarize_trade"})


def player_of_request(request: ChatRequest) -> int | None:
    """The player (0 or 1) a fruit-trading request is made for; None for the judge's.

    Raises:
      UnroutedRequest: a task of neither kind, or a player task without its player.
    """
    if request.task in NEUTRAL_TASKS:
        return None
    player = request.fields.get("player")
    if request.task in PLAYER_TASKS and player in (0, 1):
        return int(player)
    raise UnroutedRequest(
        f"player_of_request: task {request.task!r} is neither a player's (with 'player' 0 or 1) "
        f"nor the judge's; add it to games.fruit_trading.seats"
    )


def player_routed_model(
    models: Mapping[str, ChatModel], players: Sequence[str], default: str
) -> RoutedModel:
    """Each player's requests to ``models[players[p]]``, the judge's to ``models[default]``.

    Args:
      models: The loaded models by backend spec (the caller closes them).
      players: The two players' backend specs.
      default: The judge's backend spec.
    """
    if len(players) != 2:
        raise ValueError(f"player_routed_model: give 2 player backends, got {len(players)}")

    def route(request: ChatRequest) -> str:
        p = player_of_request(request)
        return default if p is None else players[p]

    # Keyed by backend spec: a failed call's error names its backend already.
    return RoutedModel(models, route, name_keys=False)
