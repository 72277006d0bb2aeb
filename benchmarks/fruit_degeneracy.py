"""How degenerate the fruit-trading subgame trees are, per variant.

Builds the subgames of the experiment (the same pipeline as
``gt-llm fruit-trading run``: :func:`games.fruit_trading.tree.build_subgames`
with the experiment's :class:`~games.fruit_trading.dialogue.Config` per
variant) and prints, per variant, how many trees

* pay the same vector at every leaf (constant payoff),
* have a decision whose actions reach different sets of payoff vectors
  ("a tone choice changes some payoff"),
* have a one-shot deviation from always-"any" that changes an expected payoff,
* give the always-"any" baseline a NashConv above 0,

as defined in :mod:`solvers.diagnostics`, plus the agreement rates (Fig. 6)
and, with beliefs, the guess accuracy (Table 1). The model is labelled in the
output; the default is the scripted stand-in, not an LLM.

Usage::

    python benchmarks/fruit_degeneracy.py [--seed 0] [--inits 30] [--per-tree]
    python benchmarks/fruit_degeneracy.py --backend groq:... --cache results/fruit/llm_cache.sqlite
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

# The checkout first: this folder's own solvers.py would otherwise shadow the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402, F401  (registers the game and the scripted answers)
from games.engine.results import model_label  # noqa: E402
from games.fruit_trading import report  # noqa: E402
from games.fruit_trading.dialogue import Config  # noqa: E402
from games.fruit_trading.experiment import DEFAULT_VARIANTS, variant_model  # noqa: E402
from games.fruit_trading.studies import ANY  # noqa: E402
from games.fruit_trading.tree import build_subgames  # noqa: E402
from gt_llm.registry import load_model  # noqa: E402
from solvers.diagnostics import degeneracy_counts  # noqa: E402


def _variants(text: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in text.split(",") if v.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one variant, e.g. tone,tone+dirichlet")
    try:
        for v in names:
            variant_model(v)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0, help="master seed of the initialisations")
    parser.add_argument("--inits", type=int, default=30, help="initialisations (default 30)")
    parser.add_argument(
        "--variants",
        type=_variants,
        default=DEFAULT_VARIANTS,
        help="tone, tone+MODEL (default tone,tone+belief)",
    )
    parser.add_argument("--max-messages", type=int, default=4, help="messages per negotiation")
    parser.add_argument("--num-seeds", type=int, default=2, help="LLM seeds per message")
    parser.add_argument("--backend", default="scripted", help="model spec (default scripted)")
    parser.add_argument("--cache", default=None, help="SQLite call cache (default: none)")
    parser.add_argument("--per-tree", action="store_true", help="also print each tree's checks")
    args = parser.parse_args()
    if args.inits < 1:
        parser.error(f"--inits must be >= 1, got {args.inits}")

    model = load_model(args.backend, cache=args.cache)
    print(f"model: {model_label(model).label}   seed {args.seed}   inits {args.inits}")  # noqa: T201
    for variant in args.variants:
        cfg = Config(
            max_messages=args.max_messages,
            num_seeds=args.num_seeds,
            beliefs=variant_model(variant) is not None,
            opponent_model=variant_model(variant) or "dirichlet",
            scenario_seed=args.seed,
        )
        t0 = time.perf_counter()
        sgs = build_subgames(range(args.inits), cfg, model, progress=False)
        built = time.perf_counter() - t0
        counts = degeneracy_counts([sg.tree for sg in sgs], baseline_action=ANY)
        n = counts.trees
        lines = [
            f"[{variant}] {n} subgames, {sum(sg.tree.num_nodes for sg in sgs)} nodes, "
            f"built in {built:.1f}s",
            f"  constant payoff (every leaf pays the same):     {counts.constant_payoff:3d}/{n}",
            f"  a tone choice changes the outcome set:          "
            f"{counts.decision_changes_outcome:3d}/{n}",
            f"  a one-shot deviation from 'any' changes a value: "
            f"{counts.deviation_changes_value:3d}/{n}",
            f"  NashConv(always 'any') > 0:                     "
            f"{counts.baseline_nash_conv_positive:3d}/{n}",
            "  agreements per message: "
            + ", ".join(
                f"{r['message']}: {r['agreements']}/{r['histories']} ({r['percentage']:.1f}%)"
                for r in report.agreement_rates(sgs, args.max_messages)
            ),
        ]
        if variant_model(variant) is not None:
            lines.append(
                "  guesses correct per message: "
                + ", ".join(
                    f"{r['message']}: {r['correct']}/{r['total']} ({r['percentage']:.1f}%)"
                    for r in report.guess_table(sgs)
                )
            )
        if args.per_tree:
            for sg, d in zip(sgs, counts.per_tree, strict=True):
                lines.append(
                    f"    init {sg.scenario.init:3d}: nodes {sg.tree.num_nodes:5d}  "
                    f"constant {int(d.constant_payoff)}  outcome-decisions "
                    f"{d.outcome_decisions:3d}/{d.decision_nodes}  value-decisions "
                    f"{d.value_decisions:3d}  NashConv(any) {d.baseline_nash_conv:.4f}"
                )
        print("\n".join(lines))  # noqa: T201 - the benchmark's output


if __name__ == "__main__":
    main()
