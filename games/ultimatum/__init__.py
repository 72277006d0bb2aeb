"""The ultimatum game on the engine: the worked example of ``docs/adding-a-game.md``.

Importing it registers ``python_ultimatum`` (:mod:`games.ultimatum.game`), the command
``gt-llm ultimatum solve`` and the conformance runner's parameters.
"""

import argparse

from games.engine import cli_options as cli
from games.engine.pipeline import build_and_solve
from games.engine.registry import ConformanceParams, GameSpec, register_game_spec
from games.engine.results import model_label
from games.ultimatum.game import SHORT_NAME, TONES, Deal, Ultimatum, UltimatumGame
from gt_llm.argtypes import positive_int

__all__ = ["TONES", "Deal", "Ultimatum", "UltimatumGame"]


def _solve(args: argparse.Namespace) -> int:
    from solvers import uniform_policy

    settings = {"pie": args.pie, "num_seeds": args.num_seeds, "iterations": args.iterations}
    with cli.results_folder(args, settings) as run:
        label = model_label(model := cli.load_model_from_args(args))
        solved = build_and_solve(
            Ultimatum(args.pie, args.num_seeds),
            [Deal(args.pie)],  # the root needs no call: a plain state
            model,
            baseline=uniform_policy,  # CFR-Gain against playing uniformly at random
            iterations=args.iterations,
            run=run,
            slug="ultimatum",
            progress=not args.no_progress,
        )
        nash_conv = float(solved.curves.nash_conv[0, -1])  # one tree: row 0, last iteration
        run.write_json("summary.json", {**label, "settings": settings, "nash_conv": nash_conv})
    cli.say(f"{label['label']}: NashConv {nash_conv:.4g} after {args.iterations} iterations")
    return 0


def _add_parser(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("ultimatum", help="the ultimatum game (the engine's example)")
    p = group.add_subparsers(dest="ultimatum_command", required=True).add_parser(
        "solve", help="build the tree, run CFR, write the curves and summary.json"
    )
    cli.add_common_options(p, out="results/ultimatum")
    p.add_argument("--pie", type=positive_int, default=10, help="coins to split (default 10)")
    p.add_argument("--num-seeds", type=positive_int, default=2, help="LLM seeds (default 2)")
    p.add_argument("--iterations", type=positive_int, default=200, help="CFR iterations")
    p.set_defaults(func=_solve)


register_game_spec(
    GameSpec(
        name="ultimatum",
        short_name=SHORT_NAME,
        help="the ultimatum game with an LLM-written offer (the engine's example)",
        add_parser=_add_parser,
        conformance=ConformanceParams(
            game_strings=(SHORT_NAME, f"{SHORT_NAME}(pie=7,num_seeds=3)"),
            tree_game_strings=(SHORT_NAME,),
            # The proposer's tone: the responder sees only the message.
            private_info=lambda st, p: (
                [f"tone={TONES[st.inner.tone]}"] if p == 0 and st.inner.tone is not None else []
            ),
        ),
    )
)
