"""Dirichlet gives 0 to every role the observer knows is impossible."""

from __future__ import annotations

import pytest

from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.players.beliefs import make_seat_beliefs
from games.werewolf.players.seat_models import hypotheses_of, make_seat_model, role_prior
from gt_llm.opponents import DirichletBelief, Evidence


def judgment(subject: str, role: str) -> Evidence:
    return Evidence(subject=subject, value=role, source="llm_guess", step=1, weight=0.8)


def test_a_doctor_told_player_3_is_the_doctor_by_hand():
    config = rules.preset("arena")  # werewolf 2, villager 4, seer 1, doctor 1
    m = make_seat_model("dirichlet", config, 0, "doctor")
    assert isinstance(m, DirichletBelief)
    assert m.hypotheses == ("villager", "werewolf", "seer", "doctor")
    # alpha_0 = 1 * K * base = 4 * (4, 2, 1, 0) / 7; the judgment adds 1 to doctor,
    # which was 0.2 = 1 / (4 + 1) before; now doctor is impossible and the rest keep
    # their prior proportions 4 : 2 : 1.
    b = m.observe(judgment("Player 3", "doctor")).belief("Player 3")
    assert b.distribution["doctor"] == 0.0
    assert b.distribution["villager"] == pytest.approx(4 / 7)
    assert b.distribution["werewolf"] == pytest.approx(2 / 7)
    assert b.distribution["seer"] == pytest.approx(1 / 7)
    # A judgment of a possible role still counts: alpha = (16/7 + 1, 8/7, 4/7, 0) / (4 + 1).
    b2 = m.observe(judgment("Player 3", "villager")).belief("Player 3")
    assert b2.distribution["villager"] == pytest.approx((16 / 7 + 1) / 5)
    assert b2.distribution["werewolf"] == pytest.approx((8 / 7) / 5)


@pytest.mark.parametrize("preset", sorted(rules.PRESETS))
def test_every_seat_of_every_preset_gives_impossible_roles_zero(preset):
    config = rules.preset(preset)
    hyps = hypotheses_of(config)
    players = range(config.num_players)
    for role in hyps:
        impossible = {h for h, n in role_prior(config, role).items() if n <= 0}
        seat = 0
        wolves = set(range(config.roles.werewolf))  # seat 0 is one of them when a werewolf
        sb = make_seat_beliefs("dirichlet", config, seat, role)
        if role == "werewolf":
            event = rules.Event("partners", 0, {"werewolves": sorted(wolves)}, (seat,))
            sb = run_sync(sb.observe([event], {}), None)
        model = sb.model
        # Every other player is judged to be every role, confidently.
        model = model.observe_all(
            judgment(f"Player {q + 1}", h) for q in players if q != seat for h in hyps
        )
        for q in players:
            if q == seat:
                continue
            dist = model.belief(f"Player {q + 1}").distribution
            assert sum(dist.values()) == pytest.approx(1.0)
            for h in impossible:
                assert dist[h] == 0.0, (preset, role, q, h)
            if role == "werewolf" and q not in wolves:
                assert dist["werewolf"] == 0.0  # a werewolf knows its non-partners
