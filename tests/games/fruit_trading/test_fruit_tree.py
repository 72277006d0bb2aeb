"""Tree building through the cache, parse fallbacks, reports and the beyond-the-paper studies."""

from __future__ import annotations

import numpy as np
import pytest

import solvers
from games.fruit_trading import prompts, report
from games.fruit_trading.dialogue import (
    Config,
    DialogueState,
    GuessRecord,
    PayoffRecord,
    Turn,
    initial_state,
)
from games.fruit_trading.rules import TONES, make_scenario
from games.fruit_trading.studies import ANY, any_baseline, whole_game_study
from games.fruit_trading.tree import build_subgames
from gt_llm.cache import CachedModel
from gt_llm.parsing import ParsePolicy, ParseStats
from solvers.studies import level_distributions, mapped_policy

INITS = (1, 2)
CFG = Config(max_messages=3, beliefs=True)


def _same_trees(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.tree.infoset_keys == y.tree.infoset_keys
        np.testing.assert_array_equal(x.tree.returns, y.tree.returns)
        np.testing.assert_array_equal(x.tree.parent, y.tree.parent)
        np.testing.assert_array_equal(x.tree.action, y.tree.action)


def test_cache_misses_equal_distinct_requests_and_rebuild_is_free(
    scripted, recording_model, tmp_path
):
    path = tmp_path / "c.sqlite"
    backend = recording_model(scripted, concurrency=4)
    cached = CachedModel(backend, path)
    front = recording_model(cached, concurrency=4)  # everything the builder asks for
    first = build_subgames(INITS, CFG, front, progress=False, max_concurrency=4)
    keys = backend.keys()
    assert len(keys) > 50
    assert len(keys) == len(set(keys)), "a request went to the backend twice"
    assert set(keys) == set(front.keys())
    assert cached.stats().misses == len(keys)
    assert cached.stats().hits == len(front.keys()) - len(keys)
    cached.close()

    backend2 = recording_model(scripted)
    cached2 = CachedModel(backend2, path)
    second = build_subgames(INITS, CFG, cached2, progress=False)
    assert backend2.requests == []
    assert cached2.stats().misses == 0
    assert cached2.stats().hits == len(front.keys())  # the same calls, all from the file
    _same_trees(first, second)
    # And the same trees as with no cache at all.
    _same_trees(first, build_subgames(INITS, CFG, scripted, progress=False))


def test_unparseable_agreement_falls_back_after_reasks(scripted, recording_model):
    def garbage(req):
        return "maybe" if req.task == prompts.AGREEMENT.task else None

    model = recording_model(scripted, answer=garbage, concurrency=1)
    stats = ParseStats()
    policy = ParsePolicy(max_reasks=2)
    cfg = Config(max_messages=3)
    sgs = build_subgames([1, 4], cfg, model, policy=policy, stats=stats, progress=False)
    agreement_reqs = [r for r in model.requests if r.task == prompts.AGREEMENT.task]
    first_asks = {r.cache_key("x", "y") for r in agreement_reqs if r.seed == cfg.eval_seed}
    d = stats.to_dict()
    assert d["fallbacks"][prompts.AGREEMENT.task] == len(first_asks) > 0
    assert d["total_fallbacks"] == len(first_asks)
    assert d["reasks"][prompts.AGREEMENT.task] == 2 * len(first_asks)
    # Re-asks used different, deterministically derived seeds.
    seeds = sorted({r.seed for r in agreement_reqs})
    assert seeds == [cfg.eval_seed + k * policy.seed_stride for k in range(3)]
    # Each distinct request was asked once per attempt.
    assert len(agreement_reqs) == 3 * len(first_asks)
    # The fallback is "no agreement": every negotiation runs to max_messages, payoff 0.
    for sg in sgs:
        assert not any(s.agreement for s in sg.states())
        assert np.all(sg.tree.returns == 0.0)
        assert all(len(s.turns) == cfg.max_messages for s in sg.states() if s.is_terminal())
        assert sg.tree.num_terminals == (len(TONES) * cfg.num_seeds) ** (cfg.max_messages - 1)
    # Nothing else fell back.
    assert set(d["fallbacks"]) == {prompts.AGREEMENT.task}


def test_unparseable_guess_gives_no_belief_update(scripted, recording_model):
    def garbage(req):
        return "I cannot tell." if req.task == prompts.GUESS_FRUIT.task else None

    model = recording_model(scripted, answer=garbage, concurrency=1)
    stats = ParseStats()
    sg = build_subgames(
        [1], Config(max_messages=3, beliefs=True), model, stats=stats, progress=False
    )[0]
    guesses = [g for s in sg.states() for g in s.guesses]
    assert guesses and all(g.guess is None and not g.correct for g in guesses)
    for s in sg.states():
        for b in s.beliefs:
            assert b.snapshot()["subjects"] == {}
    assert stats.to_dict()["fallbacks"][prompts.GUESS_FRUIT.task] > 0


# --- reports -----------------------------------------------------------------------------


class _FakeSubgame:
    def __init__(self, states):
        self._states = states

    def states(self):
        return list(self._states)


def _state(n_messages, *, agreement=False, payoff=None, guesses=()):
    cfg = Config(max_messages=4)
    sc = make_scenario(0)
    base = initial_state(sc, cfg)
    turns = tuple(Turn(i % 2, "calm", 0, f"m{i}") for i in range(n_messages))
    return DialogueState(
        scenario=sc,
        config=cfg,
        turns=turns,
        beliefs=base.beliefs,
        agreement=agreement,
        payoff=payoff,
        guesses=guesses,
    )


def _pay(m, llm, exact, feasible=True):
    return PayoffRecord(message=m, llm=llm, exact=exact, trade_text="t", feasible=feasible)


def test_report_functions_on_hand_made_states():
    truth = ("apples",)
    states = [
        _state(1, guesses=(GuessRecord(1, 1, "apples", truth),)),
        _state(2, guesses=(GuessRecord(1, 1, "apples", truth), GuessRecord(2, 0, "pears", truth))),
        _state(2, agreement=True, payoff=_pay(2, (3.0, -1.0), (3, -1))),
        _state(3, guesses=(GuessRecord(3, 1, None, truth),)),
        _state(3, agreement=True, payoff=_pay(3, (2.0, 1.0), (2, 1))),
        _state(3, agreement=True, payoff=_pay(3, (-2.0, -1.0), (1, 1), feasible=False)),
        _state(3, agreement=True, payoff=_pay(3, (0.0, 0.0), None, feasible=None)),
        _state(4),
        _state(4, agreement=True, payoff=_pay(4, (1.0, 1.0), (1, 1))),
    ]
    sgs = [_FakeSubgame(states[:4]), _FakeSubgame(states[4:])]

    rates = report.agreement_rates(sgs, 4)
    assert [(r["message"], r["agreements"], r["histories"]) for r in rates] == [
        (1, 0, 1),
        (2, 1, 2),
        (3, 3, 4),
        (4, 1, 2),
    ]
    assert [r["percentage"] for r in rates] == [0.0, 50.0, 75.0, 50.0]

    g = report.guess_table(sgs)
    # Only the guess made right after a state's last message counts (once per history).
    assert [(r["message"], r["correct"], r["total"]) for r in g] == [
        (1, 1, 1),
        (2, 0, 1),
        (3, 0, 1),
    ]

    signs = {r["message"]: r for r in report.payoff_signs(sgs, (2, 3, 4))}
    assert signs[3]["agreements"] == 3
    assert signs[3]["positive_p1"] == pytest.approx(100 / 3)
    assert signs[3]["positive_both"] == pytest.approx(100 / 3)
    assert signs[3]["negative_both"] == pytest.approx(100 / 3)
    assert signs[2]["positive_p1"] == 100.0 and signs[2]["negative_p2"] == 100.0
    assert signs[2]["positive_both"] == 0.0
    assert signs[4]["positive_both"] == 100.0

    dis = report.payoff_disagreements(sgs)
    assert dis["agreements"] == 5
    assert dis["trade_unparsed"] == 1
    assert dis["llm_vs_exact_differ"] == 1
    assert dis["infeasible_trades"] == 1
    assert dis["examples"] == [{"message": 3, "llm": [-2.0, -1.0], "exact": [1, 1], "trade": "t"}]


def test_report_nan_when_no_histories():
    rows = report.payoff_signs([_FakeSubgame([_state(1)])], (3,))
    assert rows[0]["agreements"] == 0 and np.isnan(rows[0]["positive_p1"])


def test_agreement_rates_match_tree_structure(scripted):
    cfg = Config(max_messages=3)
    sgs = build_subgames([1, 2, 7], cfg, scripted, progress=False)
    rates = report.agreement_rates(sgs, cfg.max_messages)
    trees = [sg.tree for sg in sgs]
    for r in rates:
        m = r["message"]
        depth = 2 * (m - 1)
        at_depth = sum(int(np.sum((t.depth == depth) & (t.kind != solvers.CHANCE))) for t in trees)
        assert r["histories"] == at_depth
        if m < cfg.max_messages:
            # Before the last message, a history ends exactly when a trade is agreed.
            ends = sum(
                int(np.sum((t.depth == depth) & (t.kind == solvers.TERMINAL))) for t in trees
            )
            assert r["agreements"] == ends
    assert sum(r["histories"] for r in rates) == sum(
        int(np.sum(t.kind != solvers.CHANCE)) for t in trees
    )
    assert any(r["agreements"] > 0 for r in rates)
    # Agreed histories have the payoffs the tree carries at those terminals.
    agreed = sorted(s.returns() for sg in sgs for s in sg.states() if s.agreement)
    nonzero_terms = sorted(
        tuple(t.returns[n]) for t in trees for n in t.terminals if np.any(t.returns[n] != 0)
    )
    assert [a for a in agreed if a != (0.0, 0.0)] == nonzero_terms


# --- generalisation and the whole game -----------------------------------------------------


@pytest.fixture(scope="module")
def two_subgames(scripted):
    sgs = build_subgames([1, 2], Config(max_messages=3), scripted, progress=False)
    policies = [solvers.CFRSolver(sg.tree).run(30).average_policy() for sg in sgs]
    return sgs, policies


def test_level_distributions_and_mapped_policy(two_subgames):
    sgs, policies = two_subgames
    for sg, pol in zip(sgs, policies, strict=True):
        dists = level_distributions(sg.tree, pol)
        assert sorted(dists) == [0, 1]  # two decisions after the opening
        for d in dists.values():
            assert d.shape == (len(TONES),)
            assert d.sum() == pytest.approx(1.0)
            assert np.all(d >= 0)
        # Level 0 is the root's information set: its distribution is the policy there.
        np.testing.assert_allclose(dists[0], pol.probs[sg.tree.infoset[0], : len(TONES)])
        for other in sgs:
            mapped = mapped_policy(other.tree, dists, default_action=ANY)
            solvers.check_policy(other.tree, mapped)
            np.testing.assert_allclose(mapped.probs[other.tree.infoset[0]], dists[0])
        # Without distributions, the mapped policy is the "any" baseline.
        np.testing.assert_array_equal(
            mapped_policy(sg.tree, {}, default_action=ANY).probs, any_baseline(sg.tree).probs
        )


def test_whole_game_study_tree_is_chance_over_subgames(two_subgames):
    sgs, policies = two_subgames
    res = whole_game_study(sgs, policies, iterations=30, cfr_variant="cfr")
    assert res["nodes"] == 1 + sum(sg.tree.num_nodes for sg in sgs)
    assert res["infosets"] + res["infosets_shared_across_subgames"] == sum(
        sg.tree.num_infosets for sg in sgs
    )
    for k in ("whole_game_cfr", "per_subgame_cfr_assembled"):
        assert res[k]["nash_conv"] >= -1e-9
        assert np.isfinite(res[k]["cfr_gain"])
