"""The options of the noise checks every CFR study shares (:mod:`solvers.noise`).

``--eval-seeds K`` expands held-out trees with K fresh LLM seeds per decision
(default: as many as the study solves with on a language model; none on the
scripted stand-in, whose answers do not depend on the seed in the way a
model's do, so its held-out trees would repeat the solved ones);
``--permutations N`` label permutations per tree (the p-value's resolution is
1 / (N + 1)); ``--bootstrap N`` seed-bootstrap replicates per tree, each
re-solved with the study's iterations; ``--fdr-q Q`` the false-discovery
rate of the "above noise in X of N" count (Benjamini-Hochberg).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gt_llm.argtypes import bounded_float, bounded_int
from gt_llm.registry import parse_spec

if TYPE_CHECKING:  # solvers (numba) loads with the first solve, not with every command
    from solvers.noise import NoiseSettings

__all__ = [
    "MAX_BOOTSTRAP",
    "MAX_EVAL_SEEDS",
    "MAX_PERMUTATIONS",
    "add_noise_options",
    "eval_seed_count",
    "is_language_model",
    "noise_settings",
]

#: Upper bounds of the options (each bounds work that grows linearly with it).
MAX_EVAL_SEEDS = 16
MAX_PERMUTATIONS = 100_000
MAX_BOOTSTRAP = 10_000
#: Defaults: 999 permutations resolve p-values down to 0.001, enough for
#: Benjamini-Hochberg over 30 trees at q = 0.05 (the smallest threshold is 0.05 / 30);
#: 200 bootstrap replicates put the 2.5 and 97.5 percentiles on 5 replicates each.
DEFAULT_PERMUTATIONS = 999
DEFAULT_BOOTSTRAP = 200
DEFAULT_Q = 0.05
#: The scripted stand-in's backend name.
SCRIPTED = "scripted"


def add_noise_options(parser: argparse.ArgumentParser) -> None:
    """Adds ``--eval-seeds --permutations --bootstrap --fdr-q`` to a study's parser."""
    parser.add_argument(
        "--eval-seeds",
        type=bounded_int(0, MAX_EVAL_SEEDS),
        default=None,
        help="fresh LLM seeds per decision for the held-out trees the solved policy is scored "
        "on (default: the solving seeds' count on a language model, 0 on the scripted "
        f"stand-in; 0 = none; at most {MAX_EVAL_SEEDS})",
    )
    parser.add_argument(
        "--permutations",
        type=bounded_int(0, MAX_PERMUTATIONS),
        default=DEFAULT_PERMUTATIONS,
        help="label permutations per tree for CFR-Gain's null and p-value "
        f"(default {DEFAULT_PERMUTATIONS}; 0 = none; at most {MAX_PERMUTATIONS})",
    )
    parser.add_argument(
        "--bootstrap",
        type=bounded_int(0, MAX_BOOTSTRAP),
        default=DEFAULT_BOOTSTRAP,
        help="seed-bootstrap replicates per tree, each re-solved, for the intervals of "
        f"CFR-Gain and NashConv (default {DEFAULT_BOOTSTRAP}; 0 = none; at most {MAX_BOOTSTRAP})",
    )
    parser.add_argument(
        "--fdr-q",
        type=bounded_float(0, 0.5, above=True),
        default=DEFAULT_Q,
        help="false-discovery rate of the 'above noise in X of N' count "
        f"(Benjamini-Hochberg; default {DEFAULT_Q}; in (0, 0.5])",
    )


def is_language_model(specs: Iterable[str]) -> bool:
    """Whether any of the backend specs is a language model (not the scripted stand-in)."""
    return any(parse_spec(s)[0] != SCRIPTED for s in specs)


def eval_seed_count(requested: int | None, *, specs: Iterable[str], num_seeds: int) -> int:
    """The held-out seeds per decision: ``requested``, else the default for the backends."""
    if requested is not None:
        return int(requested)
    return int(num_seeds) if is_language_model(specs) else 0


def noise_settings(args: argparse.Namespace) -> NoiseSettings:
    """The parsed options as :class:`solvers.noise.NoiseSettings` (seeded by ``--seed``)."""
    from solvers.noise import NoiseSettings

    return NoiseSettings(
        permutations=int(args.permutations),
        bootstrap=int(args.bootstrap),
        q=float(args.fdr_q),
        seed=int(getattr(args, "seed", 0) or 0),
    )
