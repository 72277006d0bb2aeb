"""The ultimatum example against theory, with pygambit's exact LCP solver as the oracle.

The tree is the engine's (``EngineGame.build_tree``), exported to Gambit's
``.efg`` format. Gambit's exact (rational) LCP equilibria must have NashConv 0
by our best responses; the subgame-perfect profile (by backward induction:
the responder accepts every positive offer, the proposer picks the tone with
the best expected share) must have NashConv exactly 0 by ours and regret
exactly 0 by Gambit's, and its values are those of the stand-in's offers.
"""

from __future__ import annotations

import io
import json
from fractions import Fraction

import numpy as np
import pygambit  # a dev dependency (pyproject extras "dev")
import pyspiel
import pytest

import games  # noqa: F401  (registers every game)
import solvers
from games.ultimatum.game import ACCEPT, TONES
from solvers.efg import sanitize_label
from tests.cli_runner import run_cli


@pytest.fixture(scope="module")
def setup():
    game = pyspiel.load_game("python_ultimatum")
    tree = game.build_tree()
    gambit = pygambit.read_efg(io.StringIO(solvers.to_efg(tree)))
    return game, tree, gambit


def _gambit_infosets(tree, gambit):
    isets = {
        (int(i), iset.label): iset
        for i, player in enumerate(gambit.players)
        for iset in player.infosets
    }
    return [
        isets[(int(tree.infoset_player[s]), sanitize_label(k))]
        for s, k in enumerate(tree.infoset_keys)
    ]


def _subgame_perfect(tree) -> tuple[solvers.TreePolicy, float]:
    """Backward induction on the tree: the responder accepts when accepting pays more
    (every positive offer), the proposer picks the tone of the best expected share."""
    children: dict[int, list[int]] = {}
    for n in range(1, tree.num_nodes):
        children.setdefault(int(tree.parent[n]), []).append(n)
    probs = np.zeros((tree.num_infosets, tree.max_actions))

    def value(n: int) -> np.ndarray:
        kind = int(tree.kind[n])
        if kind == solvers.TERMINAL:
            return tree.returns[n]
        if kind == solvers.CHANCE:
            return sum(tree.chance_prob[c] * value(c) for c in children[n])
        player, s = int(tree.player[n]), int(tree.infoset[n])
        options = {int(tree.action[c]): value(c) for c in children[n]}
        best = max(options, key=lambda a: (options[a][player], a == ACCEPT))
        probs[s, tree.legal_actions(s).index(best)] = 1.0
        return options[best]

    root_value = value(0)
    return solvers.TreePolicy(probs), float(root_value[0])


def test_the_tree_is_small_and_complete(setup):
    _, tree, gambit = setup
    # tone (3) x seed (2) x answer (2) terminals; one proposer set, one responder set per message.
    assert tree.num_terminals == 12
    assert len(gambit.outcomes) == tree.num_terminals


def test_gambit_exact_lcp_equilibria_have_nash_conv_zero(setup):
    _, tree, gambit = setup
    result = pygambit.nash.lcp_solve(gambit, rational=True)
    assert result.equilibria
    isets = _gambit_infosets(tree, gambit)
    for profile in result.equilibria:
        assert profile.max_regret() == 0
        probs = np.zeros((tree.num_infosets, tree.max_actions))
        for s, iset in enumerate(isets):
            by_label = {a.label: float(profile[a]) for a in iset.actions}
            for j, a in enumerate(tree.legal_actions(s)):
                probs[s, j] = by_label[str(a)]
        assert solvers.nash_conv(tree, solvers.TreePolicy(probs)).nash_conv == pytest.approx(
            0.0, abs=1e-12
        )


def test_subgame_perfect_profile_has_nash_conv_exactly_zero(setup):
    _, tree, gambit = setup
    policy, keep = _subgame_perfect(tree)
    assert solvers.nash_conv(tree, policy).nash_conv == 0.0
    values = solvers.expected_values(tree, policy)
    assert values.tolist() == [keep, 10 - keep] == [7.5, 2.5]
    # Gambit's exact arithmetic agrees: no player can gain by deviating.
    profile = gambit.mixed_behavior_profile(rational=True)
    for s, iset in enumerate(_gambit_infosets(tree, gambit)):
        for j, a in enumerate(tree.legal_actions(s)):
            profile[iset.actions[str(a)]] = Fraction(int(policy.probs[s, j]))
    assert profile.max_regret() == 0
    assert profile.payoff(list(gambit.players)[0]) == Fraction(keep).limit_denominator(100)
    # The stand-in's assertive offers (2 or 3 of 10) leave the proposer the most.
    assert TONES[int(np.argmax(policy.probs[tree.infoset[0]]))] == "assertive"
    # Rejecting every offer is not an equilibrium: accepting a positive offer pays more.
    bad = policy.probs.copy()
    for s in range(tree.num_infosets):
        if tree.infoset_player[s] == 1:
            bad[s, :2] = bad[s, 1::-1]
    assert solvers.nash_conv(tree, solvers.TreePolicy(bad)).nash_conv > 0.5


def test_cfr_approaches_the_equilibrium(setup):
    _, tree, _ = setup
    policy = solvers.CFRSolver(tree).run(2000).average_policy()
    assert solvers.nash_conv(tree, policy).nash_conv < 0.01


def test_a_model_whose_every_offer_falls_back_still_builds_a_tree():
    # The fallback message is empty for every tone: the responder's information state
    # must still differ from the proposer's root (the seat is part of it).
    from games.engine.tree import build_subgames
    from games.ultimatum.game import Deal, Ultimatum
    from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
    from gt_llm.parsing import ParseStats

    class NoOffer(ChatModel):
        backend, model, spec = "test", "no-offer", "test:no-offer"

        def complete(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse(text="no offer here", backend="test", model="no-offer")

    stats = ParseStats()
    (sg,) = build_subgames(Ultimatum(10, 2), [Deal(10)], NoOffer(), stats=stats, progress=False)
    assert sg.tree.num_nodes == 22 and sum(stats.fallbacks.values()) == 6
    assert solvers.nash_conv(sg.tree, solvers.uniform_policy(sg.tree)).nash_conv >= 0


def test_solve_reports_noise_and_says_a_uniform_baseline_leaves_the_label_null_empty(tmp_path):

    out = tmp_path / "u"
    proc = run_cli(
        [
            "ultimatum",
            "solve",
            "--iterations",
            "20",
            "--out",
            str(out),
            "--no-progress",
            "--permutations",
            "49",
            "--bootstrap",
            "10",
            "--eval-seeds",
            "1",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    noise = summary["noise"]
    # Relabelling cannot move a uniform baseline: every permuted gain equals the observed one.
    assert noise["null_degenerate"] is True
    assert noise["per_tree"][0]["p_value"] == 1.0
    assert noise["per_tree"][0]["held_out"]["infosets"] > 0
    assert summary["final"]["n"] == 1 and summary["final"]["cfr_gain_ci95"] == [None, None]
    assert "cannot tell CFR-Gain from noise" in proc.stdout
    assert "held-out CFR-Gain" in proc.stdout
