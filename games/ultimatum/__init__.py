"""The ultimatum game on the engine: the worked example of ``docs/adding-a-game.md``.

Importing it registers ``python_ultimatum`` (:mod:`games.ultimatum.game`), the command
``gt-llm ultimatum solve`` (the engine's solve command: :mod:`games.engine.solve_command`)
and the parameters of the conformance runner and of the command test.
"""

import argparse

from games.engine.registry import ConformanceParams, GameSpec, register_game_spec
from games.engine.solve_command import RunOptions, SolvePlan, add_solve_command
from games.ultimatum.game import SHORT_NAME, TONES, Deal, Ultimatum, UltimatumGame
from gt_llm.argtypes import bounded_int

__all__ = ["TONES", "Deal", "Ultimatum", "UltimatumGame"]

#: Every size flag has a bound: the offer's answer lists 0..pie, each seed is a tree branch.
MAX_PIE, MAX_SEEDS, MAX_ITERATIONS = 1000, 16, 10**6


def _add_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pie",
        type=bounded_int(1, MAX_PIE),
        default=10,
        help=f"coins to split (default 10, at most {MAX_PIE})",
    )
    p.add_argument(
        "--num-seeds",
        type=bounded_int(1, MAX_SEEDS),
        default=2,
        help=f"LLM seeds (default 2, at most {MAX_SEEDS})",
    )
    p.add_argument(
        "--iterations",
        type=bounded_int(1, MAX_ITERATIONS),
        default=200,
        help=f"CFR iterations (default 200, at most {MAX_ITERATIONS})",
    )


def _plan(args: argparse.Namespace, options: RunOptions) -> SolvePlan:
    from solvers import uniform_policy

    return SolvePlan(
        logic=Ultimatum(args.pie, args.num_seeds, options.seed, options.structured),
        roots=[Deal(args.pie)],  # one tree; its root needs no call: a plain state
        baseline=uniform_policy,  # CFR-Gain against playing uniformly at random
        iterations=args.iterations,
        slug="ultimatum",
        num_seeds=args.num_seeds,
    )


def _add_parser(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("ultimatum", help="the ultimatum game (the engine's example)")
    add_solve_command(
        group.add_subparsers(dest="ultimatum_command", required=True),
        game="ultimatum",
        help="build the tree and run CFR",
        add_options=_add_options,
        plan=_plan,
        seed_help="first LLM seed: the seed node's outcomes ask with SEED, SEED+1, ... (default 0)",
    )


register_game_spec(
    GameSpec(
        name="ultimatum",
        short_name=SHORT_NAME,
        help="the ultimatum game with an LLM-written offer (the engine's example)",
        add_parser=_add_parser,
        conformance=ConformanceParams(
            game_strings=(SHORT_NAME, f"{SHORT_NAME}(pie=7,num_seeds=3,structured=false)"),
            tree_game_strings=(SHORT_NAME,),
            # The proposer's tone: the responder sees only the message.
            private_info=lambda st, p: (
                [f"tone={TONES[st.inner.tone]}"] if p == 0 and st.inner.tone is not None else []
            ),
        ),
        commands=(("ultimatum", "solve", "--iterations", "5", "--out", "{tmp}/ultimatum"),),
    )
)
