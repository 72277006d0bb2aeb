"""Requests of a scripted-built fruit tree and Werewolf game, round by round.

What the local model's benchmark (``local_model.py``) and its real-model test
(``tests/llm/test_local.py``) replay: each round is one batch the engine sent,
each distinct request kept once (what the call cache would ask a backend).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import games  # noqa: F401  (registers the scripted answers)
from games.fruit_trading.experiment import run_experiment
from games.fruit_trading.settings import ExperimentSettings
from games.werewolf import rules
from games.werewolf.arena.matches import play_arena_game
from gt_llm.backends.scripted import ScriptedModel
from gt_llm.chat import ChatRequest
from gt_llm.recording import RecordingModel


def _distinct(rounds: list[list[ChatRequest]], limit: int) -> list[list[ChatRequest]]:
    """Each request once (first time it is sent), the first ``limit`` of them, in rounds."""
    seen: set[str] = set()
    out: list[list[ChatRequest]] = []
    left = limit
    for batch in rounds:
        kept = []
        for r in batch:
            key = r.cache_key("local", "model")
            if key not in seen and left > 0:
                seen.add(key)
                kept.append(r)
                left -= 1
        if kept:
            out.append(kept)
    return out


def fruit_rounds(
    limit: int,
    *,
    inits: int = 5,
    max_messages: int = 3,
    num_seeds: int = 2,
    variants: tuple[str, ...] = ("tone", "tone+dirichlet"),
    tree_only: bool = False,
) -> list[list[ChatRequest]]:
    """The rounds of a fruit-trading run (default: the README's third command), scripted-built.

    ``tree_only`` keeps the rounds from the first opening message on (not the agreement
    judge's check on its labelled set, which the run asks first).
    """
    recorder = RecordingModel(ScriptedModel())
    with tempfile.TemporaryDirectory() as tmp:
        settings = ExperimentSettings(
            inits=inits,
            max_messages=max_messages,
            num_seeds=num_seeds,
            iterations=10,
            variants=variants,
            out=str(Path(tmp) / "fruit"),
            whole_game=False,
            generalisation=False,
            progress=False,
        )
        run_experiment(settings, model=recorder)
    rounds = recorder.rounds
    if tree_only:
        opening = next(
            (i for i, b in enumerate(rounds) if any(r.task == "fruit_trading.opening" for r in b)),
            0,
        )
        rounds = rounds[opening:]
    return _distinct(rounds, limit)


def seed_groups(batch: list[ChatRequest]) -> int:
    """How many distinct requests ``batch`` holds once seeds are set aside."""
    return len({r.with_seed(0).cache_key("local", "model") for r in batch})


def werewolf_rounds(limit: int, **overrides: Any) -> list[list[ChatRequest]]:
    """The rounds of one scripted arena game (arena preset, seed 41; ``overrides`` of its rules)."""
    recorder = RecordingModel(ScriptedModel())
    play_arena_game(
        rules.preset("arena", **overrides),
        recorder,
        wolf_model="gratr",
        leader_model="dirichlet",
        seed=41,
    )
    return _distinct(recorder.rounds, limit)
