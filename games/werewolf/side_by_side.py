"""Werewolf games played side by side on a remote backend, their calls kept in flight.

A game is a conversation: its speakers mostly speak one after another, so one
game alone keeps one or a few calls in flight, and against a served model
(where a call is bound by latency) one game at a time leaves the server idle.
A series, an arena and a tournament therefore play several games at a time in
threads when their model is remote (:func:`games_at_once`), and the remote
model bounds the calls in flight across all of them at its ``max_concurrency``
(``--concurrency``; :class:`gt_llm.backends.remote.RemoteChatModel`). In-process
backends (scripted, local) play one game after another: they answer one call
at a time anyway.

Games are independent (each its own seed, table and log), every call is a pure
function of its request, and :func:`run_all` returns the games' results in
their own order, so what a run reports does not depend on how many games it
plays at a time.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["add_jobs_option", "games_at_once", "run_all"]

T = TypeVar("T")
R = TypeVar("R")

#: Games at a time on a remote backend when neither ``--jobs`` nor the model says more.
MIN_REMOTE_GAMES = 4


def add_jobs_option(p: argparse.ArgumentParser) -> None:
    """``--jobs``: games at a time on a remote backend (``werewolf play``, arena, tournament)."""
    from gt_llm.argtypes import MAX_WORKERS, bounded_int

    p.add_argument(
        "--jobs",
        type=bounded_int(1, MAX_WORKERS),
        default=None,
        help="games at a time on a remote backend (threads; default: enough to keep "
        f"--concurrency calls in flight, at least {MIN_REMOTE_GAMES}; at most {MAX_WORKERS}); "
        "in-process backends play them one after the other; the results do not depend on it",
    )


def games_at_once(model: Any, games: int, jobs: int | None = None) -> int:
    """How many of ``games`` games to play at a time with ``model``.

    Args:
      model: The chat model the games call (None for rule players).
      games: Games to play.
      jobs: ``--jobs`` if given.

    Returns:
      1 on an in-process backend (or no model); on a remote one ``jobs``, else
      enough games to fill the model's calls in flight (its ``max_concurrency``,
      at least :data:`MIN_REMOTE_GAMES`); never more than ``games``.
    """
    if model is None or not getattr(model, "remote", False):
        return 1
    slots = int(getattr(model, "max_concurrency", 0) or 0)
    return max(1, min(jobs or max(MIN_REMOTE_GAMES, slots), games))


def run_all(
    play: Callable[[T], R], items: Sequence[T], jobs: int, *, on_done: Callable[[], object]
) -> list[R]:
    """``play(item)`` for every item, ``jobs`` at a time; results in ``items``' order.

    With ``jobs == 1`` the items are played in order in this thread. Otherwise
    a failed game (the server gone, the key refused, a full disk, a budget
    spent) cancels every game still queued, lets the running ones end (each
    within its retry budget) and raises the first failure, so a run says what
    went wrong within the retry budget plus one game, not after every queued
    game has waited out its own.
    """
    if jobs == 1:
        out = []
        for item in items:
            out.append(play(item))
            on_done()
        return out
    from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = [pool.submit(play, item) for item in items]
        for f in futures:
            f.add_done_callback(lambda _f: on_done())
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in futures if f in done and not f.cancelled() and f.exception()]
        if failed:
            for f in futures:
                f.cancel()
            raise failed[0].exception()  # type: ignore[misc]
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
