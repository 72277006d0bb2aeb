"""The call driver that keeps calls in flight (:mod:`games.engine.frontier`).

Its answers come back in whatever order the calls end; a model here sleeps a
random time per call (its own seeded generator) so that the order is scrambled,
and every result, tree, parse count and cache count must still be those of the
level-by-level build. Also: at most ``max_concurrency`` calls in flight (and
that many reached when there is work), one call per distinct request, errors,
and the in-flight meter (:mod:`gt_llm.inflight`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from games.engine.calls import Call, run_batched
from games.engine.frontier import Frontier
from games.engine.protocol import CHANCE, ExpandedNode
from games.engine.tree import expand, expand_from_steps, run_steps, scheduler, subgame_tree
from gt_llm import inflight
from gt_llm.cache import CachedModel
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Message
from gt_llm.errors import BackendError
from gt_llm.parsing import ParsePolicy, ParseStats, parse_number
from solvers.efg import to_efg


def _digest(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:4], "big")


class JitterModel(ChatModel):
    """A remote-like model: a pure answer per request, after a random sleep.

    Answers ``value: D`` (a digit from the request), except that about a third
    of the ``*.flaky`` requests answer unparseable text (so they are re-asked,
    and some fall back). Counts calls per request and the most in flight.
    """

    backend = "jitter"
    model = "digits"
    remote = True

    def __init__(self, seed: int, *, max_concurrency: int = 8, sleep: float = 0.004) -> None:
        self.max_concurrency = max_concurrency
        self._rng = random.Random(seed)
        self._sleep = sleep
        self._lock = threading.Lock()
        self.sent: Counter[str] = Counter()
        self.requests: list[ChatRequest] = []
        self.active = 0
        self.peak = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        with self._lock:
            self.sent[self.cache_key(request)] += 1
            self.requests.append(request)
            self.active += 1
            self.peak = max(self.peak, self.active)
            pause = self._rng.random() * self._sleep
        try:
            time.sleep(pause)
        finally:
            with self._lock:
                self.active -= 1
        h = _digest(request.messages[-1].content, request.seed)
        if request.task.endswith(".flaky") and h % 3 == 0:
            text = "no number"
        else:
            text = f"value: {h % 10}"
        return ChatResponse(text=text, backend=self.backend, model=self.model)


def _call(task: str, text: str, seed: int = 0) -> Call[float]:
    request = ChatRequest(
        task=task, fields={"text": text}, messages=(Message("user", text),), seed=seed
    )
    return Call(request, parse_number, lambda r: -1.0)


# --- a game with a chance root, seeded decisions and several calls per step ------------


@dataclasses.dataclass(frozen=True)
class Hist:
    deal: int | None = None
    moves: tuple[tuple[int, float], ...] = ()
    values: tuple[float, float] | None = None


@dataclasses.dataclass(frozen=True)
class ThreeRounds:
    """Chance deals 0..2; players alternate three moves, each realised by calls.

    A move asks a seeded ``move`` call, then (depending on it) a list of two
    calls, one of which repeats across branches (``shared``: de-duplicated),
    and a ``.flaky`` check (re-asked, sometimes falling back).
    """

    num_players: int = 2
    depth: int = 3

    def is_terminal(self, s: Hist) -> bool:
        return s.values is not None

    def current_player(self, s: Hist) -> int:
        return CHANCE if s.deal is None else len(s.moves) % 2

    def legal_actions(self, s: Hist) -> Sequence[int]:
        return [0, 1]

    def chance_outcomes(self, s: Hist) -> list[tuple[int, float]]:
        return [(0, 0.5), (1, 0.25), (2, 0.25)]

    def seed_outcomes(self, s: Hist, action: int) -> list[tuple[int, float]]:
        return [(0, 0.5), (1, 0.5)] if len(s.moves) == 0 else []

    def step(self, s: Hist, action: int, outcome: int | None) -> Any:
        if s.deal is None:
            return dataclasses.replace(s, deal=action)  # no call: a finished step
        return self._move(s, action, outcome)

    def _move(self, s: Hist, action: int, outcome: int | None) -> Any:
        said = yield _call("game.move", f"deal {s.deal} moves {s.moves} a {action}", outcome or 0)
        a, b = yield [
            _call("game.shared", f"deal {s.deal} level {len(s.moves)} a {action}"),
            _call("game.note", f"deal {s.deal} said {said} after {s.moves}"),
        ]
        checked = yield _call("game.flaky", f"check {s.deal} {s.moves} {action} {said}")
        moves = (*s.moves, (action, said + a - b + checked))
        if len(moves) < self.depth:
            return dataclasses.replace(s, moves=moves)
        total = sum(v for _, v in moves)
        return dataclasses.replace(s, moves=moves, values=(total, -total))

    def information_state(self, s: Hist, player: int) -> str:
        return f"p{player} deal={s.deal if player == 0 else '?'} moves={s.moves}"

    def returns(self, s: Hist) -> Sequence[float]:
        return s.values if s.values is not None else (0.0, 0.0)

    def action_to_string(self, s: Hist, action: int) -> str:
        return f"a{action}"


def _shape(node: ExpandedNode[Hist]) -> Any:
    """The whole expanded tree, children in their dict order (which must match too)."""
    return (node.state, [(k, _shape(c)) for k, c in node.children.items()])


def _build(model: ChatModel, name: str, *, max_concurrency: int | None = None, **kw: Any):
    stats = ParseStats()
    with scheduler(name):
        nodes = expand(
            ThreeRounds(),
            [Hist(), Hist(deal=5)],
            model,
            stats=stats,
            max_concurrency=max_concurrency,
            progress=False,
            **kw,
        )
    return nodes, stats


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_frontier_builds_the_level_by_level_trees_whatever_order_calls_end(seed):
    levels, level_stats = _build(JitterModel(seed, sleep=0.0), "levels", max_concurrency=1)
    model = JitterModel(seed)
    nodes, stats = _build(model, "frontier", max_concurrency=8)
    assert [_shape(n) for n in nodes] == [_shape(n) for n in levels]
    assert stats.to_dict() == level_stats.to_dict()
    assert stats.to_dict()["total_fallbacks"] > 0 and stats.to_dict()["reasks"]
    # The game trees (what CFR reads) are the same arrays.
    for a, b in zip(nodes, levels, strict=True):
        efg = to_efg(subgame_tree(ThreeRounds(), a))
        assert efg == to_efg(subgame_tree(ThreeRounds(), b))
    # Every distinct request sent once (re-asks are distinct requests).
    assert set(model.sent.values()) == {1}


def test_frontier_with_a_cache_counts_hits_and_misses_as_the_levels_do(tmp_path):
    counts = {}
    for name in ("levels", "frontier"):
        with CachedModel(JitterModel(5), tmp_path / f"{name}.sqlite") as cached:
            _build(cached, name, max_concurrency=8)
            counts[name] = cached.stats()
    assert counts["frontier"] == counts["levels"]
    assert counts["frontier"].misses > 0


def test_a_request_recurring_at_another_depth_is_sent_once_per_build():
    # Tree B's root is a state of tree A one level lower: level by level its calls are
    # other rounds (asked again, answered by the cache); the frontier asks each once.
    model = JitterModel(6)
    stats = ParseStats()
    with scheduler("frontier"):
        nodes = expand(ThreeRounds(), [Hist(), Hist(deal=2)], model, stats=stats, progress=False)
    assert _shape(nodes[0].children[(2, None)]) == _shape(nodes[1])
    assert set(model.sent.values()) == {1}
    # Tree B adds no request to tree A's: the counts are tree A's alone.
    alone = ParseStats()
    with scheduler("frontier"):
        expand(ThreeRounds(), [Hist()], JitterModel(6), stats=alone, progress=False)
    assert stats.to_dict() == alone.to_dict()


def test_frontier_keeps_up_to_max_concurrency_calls_in_flight_and_no_more():
    model = JitterModel(3, max_concurrency=64, sleep=0.02)
    _build(model, "frontier", max_concurrency=6)
    assert model.peak == 6
    one = JitterModel(3, sleep=0.0)
    _build(one, "frontier", max_concurrency=1)
    assert one.peak == 1


def test_expand_from_steps_starts_each_tree_as_its_root_is_ready():
    def root(deal):
        said = yield _call("game.root", f"root {deal}")
        return Hist(deal=deal, moves=((0, said),))

    trees = {}
    for name in ("levels", "frontier"):
        with scheduler(name):
            trees[name] = expand_from_steps(
                ThreeRounds(),
                [root(0), root(1), Hist(deal=2)],
                JitterModel(9),
                max_concurrency=4,
                progress=False,
                max_depth=2,
            )
    assert [_shape(n) for n in trees["frontier"]] == [_shape(n) for n in trees["levels"]]
    # max_depth: two levels below the roots, then leaves that are not terminal.
    first = trees["frontier"][0]
    assert all(not c.children for k in first.children for c in first.children[k].children.values())


def test_the_same_request_in_flight_twice_is_sent_once():
    model = JitterModel(4, sleep=0.05)
    done: list[Any] = []

    def step(i):
        a = yield _call("same", "one question")
        b = yield [_call("same", "one question"), _call("other", f"q{i % 2}")]
        return (i, a, *b)

    frontier = Frontier(model, max_concurrency=8)
    for i in range(10):
        frontier.start(step(i), done.append)
    frontier.run()
    assert sorted(done) == sorted(run_batched([step(i) for i in range(10)], JitterModel(4)))
    assert sum(model.sent.values()) == 3 == frontier.calls


def test_a_finished_step_and_a_step_without_calls_are_results_at_once():
    got: list[Any] = []
    frontier = Frontier(JitterModel(0), max_concurrency=2)

    def no_calls():
        return "made no call"
        yield  # pragma: no cover - makes this a generator

    frontier.start(42, got.append)
    frontier.start(no_calls(), got.append)
    frontier.run()
    assert got == [42, "made no call"]
    assert frontier.calls == 0


@pytest.mark.parametrize("name", ["levels", "frontier"])
def test_run_steps_returns_each_steps_result_in_order_on_either_scheduler(name):
    # Distinct requests: a request recurring in another batch is parsed (and counted) once
    # per batch level by level, once in all on the frontier (the results are the same).
    def step(i):
        a = yield _call("flaky", f"q{i}")
        b = yield [_call("t", f"r{i}"), _call("flaky", f"s{i}")]
        return (i, a, *b)

    steps = [step(i) if i % 4 else f"ready {i}" for i in range(23)]
    reference_stats = ParseStats()
    reference = run_batched(
        [step(i) if i % 4 else f"ready {i}" for i in range(23)],
        JitterModel(5),
        stats=reference_stats,
    )
    finished: list[int] = []
    stats = ParseStats()
    with scheduler(name):
        got = run_steps(steps, JitterModel(5), stats=stats, chunk=6, on_done=finished.append)
    assert got == reference and sum(finished) == 23
    assert stats.to_dict() == reference_stats.to_dict()


def test_reasks_use_the_policy_seeds_and_fall_back_as_complete_parsed_batch_does():
    class Refuses(JitterModel):
        def complete(self, request):
            super().complete(request)
            return ChatResponse(text="never a number", backend=self.backend, model=self.model)

    model = Refuses(0)
    stats = ParseStats()
    out: list[Any] = []

    def step():
        v = yield _call("t", "x", seed=7)
        return v

    frontier = Frontier(model, policy=ParsePolicy(max_reasks=2), stats=stats, max_concurrency=4)
    frontier.start(step(), out.append)
    frontier.run()
    assert out == [-1.0]
    stride = ParsePolicy().seed_stride
    assert sorted(r.seed for r in model.requests) == [7, 7 + stride, 7 + 2 * stride]
    assert stats.to_dict()["reasks"] == {"t": 2} and stats.to_dict()["fallbacks"] == {"t": 1}


def test_a_failed_call_stops_the_run_and_raises_after_running_calls_end():
    class Breaks(JitterModel):
        def complete(self, request):
            if "bad" in request.messages[-1].content:
                raise BackendError("server refused")
            return super().complete(request)

    model = Breaks(1, sleep=0.02)

    def step(i):
        v = yield _call("t", "bad" if i == 3 else f"ok {i}")
        w = yield _call("t", f"then {i} {v}")
        return w

    frontier = Frontier(model, max_concurrency=4)
    for i in range(20):
        frontier.start(step(i), lambda _v: None)
    with pytest.raises(BackendError, match="server refused"):
        frontier.run()
    assert model.active == 0  # nothing left running
    assert sum(model.sent.values()) < 39  # stopped early: not every call was made


def test_a_step_yielding_something_else_is_an_error():
    def step():
        yield "not a call"

    frontier = Frontier(JitterModel(0), max_concurrency=2)
    with pytest.raises(TypeError, match="yield a Call"):
        frontier.start(step(), lambda _v: None)


# --- the in-flight meter -----------------------------------------------------------------


def test_in_flight_mean_and_peak_are_time_weighted_over_the_span():
    clock = [0.0]
    meter = inflight._Meter(clock=lambda: clock[0])
    span = meter.open()
    meter.begin()  # t=0: 1 in flight
    meter.begin()  # 2
    clock[0] = 1.0
    meter.end()  # 1 from t=1
    clock[0] = 3.0
    meter.end()  # 0 from t=3
    clock[0] = 4.0
    span.close()
    got = span.result()
    # (2 * 1 s + 1 * 2 s) over 4 s.
    assert got == inflight.InFlight(calls=2, seconds=4.0, mean=1.0, peak=2)
    meter.begin()  # after the span: not counted
    assert span.result() == got


def test_in_flight_spans_nest_and_see_only_their_own_time():
    clock = [0.0]
    meter = inflight._Meter(clock=lambda: clock[0])
    outer = meter.open()
    meter.begin()
    clock[0] = 2.0
    inner = meter.open()
    meter.begin()
    clock[0] = 4.0
    meter.end()
    meter.end()
    inner.close()
    clock[0] = 8.0
    outer.close()
    assert inner.result() == inflight.InFlight(calls=1, seconds=2.0, mean=2.0, peak=2)
    assert outer.result() == inflight.InFlight(calls=2, seconds=8.0, mean=0.75, peak=2)
