"""Results a researcher can reuse: CFR policies and every dialogue of a run.

Two files per variant, written by :func:`games.fruit_trading.experiment.run_experiment`:

* ``policy_<variant>.json`` — each subgame's CFR average policy keyed by
  information-state string (``{key: {action: probability}}``), with the
  OpenSpiel game string of that subgame. :func:`load_tabular_policy` turns one
  back into an ``open_spiel.python.policy.TabularPolicy`` of that game.
* ``dialogues_<variant>.jsonl`` — one line per leaf of every subgame tree: the
  messages (sender, tone, seed, text), whether and when a trade was agreed,
  the payoffs (LLM and exact), the receiver's guesses, and the probability of
  reaching the leaf when both players follow the CFR policy (chance: the
  uniform LLM seeds). Nobody needs to dig texts out of the SQLite cache.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from games.engine.results import ModelLabel
from games.fruit_trading.dialogue import Config, DialogueLogic, DialogueState
from games.fruit_trading.tree import GAME_NAME, Subgame
from runs.atomic import read_json
from solvers import TreePolicy

FORMAT = "gt-llm.fruit_trading.policy/1"


def game_string(config: Config, init: int, backend: str = "scripted") -> str:
    """The ``pyspiel.load_game`` string of one subgame under ``config``."""
    params: dict[str, Any] = {
        "init": init,
        "max_messages": config.max_messages,
        "num_seeds": config.num_seeds,
        "scenario_seed": config.scenario_seed,
        "payoff": config.payoff_source,
        "names": config.names,
        "pools": config.pools,
    }
    if config.beliefs:
        params["opponent_model"] = config.opponent_model
    if backend != "scripted":
        params["backend"] = backend
    return f"{GAME_NAME}({','.join(f'{k}={v}' for k, v in params.items())})"


def policy_document(
    subgames: Sequence[Subgame],
    policies: Sequence[TreePolicy],
    *,
    variant: str,
    label: ModelLabel,
) -> dict[str, Any]:
    """The JSON document of one variant's per-subgame CFR policies."""
    entries = []
    for sg, pol in zip(subgames, policies, strict=True):
        tree = sg.tree
        infosets = {}
        for s, key in enumerate(tree.infoset_keys):
            legal = tree.legal_actions(s)
            infosets[key] = {str(a): float(pol.probs[s, r]) for r, a in enumerate(legal)}
        entries.append(
            {
                "init": sg.scenario.init,
                "game": game_string(sg.config, sg.scenario.init, label.backend),
                "infosets": infosets,
            }
        )
    return {
        "format": FORMAT,
        "variant": variant,
        "backend": label.backend,
        "model": label.model,
        "label": label.label,
        "subgames": entries,
    }


def load_tabular_policy(path: str | Path, init: int, game=None):
    """One subgame's CFR policy from ``policy_<variant>.json`` as an OpenSpiel ``TabularPolicy``.

    Args:
      path: The exported file.
      init: The initialisation whose policy to load.
      game: The ``pyspiel.Game`` to attach it to (default: loaded from the
        stored game string; pass one with your model for a non-scripted run).

    Returns:
      ``(tabular_policy, game)``; information states the export does not hold
      (none for the same game) keep OpenSpiel's uniform default.

    Raises:
      ValueError: the file is not such an export, or has no subgame ``init``,
        or names an information state the game does not have.
    """
    import pyspiel
    from open_spiel.python import policy as os_policy

    # A regular file of bounded size, valid JSON (runs.atomic.read_json names the file).
    doc = read_json(path, rerun="the `gt-llm fruit-trading run` that wrote it")
    got = doc.get("format") if isinstance(doc, dict) else None
    if got != FORMAT:
        raise ValueError(
            f"load_tabular_policy: {path} is not a fruit-trading policy export "
            f"(format {got!r}, expected {FORMAT!r})"
        )
    entry = next((e for e in doc["subgames"] if e["init"] == init), None)
    if entry is None:
        have = [e["init"] for e in doc["subgames"]]
        raise ValueError(f"load_tabular_policy: no subgame init={init} in {path}; it has {have}")
    if game is None:
        game = pyspiel.load_game(entry["game"])
    tabular = os_policy.TabularPolicy(game)
    for key, dist in entry["infosets"].items():
        row = tabular.state_lookup.get(key)
        if row is None:
            raise ValueError(
                f"load_tabular_policy: information state {key[:60]!r}... is not a state of "
                f"{entry['game']}; load the policy into the game it was exported from"
            )
        tabular.action_probability_array[row] = 0.0
        for a, p in dist.items():
            tabular.action_probability_array[row, int(a)] = p
    return tabular, game


def _leaves(
    game: DialogueLogic, node, probs: TreePolicy, index: dict[str, int], reach: float
) -> Iterator[tuple[DialogueState, float]]:
    if not node.children:
        yield node.state, reach
        return
    state = node.state
    player = game.current_player(state)
    row = probs.probs[index[game.information_state(state, player)]]
    seeds = dict(game.seed_outcomes(state, 0))
    for (action, outcome), child in sorted(node.children.items(), key=lambda kv: kv[0]):
        p = float(row[action]) * seeds.get(outcome if outcome is not None else 0, 1.0)
        yield from _leaves(game, child, probs, index, reach * p)


def leaf_records(subgame: Subgame, policy: TreePolicy) -> Iterator[dict[str, Any]]:
    """One JSON-ready record per leaf of a subgame (see the module docstring)."""
    game = DialogueLogic(subgame.config)
    index = subgame.tree.key_to_infoset
    for state, reach in _leaves(game, subgame.root, policy, index, 1.0):
        pay = state.payoff
        yield {
            "init": subgame.scenario.init,
            "names": list(state.names),
            "messages": [
                {"sender": state.names[t.sender], "tone": t.tone, "seed": t.seed, "text": t.text}
                for t in state.turns
            ],
            "agreement": state.agreement,
            "agreed_at_message": pay.message if pay is not None else None,
            "payoffs": list(state.returns()),
            "payoffs_llm": list(pay.llm) if pay is not None else None,
            "payoffs_exact": list(pay.exact) if pay is not None and pay.exact else None,
            "trade": pay.trade_text if pay is not None else None,
            "guesses": [
                {"message": g.message, "observer": state.names[g.observer], "guess": g.guess}
                for g in state.guesses
            ],
            "reach_cfr": reach,
        }


def dialogue_lines(
    subgames: Sequence[Subgame],
    policies: Sequence[TreePolicy],
    *,
    variant: str,
    label: ModelLabel,
) -> str:
    """The text of ``dialogues_<variant>.jsonl``: one JSON line per leaf of every subgame."""
    lines = []
    for sg, pol in zip(subgames, policies, strict=True):
        for rec in leaf_records(sg, pol):
            rec = {"variant": variant, "model": label.label, **rec}
            lines.append(json.dumps(rec, ensure_ascii=False))
    return "\n".join(lines) + "\n"
