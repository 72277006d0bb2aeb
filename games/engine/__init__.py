"""The engine shared by games built from LLM calls.

* :mod:`games.engine.calls` — the call driver: :class:`Call`, :func:`run_sync`,
  :func:`run_batched` (steps are generators of Calls, or plain results);
* :mod:`games.engine.protocol` — what a game implements (:class:`GameLogic`)
  and the expanded-tree node (:class:`ExpandedNode`);
* :mod:`games.engine.tree` — batched, cached tree expansion and
  :class:`solvers.GameTree` building (:func:`expand`, :func:`build_subgames`,
  :class:`Subgame`, :func:`subgame_tree`, :func:`whole_game_tree`);
* :mod:`games.engine.pipeline` — build, solve with CFR, write the curves
  (:func:`~games.engine.pipeline.build_and_solve`);
* :mod:`games.engine.spiel` — the OpenSpiel side (:func:`engine_game_type`,
  :func:`engine_game_info`, :func:`shared_model`, :class:`RootCache`,
  :class:`InformationStateObserver`, :class:`EngineGame`, :class:`EngineState`);
* :mod:`games.engine.registry` — the game registry (:class:`GameSpec`,
  :class:`ConformanceParams`) and game discovery, where ``gt-llm`` finds its
  game commands;
* :mod:`games.engine.conformance` — the conformance runner every game passes;
* :mod:`games.engine.cli_options` — the options every game's CLI shares;
* :mod:`games.engine.results` — model labels of results;
* :mod:`games.engine.html_page` — self-contained HTML result pages.

See ``docs/architecture.md``.
"""

from games.engine.calls import Call, Step, run_batched, run_sync
from games.engine.cli_options import add_common_options, load_model_from_args
from games.engine.protocol import CHANCE, ExpandedNode, GameLogic
from games.engine.registry import (
    ConformanceParams,
    GameSpec,
    get_game_spec,
    register_game_spec,
    registered_game_specs,
)
from games.engine.results import model_label
from games.engine.spiel import (
    EngineGame,
    EngineState,
    InformationStateObserver,
    RootCache,
    engine_game_info,
    engine_game_type,
    shared_model,
)
from games.engine.tree import (
    Subgame,
    build_subgames,
    expand,
    expand_from_steps,
    subgame_tree,
    whole_game_tree,
)

__all__ = [
    "CHANCE",
    "Call",
    "ConformanceParams",
    "EngineGame",
    "EngineState",
    "ExpandedNode",
    "GameSpec",
    "InformationStateObserver",
    "GameLogic",
    "RootCache",
    "Step",
    "Subgame",
    "add_common_options",
    "build_subgames",
    "engine_game_info",
    "engine_game_type",
    "expand",
    "expand_from_steps",
    "get_game_spec",
    "load_model_from_args",
    "model_label",
    "register_game_spec",
    "registered_game_specs",
    "run_batched",
    "run_sync",
    "shared_model",
    "subgame_tree",
    "whole_game_tree",
]
