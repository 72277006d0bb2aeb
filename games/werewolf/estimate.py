"""The work and memory of the Werewolf commands, from their settings alone.

Checked and printed before the first model call (``werewolf play``,
``arena``, ``tournament``, ``solve``; the line of
:meth:`games.engine.resources.WorkEstimate.describe`), so that a size flag
that cannot fit is refused in one line naming the flag, instead of growing
until the machine runs out of memory after paid calls.

Work (model requests, cached ones included):

* **Games, at most** (:func:`max_calls_per_game`, "at most N model calls").
  A game has at most ``max_rounds`` rounds (a draw ends the last one) and
  nothing forces a death in any of them (the doctor may save every victim and
  no vote reach a majority), so the bound seats every player alive for every
  round. With ``s`` seats the model answers (rule players and a human ask
  nothing) and ``x`` of them holding an opponent model that extracts
  statements (gratr, dirichlet, bayes), a round asks at most: at night each
  model seat its role's :data:`NIGHT_CALLS` (a werewolf 1; the doctor, guard
  and seer 2: asked ahead with the first werewolf, and again at their own
  step if their view changed; the witch 2: her save step and her poison
  step), the ``s`` largest of them; per debate turn ``s`` bids, the speech
  (2: its act, then its words), the statement's analyses (the speaker's own
  and every other model seat's: ``s``) and ``2`` extraction requests per
  extracting seat but the speaker (dead seats' models keep listening); then
  ``s`` votes; and, from the second round on, ``s`` scratchpad updates. A
  seat whose opponent model is ``rerank-rag`` consults it before a request at
  most once (its fields are kept per decision kind until new evidence
  arrives), and a consultation scores at most ``top_k`` x
  :data:`RERANK_FACTOR` retrieved messages, one relevance request each: so
  ``r`` such seats add at most ``top_k x 3`` times the bound of a table where
  only they ask. An arena or tournament pair seats each agent on half the
  table, so a pair with a rule-based agent asks for half the seats. Each request counts once: an
  unusable answer is re-asked at most ``ParsePolicy.max_reasks`` (2) times,
  each re-ask adding a call (the stand-in never needs one; at most 3 N in all),
  and answers from the cache are free. The bound is what a game that runs all
  its rounds asks; the stand-in's end after about 3 of the default 10 rounds,
  so a run makes about a fifth of it.
* **Games, about** (the time estimate's count). About :data:`CALLS_PER_GAME`
  requests per game of a preset (measured with the stand-in, ``werewolf play
  --games 5``: 153.8 per arena game, 187.8 per gratr game), scaled by
  players / 8, by (debate turns + 1) / 4 (every living player bids and speaks
  each turn, then votes) and by the share of seats the model answers, plus
  :data:`EXTRACTIONS_PER_SEAT` per extracting seat (measured: ``werewolf arena
  --preset gratr --models gratr,dirichlet,none,bayes --games 10``, pairs with
  8 extracting seats against pairs with 4) and :data:`RERANKS_PER_SEAT` per
  ``rerank-rag`` seat at ``--top-k 5`` (``werewolf arena --preset gratr
  --models gratr,dirichlet,native-rag,rerank-rag,none --games 5``: 68 to 106
  a seat and game in its four pairs), never above the bound (a low
  ``--max-rounds`` cuts games short). An arena plays ``--games`` per pair of
  models, a tournament ``--games`` per pair of agents.
* **Solve.** With ``A`` = tones x acts actions and ``S`` seeds a day tree has
  at most ``sum_{k<K} (AS)^k (1 + A) + (AS)^K`` nodes; each of its
  ``A S sum_{k<K} (AS)^k`` statements costs one statement request plus
  ``(L - 1) x {0, 1, 2}`` extraction requests (listeners' model none /
  dirichlet / gratr) and each of its ``(AS)^K`` leaves ``L`` vote requests,
  with ``L`` = players - day living players. The tree's batches send
  identical requests once, and with the stand-in (whose texts repeat across
  branches) about :data:`DISTINCT_SHARE` of these are distinct (measured,
  1 day, tones any,calm: 307 of 520 with listeners ``none``, 595 of 1,384
  with ``gratr``; the defaults: 6,177 of 11,088); the estimate is that share.
  A real LLM repeats itself less, so it may ask up to 1 / 0.6 times more.

* **Series and arena.** Every finished game's result (final state, counters,
  deception summary) is kept until the summary is written: about 144 KB a
  game measured (``werewolf play --games 220`` vs ``--games 20`` with the
  stand-in: 29 MB more peak memory), 256 KiB counted, above a measured base.
* **Solve.** The CFR curves of every day tree are kept: the same count as the
  fruit-trading experiment (:func:`games.engine.resources.curves_bytes`
  float64 values per tree and iteration, every iteration recorded).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from games.engine.resources import (
    CallShape,
    WorkEstimate,
    curves_bytes,
    format_count,
    require_memory,
)

if TYPE_CHECKING:
    from games.werewolf.config import Config

__all__ = [
    "CALLS_PER_GAME",
    "CALL_SHAPE",
    "EXTRACTIONS_PER_SEAT",
    "NIGHT_CALLS",
    "RERANKS_PER_SEAT",
    "RERANK_FACTOR",
    "Seating",
    "check_games",
    "check_solve",
    "day_tree_nodes",
    "estimate_games",
    "estimate_solve",
    "games_bytes",
    "max_calls_per_game",
    "pair_seatings",
    "solve_bytes",
]

#: A Werewolf call on the bundled SmolLM2 (``benchmarks/local_model.py``, the first 60
#: distinct requests of a scripted arena game, two workers with reuse): 30,199 prompt
#: tokens (503 a call), 28,567 of them evaluated (each seat's prompt differs early, so
#: little is reused), 2,219 generated.
CALL_SHAPE = CallShape(prompt_tokens=503, completion_tokens=37, reused_share=0.05)

#: Model requests per game at 8 players and 3 debate turns, by preset (measured, stand-in).
CALLS_PER_GAME = {"arena": 154, "gratr": 188}
#: Share of a day tree's requests that are distinct (measured with the stand-in).
DISTINCT_SHARE = 0.6
#: Extraction requests per listener and statement, by listeners' opponent model.
EXTRACTIONS = {"none": 0, "dirichlet": 1, "gratr": 2, "bayes": 2}

#: Calls one seat of each role can ask in a night, at most (see the module docstring).
NIGHT_CALLS = {"werewolf": 1, "doctor": 2, "guard": 2, "seer": 2, "witch": 2, "villager": 0}
#: Calls of one speech, at most: its act, then its words (a policy's act: the words only).
SPEECH_CALLS = 2
#: Extraction requests of one extracting seat per statement it hears (identity and intent).
EXTRACTION_CALLS = 2
#: Extraction requests per extracting seat and game at 3 debate turns, about (measured with
#: the stand-in: 4 more extracting seats added 43.4 requests a game).
EXTRACTIONS_PER_SEAT = 11
#: Retrieved messages ``rerank-rag`` scores per kept one (``RerankRag.rerank_factor``).
RERANK_FACTOR = 3
#: Relevance requests per ``rerank-rag`` seat and game at ``--top-k 5`` and 3 debate turns,
#: about (measured with the stand-in: 87 a seat and game over its four pairs).
RERANKS_PER_SEAT = 87
#: ``--top-k``'s default (:class:`games.werewolf.players.seat_models.BeliefSettings`).
TOP_K = 5

#: Bytes counted per finished game kept in memory (measured about 144 KB).
BYTES_PER_GAME = 256 * 1024
#: Interpreter, libraries, the model and one game in flight (measured 176 MiB peak for
#: ``werewolf play --games 20`` with the stand-in; benchmarks/estimates.py).
BASE_BYTES = 192 * 2**20
#: The same for ``werewolf solve``, which also loads the solver kernels and builds trees
#: (measured 433 MiB for ``--days 4 --iterations 2000``).
SOLVE_BASE_BYTES = 400 * 2**20


def games_bytes(games: int) -> int:
    """Peak memory of a series or arena of ``games`` games, about."""
    return BASE_BYTES + games * BYTES_PER_GAME


def check_games(games: int, *, flag: str = "--games") -> None:
    """Refuses, in one line naming ``flag``, more games than memory can keep.

    Raises:
      ValueError: the estimate exceeds the available memory.
    """
    shown = format_count(games)
    require_memory(games_bytes(games), what=f"{flag} {shown}", fix=f"lower {flag}")


def solve_bytes(trees: int, iterations: int) -> int:
    """Peak memory of ``werewolf solve`` with ``trees`` day trees, about (curves dominate)."""
    return SOLVE_BASE_BYTES + curves_bytes(trees, iterations)


def check_solve(*, days: int, models: int, iterations: int) -> None:
    """Refuses, in one line naming ``--iterations``, curves that cannot fit in memory.

    Raises:
      ValueError: the estimate exceeds the available memory.
    """
    shown = format_count(iterations)
    require_memory(
        solve_bytes(days * models, iterations),
        what=f"--iterations {shown} x --days {days} x {models} model(s)",
        fix="lower --iterations or --days",
    )


@dataclasses.dataclass(frozen=True)
class Seating:
    """Who asks the model at a table: the call estimate's inputs besides the rules.

    Attributes:
      llm_seats: Seats whose decisions the model answers (rule players and a
        human seat ask nothing).
      extracting_seats: Those of them whose opponent model extracts every other
        seat's statements (gratr, dirichlet, bayes).
      reranking_seats: Those of them whose opponent model is ``rerank-rag``
        (it asks the model to score what it retrieves).
    """

    llm_seats: int
    extracting_seats: int = 0
    reranking_seats: int = 0

    def __post_init__(self) -> None:
        for name in ("extracting_seats", "reranking_seats"):
            if not 0 <= getattr(self, name) <= self.llm_seats:
                raise ValueError(
                    f"Seating: {name.replace('_', ' ')} must be in 0..{self.llm_seats}, "
                    f"got {getattr(self, name)}"
                )
        if self.extracting_seats + self.reranking_seats > self.llm_seats:
            raise ValueError("Seating: a seat's opponent model extracts or reranks, not both")


def max_calls_per_game(
    config: Config, seating: Seating | None = None, *, top_k: int = TOP_K
) -> int:
    """Model requests one game can ask, at most, each counted once (module docstring).

    Args:
      config: The game's rules (roles, debate turns, rounds).
      seating: Who asks the model (default: every seat, no opponent model that asks).
      top_k: Messages a retrieval baseline keeps (``--top-k``).
    """
    if seating is not None and seating.reranking_seats:
        players = Seating(seating.llm_seats, seating.extracting_seats)
        rerankers = Seating(seating.reranking_seats)
        return max_calls_per_game(config, players) + top_k * RERANK_FACTOR * max_calls_per_game(
            config, rerankers
        )
    n = config.num_players
    s = n if seating is None else min(seating.llm_seats, n)
    if s == 0:
        return 0
    x = 0 if seating is None else seating.extracting_seats
    roles = config.roles
    nights = sorted(NIGHT_CALLS[r] for r in NIGHT_CALLS for _ in range(roles.count(r)))
    night = sum(nights[-s:])
    turn = s + SPEECH_CALLS + s + EXTRACTION_CALLS * min(x, n - 1)
    day = config.debate_turns * turn + s
    rounds = config.max_rounds
    return rounds * (night + day) + (rounds - 1) * s


def pair_seatings(
    num_players: int, opponents: Sequence[str | None], games: int
) -> list[tuple[Seating, int]]:
    """Each pair's seating and games in an arena or tournament of ``opponents``.

    Args:
      num_players: Seats per game (even: each agent of a pair takes half).
      opponents: Each agent's opponent model (None: rule-based players), in order.
      games: Games per pair.
    """
    import itertools

    from games.werewolf.players.beliefs import EXTRACTING_MODELS

    half = num_players // 2
    out = []
    for pair in itertools.combinations(opponents, 2):
        llm = half * sum(o is not None for o in pair)
        extracting = half * sum(o in EXTRACTING_MODELS for o in pair)
        reranking = half * sum(o == "rerank-rag" for o in pair)
        out.append((Seating(llm, extracting, reranking), games))
    return out


def estimate_games(
    *,
    games: int,
    preset: str,
    players: int,
    debate_turns: int,
    asks_model: bool = True,
    config: Config | None = None,
    seatings: Sequence[tuple[Seating, int]] | None = None,
    top_k: int = TOP_K,
) -> WorkEstimate:
    """Work and memory of ``games`` games (a series, or an arena's pairs x games).

    Args:
      games: Games played.
      preset: Rules preset (its measured requests per game; unknown ones count as arena).
      players: Seats per game.
      debate_turns: Debate turns per day.
      asks_model: False for rule players, who make no request.
      config: The games' rules; with it the estimate carries its bound
        (:attr:`~games.engine.resources.WorkEstimate.max_model_calls`).
      seatings: ``(seating, games)`` per kind of table, the games adding up to
        ``games`` (default: every game seats the model everywhere, or nowhere
        without ``asks_model``).
      top_k: Messages a retrieval baseline keeps (``--top-k``).

    Raises:
      ValueError: the seatings' games do not add up to ``games``.
    """
    if seatings is None:
        seatings = [(Seating(players if asks_model else 0), games)]
    if sum(g for _, g in seatings) != games:
        raise ValueError(
            f"estimate_games: the seatings hold {sum(g for _, g in seatings)} games, not {games}"
        )
    per_game = CALLS_PER_GAME.get(preset, CALLS_PER_GAME["arena"])
    scale = per_game / 8 * (debate_turns + 1) / 4  # per seat the model answers
    about, bound = 0.0, 0
    for seat, g in seatings:
        typical = scale * seat.llm_seats
        typical += EXTRACTIONS_PER_SEAT * seat.extracting_seats * debate_turns / 3
        typical += RERANKS_PER_SEAT * seat.reranking_seats * top_k / TOP_K * (debate_turns + 1) / 4
        if config is not None:  # a game cut short by --max-rounds asks no more than its bound
            most = max_calls_per_game(config, seat, top_k=top_k)
            typical = min(typical, most)
            bound += g * most
        about += g * typical
    return WorkEstimate(
        trees=games,
        nodes_per_tree=0,
        nodes=0,
        model_calls=round(about),
        node_iterations=0,
        memory_bytes=games_bytes(games),
        unit="game" if games == 1 else "games",
        max_model_calls=bound if config is not None else None,
    )


def day_tree_nodes(*, actions: int, seeds: int, speakers: int) -> int:
    """Nodes of one day tree, at most: ``sum_{k<K} (AS)^k (1 + A) + (AS)^K``."""
    branch = actions * seeds
    return sum(branch**k for k in range(speakers)) * (1 + actions) + branch**speakers


def estimate_solve(
    *,
    days: int,
    models: tuple[str, ...],
    actions: int,
    seeds: int,
    speakers: int,
    living: int,
    iterations: int,
    eval_seeds: int = 0,
    bootstrap: int = 0,
    deals: int = 1,
    players: int | None = None,
    earlier_statements: int = 0,
) -> WorkEstimate:
    """Work and memory of ``werewolf solve`` (see the module docstring).

    Held-out trees (``eval_seeds`` per statement) add their nodes and calls; each
    seed-bootstrap replicate re-solves a tree. A day tree is one debate tree per
    deal below its root chance node (``deals``: the most kept).

    The bound (``max_model_calls``, with ``players``) counts every branch's
    requests once, none shared: every seat alive (a night may kill nobody),
    each statement heard by every other seat, every seat voting at every leaf,
    and per deal the roots' extraction of the ``earlier_statements`` of the
    days before by every other seat.

    Args:
      days: Days solved.
      models: Listeners' opponent models (one tree per day and model).
      actions: Actions per turn (tones x acts).
      seeds: LLM seeds per statement.
      speakers: Speaking turns K per day.
      living: Living players on the day solved.
      iterations: CFR iterations per tree.
    """
    per_tree = 1 + deals * day_tree_nodes(actions=actions, seeds=seeds, speakers=speakers)
    trees = days * len(models)
    calls = days * deals * _calls_per_day(models, actions, seeds, speakers, living)
    held = 0
    if eval_seeds:
        held = trees * deals * day_tree_nodes(actions=actions, seeds=eval_seeds, speakers=speakers)
        calls += days * deals * _calls_per_day(models, actions, eval_seeds, speakers, living)
    bound = None
    if players is not None:
        per_deal = _calls_per_day(models, actions, seeds, speakers, players)
        if eval_seeds:
            per_deal += _calls_per_day(models, actions, eval_seeds, speakers, players)
        roots = sum(earlier_statements * (players - 1) * EXTRACTIONS[m] for m in models)
        bound = days * deals * (per_deal + roots)
    return WorkEstimate(
        trees=trees,
        nodes_per_tree=per_tree,
        nodes=trees * per_tree + held,
        model_calls=round(calls * DISTINCT_SHARE),
        node_iterations=trees * per_tree * iterations * (1 + bootstrap),
        memory_bytes=solve_bytes(trees, iterations),
        unit="day trees",
        max_model_calls=bound,
    )


def _calls_per_day(
    models: tuple[str, ...], actions: int, seeds: int, speakers: int, living: int
) -> int:
    """Requests of one day's trees, one per model, before de-duplication."""
    branch = actions * seeds
    statements = actions * seeds * sum(branch**k for k in range(speakers))
    leaves = branch**speakers
    return sum(statements * (1 + (living - 1) * EXTRACTIONS[m]) + leaves * living for m in models)
