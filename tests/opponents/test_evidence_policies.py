"""How each model takes weak judgments, self-claims and role counts used up by facts.

A village seat of the ``gratr`` preset (8 players: 3 werewolves, 2 villagers,
seer, witch, guard; the observer a villager), so the prior among the other
seven is werewolf 3, villager 1, seer 1, witch 1, guard 1 (P(werewolf) = 3/7).
The policies are documented in ``docs/opponent-models.md``.
"""

from __future__ import annotations

import pytest

from games.werewolf import rules
from games.werewolf.players.seat_models import make_seat_model
from gt_llm.opponents import Evidence, opponent_models

MODELS = [m for m in ("none", "dirichlet", "gratr", "bayes") if m in opponent_models()]


def p(i: int) -> str:
    return f"Player {i}"


def seat(name: str, role: str = "villager"):
    return make_seat_model(name, rules.preset("gratr"), 0, role)


def judgment(subject: str, value: str, weight: float, step: int, actor: str = "") -> Evidence:
    return Evidence(subject=subject, value=value, weight=weight, step=step, actor=actor)


def fact(subject: str, value: str, negated: bool = False) -> Evidence:
    return Evidence(subject=subject, value=value, certain=True, negated=negated, step=1)


def test_dirichlet_ignores_judgments_below_its_threshold_and_counts_the_rest():
    m = seat("dirichlet")
    before = dict(m.belief(p(3)).distribution)
    weak = m.observe_all(judgment(p(3), "seer", 0.45, s, actor=p(2)) for s in range(60))
    assert dict(weak.belief(p(3)).distribution) == before  # 60 at 0.45: nothing
    strong = m.observe_all(judgment(p(3), "seer", 0.5, s, actor=p(2)) for s in range(60))
    assert strong.belief(p(3)).distribution["seer"] > 0.9  # the paper's +1 per guess


def test_gratr_counts_a_source_once_and_by_its_trust():
    m = seat("gratr")
    before = dict(m.belief(p(3)).distribution)
    # 60 weak "seer" judgments from a speaker the observer does not trust (T = 0): nothing.
    untrusted = m.observe_all(judgment(p(3), "seer", 0.45, s, actor=p(2)) for s in range(60))
    assert dict(untrusted.belief(p(3)).distribution) == pytest.approx(before)
    untrusted_wolf = m.observe_all(
        judgment(p(3), "werewolf", 0.45, s, actor=p(2)) for s in range(60)
    )
    assert dict(untrusted_wolf.belief(p(3)).distribution) == pytest.approx(before)
    # The observer's own 60 weak judgments count once (the latest), at full trust.
    own = m.observe_all(judgment(p(3), "seer", 0.45, s) for s in range(60))
    once = m.observe(judgment(p(3), "seer", 0.45, 59))
    assert dict(own.belief(p(3)).distribution) == pytest.approx(
        dict(once.belief(p(3)).distribution)
    )
    assert own.belief(p(3)).distribution["seer"] < 0.3


@pytest.mark.parametrize("name", MODELS)
def test_a_werewolf_claiming_seer_buys_no_trust(name):
    m = seat(name)
    prior_wolf = m.belief(p(4)).distribution["werewolf"]
    assert prior_wolf == pytest.approx(3 / 7)
    claimed = m.observe(judgment(p(4), "seer", 0.9, 1, actor=p(4)))
    wolf = claimed.belief(p(4)).distribution["werewolf"]
    if name == "gratr":  # the claimer's own trust (0) weighs the claim: nothing moves
        assert wolf == pytest.approx(prior_wolf)
        assert claimed.belief(p(4)).value == 0.0
    if name == "bayes":  # cheap talk: a werewolf bluffs as readily as the seer tells
        assert wolf >= prior_wolf - 1e-12
    if name == "none":
        assert wolf == pytest.approx(prior_wolf)


@pytest.mark.parametrize("name", MODELS)
def test_used_up_roles_get_no_mass(name):
    m = seat(name, role="seer")
    # A seer that has found all three werewolves and the witch.
    m = m.observe_all(
        [
            fact(p(2), "werewolf"),
            fact(p(3), "werewolf"),
            fact(p(4), "werewolf"),
            fact(p(5), "witch"),
        ]
    )
    for other in (p(6), p(7)):
        d = m.belief(other).distribution
        assert d["werewolf"] == 0.0 and d["witch"] == 0.0 and d["seer"] == 0.0
        assert sum(d.values()) == pytest.approx(1.0)
        ref = m.reference(other)
        assert ref["werewolf"] == 0.0 and ref["witch"] == 0.0


@pytest.mark.parametrize("name", MODELS)
def test_a_found_werewolf_leaves_the_remaining_share(name):
    m = seat(name).observe(fact(p(2), "werewolf"))  # a revealed werewolf (e.g. exiled)
    # Six unknown others share the remaining 2 werewolves: 2/6 each without evidence.
    assert m.belief(p(5)).distribution["werewolf"] == pytest.approx(2 / 6)
    assert m.reference(p(5))["werewolf"] == pytest.approx(2 / 6)
