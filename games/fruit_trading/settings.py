"""Settings of the fruit-trading experiment (:mod:`games.fruit_trading.experiment`).

The variants (``tone``: tones only; ``tone+MODEL``: tones plus the opponent
model MODEL, any registered one; ``tone+belief`` is the old name of
``tone+dirichlet``), :class:`ExperimentSettings` (checked when made, before
any call) and which of them the results folder compares
(:data:`NON_RESULT_SETTINGS`).
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any

from games.fruit_trading.rules import NAMINGS, POOLINGS
from gt_llm.safety import public_spec
from solvers.cfr import resolve_variant

if TYPE_CHECKING:
    from solvers.noise import NoiseSettings

__all__ = [
    "DEFAULT_VARIANTS",
    "NON_RESULT_SETTINGS",
    "TONE",
    "VARIANT_ALIASES",
    "WHOLE_GAME_SETTING",
    "ExperimentSettings",
    "known_variants",
    "variant_model",
]

#: The variant without an opponent model.
TONE = "tone"
#: Old variant names that still load: ``tone+belief`` was Dirichlet belief revision.
VARIANT_ALIASES: dict[str, str] = {"tone+belief": "tone+dirichlet"}
#: The paper's two variants, under their historical names (the default run).
DEFAULT_VARIANTS: tuple[str, ...] = ("tone", "tone+belief")
#: (names, pools) of the whole-game study: the same players, private information
#: from small shared pools, so that information sets recur across initialisations.
WHOLE_GAME_SETTING: tuple[str, str] = ("fixed", "shared")


def variant_model(variant: str) -> str | None:
    """The opponent model a variant names: ``tone`` -> None, ``tone+gratr`` -> ``gratr``.

    ``tone+<name>`` accepts every registered opponent model
    (:func:`gt_llm.opponents.opponent_models`); ``tone+belief`` is an alias of
    ``tone+dirichlet``.

    Raises:
      ValueError: not ``tone`` or ``tone+<registered model>``.
    """
    from gt_llm.opponents import opponent_models

    if variant == TONE:
        return None
    canonical = VARIANT_ALIASES.get(variant, variant)
    head, _, model = canonical.partition("+")
    if head != TONE or model not in opponent_models():
        raise ValueError(
            f"unknown variant {variant!r}; use tone or tone+MODEL with MODEL one of "
            f"{', '.join(opponent_models())} (tone+belief = tone+dirichlet)"
        )
    return model


def known_variants() -> list[str]:
    """Every variant name :func:`variant_model` accepts (aliases last)."""
    from gt_llm.opponents import opponent_models

    return [TONE] + [f"{TONE}+{m}" for m in opponent_models()] + list(VARIANT_ALIASES)


@dataclasses.dataclass(frozen=True)
class ExperimentSettings:
    """Settings of :func:`run_experiment` (defaults match the paper).

    Attributes:
      inits: Number of initialisations (subgames).
      iterations: CFR iterations per subgame.
      variants: Which of ``tone`` and ``tone+belief`` to run.
      backend: Model spec for :func:`gt_llm.load_model`.
      out: Output folder.
      cache: SQLite cache path (default ``<out>/llm_cache.sqlite``).
      max_messages: Messages per negotiation.
      num_seeds: LLM seeds per message.
      scenario_seed: Master seed of the initialisations.
      payoff: ``"exact"`` (the default: computed from the agreed trade and the
        valuations) or ``"llm"`` (the paper's: from the LLM's payoff calls, which
        are made and compared with the exact payoff either way).
      cfr_variant: CFR variant for :class:`solvers.CFRSolver`.
      max_concurrency: Bound on concurrent LLM calls (default: the backend's).
      requests_per_minute: Rate limit of a remote backend (e.g. Groq's
        per-model limit); only calls that miss the cache count.
      timeout: Per-call timeout of a remote backend, seconds (default: the backend's).
      whole_game_iterations: CFR iterations for the whole game (default: ``iterations``).
      generalisation: Run the generalisation study.
      whole_game: Run the whole-game study.
      progress: Show progress bars.
      names: Player names, ``random`` (the paper) or ``fixed``; the whole-game
        study always uses fixed names (see :func:`whole_game_study`).
      pools: Endowment/valuation pools, ``per_init`` or ``shared`` (the
        whole-game study always uses shared pools).
      processes: Worker threads for the CFR solves (``solvers.cfr_curves``) and the
        noise checks: 1 works here, None uses every core when the work is large enough.
      structured: Ask for JSON answers under each task's schema (``--structured on``).
      player_backends: The two players' backend specs (None: both on ``backend``, which
        stays the agreement judge's and the trade summary's; :mod:`games.fruit_trading.seats`).
      eval_seeds: Fresh LLM seeds per decision of the held-out trees (0: none;
        :mod:`solvers.noise`).
      permutations: Label permutations per subgame for CFR-Gain's null (0: none).
      bootstrap: Seed-bootstrap replicates per subgame, each re-solved (0: none).
      fdr_q: False-discovery rate of the "above noise" count (Benjamini-Hochberg).
    """

    inits: int = 30
    iterations: int = 1000
    variants: tuple[str, ...] = DEFAULT_VARIANTS
    backend: str = "scripted"
    out: str = "results/fruit"
    cache: str | None = None
    max_messages: int = 4
    num_seeds: int = 2
    scenario_seed: int = 0
    payoff: str = "exact"
    cfr_variant: str = "cfr"
    max_concurrency: int | None = None
    requests_per_minute: float | None = None
    timeout: float | None = None
    whole_game_iterations: int | None = None
    generalisation: bool = True
    whole_game: bool = True
    progress: bool = True
    processes: int | None = None
    names: str = "random"
    pools: str = "per_init"
    structured: bool = True
    player_backends: tuple[str, str] | None = None
    eval_seeds: int = 0
    permutations: int = 999
    bootstrap: int = 200
    fdr_q: float = 0.05

    def __post_init__(self) -> None:
        if self.inits < 1:
            raise ValueError(f"run_experiment: inits must be >= 1, got {self.inits}")
        if self.iterations < 1:
            raise ValueError(f"run_experiment: iterations must be >= 1, got {self.iterations}")
        if not self.variants:
            raise ValueError("run_experiment: give at least one variant (tone, tone+dirichlet)")
        for v in self.variants:
            try:
                variant_model(v)
            except ValueError as err:
                raise ValueError(f"run_experiment: {err}") from None
        if len(set(self.variants)) != len(self.variants):
            raise ValueError(f"run_experiment: variants repeat a name: {list(self.variants)}")
        if self.names not in NAMINGS:
            raise ValueError(
                f"run_experiment: names must be one of {', '.join(NAMINGS)}, got {self.names!r}"
            )
        if self.pools not in POOLINGS:
            raise ValueError(
                f"run_experiment: pools must be one of {', '.join(POOLINGS)}, got {self.pools!r}"
            )
        if self.processes is not None and self.processes < 1:
            raise ValueError(
                f"run_experiment: processes must be >= 1 (or None: all cores when worth it), "
                f"got {self.processes}"
            )
        if self.max_messages < 2:
            raise ValueError(f"run_experiment: max_messages must be >= 2, got {self.max_messages}")
        if self.num_seeds < 1:
            raise ValueError(f"run_experiment: num_seeds must be >= 1, got {self.num_seeds}")
        if self.eval_seeds < 0 or self.permutations < 0 or self.bootstrap < 0:
            raise ValueError(
                "run_experiment: eval_seeds, permutations and bootstrap must be >= 0 "
                f"(got {self.eval_seeds}, {self.permutations}, {self.bootstrap}); 0 turns one off"
            )
        if not 0.0 < self.fdr_q < 1.0:
            raise ValueError(f"run_experiment: fdr_q must be in (0, 1), got {self.fdr_q}")
        if self.requests_per_minute is not None and not self.requests_per_minute > 0:
            raise ValueError(
                "run_experiment: requests_per_minute must be > 0 (or None for no limit), "
                f"got {self.requests_per_minute}"
            )
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(
                f"run_experiment: timeout must be > 0 seconds (or None), got {self.timeout}"
            )
        if self.payoff not in ("llm", "exact"):
            raise ValueError(
                f"run_experiment: payoff must be 'llm' or 'exact', got {self.payoff!r}"
            )
        # Before any call: an unknown variant used to surface only after every tree was built.
        resolve_variant(self.cfr_variant, caller="run_experiment: cfr_variant")
        if self.whole_game_iterations is not None and self.whole_game_iterations < 1:
            raise ValueError(
                "run_experiment: whole_game_iterations must be >= 1 (or None), "
                f"got {self.whole_game_iterations}"
            )

    @property
    def noise(self) -> NoiseSettings:
        """The resampling of the noise checks, seeded by the scenario seed."""
        from solvers.noise import NoiseSettings

        return NoiseSettings(
            permutations=self.permutations,
            bootstrap=self.bootstrap,
            q=self.fdr_q,
            seed=self.scenario_seed,
        )

    @property
    def cache_path(self) -> str:
        """The call cache's file: ``cache``, or ``llm_cache.sqlite`` in the output folder."""
        return self.cache or os.path.join(self.out, "llm_cache.sqlite")

    def results_settings(self) -> dict[str, Any]:
        """The settings that determine the results, as the results folder's manifest records them.

        Every field except those declared in :data:`NON_RESULT_SETTINGS`
        (where and how calls are made: folder, cache, concurrency, rate,
        timeout, progress bars, worker processes; the backend, which the
        manifest records and compares on its own), so that a new field is
        compared unless it is declared harmless, and a resumed run with
        another ``--rpm`` is the same run.
        """
        out = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in NON_RESULT_SETTINGS
        }
        if self.player_backends is None:  # the settings of runs before per-player backends
            del out["player_backends"]
        else:
            out["player_backends"] = [public_spec(b) for b in self.player_backends]
        return out

    def public(self) -> dict[str, Any]:
        """Every setting, the backend as its public label (no credentials), for summaries."""
        out = {k: v for k, v in dataclasses.asdict(self).items() if k != "progress"}
        out["backend"] = public_spec(self.backend)
        if self.player_backends is None:  # summaries of one backend stay as they were
            del out["player_backends"]
        else:
            out["player_backends"] = [public_spec(b) for b in self.player_backends]
        return out


#: Fields of :class:`ExperimentSettings` that do not change the results (see
#: :meth:`ExperimentSettings.results_settings`); every other field is compared.
NON_RESULT_SETTINGS = frozenset(
    {
        "backend",
        "out",
        "cache",
        "max_concurrency",
        "requests_per_minute",
        "timeout",
        "progress",
        "processes",
    }
)
