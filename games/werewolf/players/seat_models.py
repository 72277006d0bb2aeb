"""How a Werewolf seat's opponent model is built: settings, context, prior, model.

Every model's prior is the role counts among the *other* players (the
seat's own role taken out; :func:`seat_context`). Dirichlet in Werewolf: per
other player a Dirichlet over the roles in play with that prior mean and
total concentration K; an identity judgment with confidence >= ``threshold``
(default 0.5, i.e. 5 of 10) adds one to that role (the paper's +1 rule; below
the threshold the judgment is recorded and adds nothing). The seats' belief
providers (:mod:`games.werewolf.players.beliefs`) and the day study build
their models here (:func:`make_seat_model`), so the rule is the same
everywhere.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from games.werewolf.players import prompts
from games.werewolf.rules import ROLES, Config
from gt_llm.opponents import (
    DirichletBelief,
    OpponentContext,
    OpponentModel,
    make_opponent_model,
    opponent_models,
)

__all__ = [
    "BeliefSettings",
    "WOLF",
    "check_model_name",
    "hypotheses_of",
    "make_seat_model",
    "role_prior",
    "seat_context",
]

WOLF = "werewolf"


@dataclasses.dataclass(frozen=True)
class BeliefSettings:
    """Settings shared by every seat's provider.

    Attributes:
      k: The history window (last K messages; GRATR paper: 15).
      top_k: Messages the retrieval baselines put in the prompt.
      threshold: Dirichlet: minimum confidence (0-1) for a judgment to add one.
      vote_credibility: Strength of the Attack intent a vote is (in (0, 1]).
      structured: GRATR's extraction calls ask for JSON records under their schema.
    """

    k: int = 15
    top_k: int = 5
    threshold: float = 0.5
    vote_credibility: float = 0.5
    structured: bool = False

    def __post_init__(self) -> None:
        if self.k < 1 or self.top_k < 1:
            raise ValueError("BeliefSettings: k and top_k must be >= 1")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"BeliefSettings: threshold must be in [0, 1], got {self.threshold}")
        if not 0.0 < self.vote_credibility <= 1.0:
            raise ValueError(
                f"BeliefSettings: vote_credibility must be in (0, 1], got {self.vote_credibility}"
            )


def check_model_name(where: str, name: str) -> None:
    """Raises ValueError naming ``where`` when ``name`` is not a registered model."""
    if name not in opponent_models():
        raise ValueError(
            f"{where}: unknown opponent model {name!r}; choose from {opponent_models()}"
        )


def hypotheses_of(config: Config) -> tuple[str, ...]:
    """The roles in play, in ``rules.ROLES`` order (the models' hypotheses)."""
    return tuple(r for r in ROLES if config.roles.count(r) > 0)


def seat_context(
    config: Config,
    seat: int,
    role: str,
    settings: BeliefSettings = BeliefSettings(),
    *,
    chat: Any = None,
) -> OpponentContext:
    """The typed context of ``seat``'s model: players by name, roles, alignment by side.

    Alignment: a werewolf's allies are werewolves (+1) and everyone else is an
    adversary (-1); for everyone else it is the other way round. Prior: the
    role counts among the other players (:func:`role_prior`).
    """
    hyps = hypotheses_of(config)
    side = 1.0 if role == WOLF else -1.0
    return OpponentContext(
        prior=role_prior(config, role),
        players=tuple(prompts.player_name(p) for p in range(config.num_players)),
        self_id=prompts.player_name(seat),
        hypotheses=hyps,
        k=settings.k,
        top_k=settings.top_k,
        alignment={h: side if h == WOLF else -side for h in hyps},
        self_role=role,
        chat=chat,
    )


def role_prior(config: Config, role: str) -> dict[str, float]:
    """How many of the *other* players have each role in play (the seat's own taken out)."""
    counts = {h: float(config.roles.count(h)) for h in hypotheses_of(config)}
    if role in counts:
        counts[role] -= 1.0
    return counts


def make_seat_model(
    name: str,
    config: Config,
    seat: int,
    role: str,
    settings: BeliefSettings = BeliefSettings(),
    *,
    chat: Any = None,
) -> OpponentModel:
    """``seat``'s opponent model registered as ``name`` (the arena's and the day study's).

    Dirichlet gets ``settings.threshold`` (module docstring); the rerank baseline
    gets ``chat`` to score relevance (the other models ignore it).

    Raises:
      ValueError: an unknown model name or role.
    """
    check_model_name("make_seat_model", name)
    if role not in ROLES:
        raise ValueError(f"make_seat_model: role must be one of {ROLES}, got {role!r}")
    ctx = seat_context(config, seat, role, settings, chat=chat if name == "rerank-rag" else None)
    if name == "dirichlet":
        return DirichletBelief(hypotheses=ctx.hypotheses, context=ctx, threshold=settings.threshold)
    return make_opponent_model(name, ctx)
