"""The order in which a prompt lists the players a seat may choose.

A small model tends to pick the first or second player it is offered (on
SmolLM2-135M, 21 of 24 night targets and votes, where a uniform choice gives
about 11). Listing the choices in ascending seat order would make the lowest
seats the favourites of every such model. So every request that lists
players to choose from (night targets, protections, checks, the witch's
poison, vote candidates, the targets of a speech act) lists them in an order
of its own, and the schema's enum of a structured answer follows that order.

The order is a pure function of the rest of the request: a SHA-256 of the
task, the request's fields with the choices in ascending order, and the
call's seed picks the permutation (:func:`offer_order`). The same request
therefore always lists its choices the same way (the answer stays a function
of the request, and the call cache stays valid), while two requests that
differ anywhere (another seat, day, history or seed) get unrelated orders.
Parsers check membership, never position, so an answer maps back to the
same player whatever the order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["listed_position", "offer_order", "request_digest"]


def request_digest(task: str, fields: Mapping[str, Any], seed: int) -> bytes:
    """A SHA-256 of a request's task, fields and seed (fields as canonical JSON).

    Raises:
      TypeError: a field value that is not JSON (after ``str`` of unknown values) or a
        mapping whose keys cannot be sorted.
    """
    payload = json.dumps(
        [task, dict(fields), int(seed)],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).digest()


def offer_order(
    choices: Sequence[int], *, task: str, fields: Mapping[str, Any], seed: int
) -> list[int]:
    """``choices`` in the order a request lists them: a permutation seeded by the request.

    Args:
      choices: The players offered (any order: they are sorted first, so the result
        depends on the set, not on how the caller listed it).
      task: The request's task.
      fields: The request's other fields (the choices among them, if at all, in any
        order: they are hashed as given, so pass them as the caller always does).
      seed: The call's seed.

    Returns:
      The players, each once, in the order the prompt shows them.
    """
    ordered = sorted(int(p) for p in choices)
    if len(ordered) < 2:
        return ordered
    digest = request_digest(task, fields, seed)
    rng = np.random.default_rng(int.from_bytes(digest[:16], "little"))
    return [ordered[int(i)] for i in rng.permutation(len(ordered))]


def listed_position(offered: Sequence[int], choice: int) -> int | None:
    """Where ``choice`` stood in the list a prompt offered: 1 for the first; None if absent."""
    listed = [int(p) for p in offered]
    return listed.index(int(choice)) + 1 if int(choice) in listed else None
