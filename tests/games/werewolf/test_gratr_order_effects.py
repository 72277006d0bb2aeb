"""The order effects of Eqs. 3 and 8 that docs/gratr.md documents.

A village seat of the gratr preset (others: 3 werewolves, 4 village side, so
P(werewolf) = 3 (1 - T) / (3 (1 - T) + 4 (1 + T)), hole 12); Players 2 and 3
have trust 0.8 (the observer's own intents).
"""

from __future__ import annotations

import math

import pytest

from games.werewolf import rules
from games.werewolf.players.seat_models import make_seat_model
from gt_llm.opponents import Evidence, GratrModel
from gt_llm.opponents.gratr_equations import node_trust_update


def it(actor: str, target: str, c: float) -> Evidence:
    return Evidence(subject=target, value="x", kind="intent", actor=actor, credibility=c, step=1)


def p_wolf(t: float) -> float:
    return 3 * (1 - t) / (3 * (1 - t) + 4 * (1 + t))


@pytest.fixture
def base() -> GratrModel:
    m = make_seat_model("gratr", rules.preset("gratr"), 0, "villager")
    assert isinstance(m, GratrModel)
    return m.observe_all([it("Player 1", "Player 2", 0.8), it("Player 1", "Player 3", 0.8)])


def test_eq_3_equal_strength_keeps_the_first(base):
    accuse, defend = it("Player 2", "Player 5", -0.9), it("Player 3", "Player 5", 0.9)
    first = base.observe_all([accuse, defend]).belief("Player 5")
    second = base.observe_all([defend, accuse]).belief("Player 5")
    assert first.value == pytest.approx(-0.72) and second.value == pytest.approx(0.72)
    assert first.distribution["werewolf"] == pytest.approx(p_wolf(-0.72))  # 0.821656
    assert second.distribution["werewolf"] == pytest.approx(p_wolf(0.72))  # 0.108808
    assert p_wolf(-0.72) == pytest.approx(0.8217, abs=1e-4)
    assert p_wolf(0.72) == pytest.approx(0.1088, abs=1e-4)
    # The tie rule itself: |u| = |T| keeps T (strictly greater replaces).
    assert node_trust_update(0.8, 0.9, -0.8 * 0.9) == -0.8 * 0.9


def test_eq_3_unequal_strength_does_not_depend_on_order(base):
    accuse, defend = it("Player 2", "Player 5", -0.9), it("Player 3", "Player 5", 0.7)
    for seq in ([accuse, defend], [defend, accuse]):
        assert base.observe_all(seq).belief("Player 5").value == pytest.approx(-0.72)


def test_eq_8_read_replaces_a_stored_accusation(base):
    m = base.observe_all([it("Player 2", "Player 5", -0.9), it("Player 5", "Player 3", 0.9)])
    assert m.trust("Player 5") == pytest.approx(-0.72)  # stored by Eq. 3
    # One chain P3 <- P5: u = T(P3) T(P5, P3) = 0.8 tanh(0.9) = 0.573039.
    u = 0.8 * math.tanh(0.9)
    b = m.belief("Player 5")
    assert b.value == pytest.approx(u)
    assert b.distribution["werewolf"] == pytest.approx(p_wolf(u))  # 0.169153
