"""A CFR agent decides from what it knows: the solved policy looked up by its features.

:func:`games.werewolf.day.features.decision_features` keys a speech decision by
what the speaker sees (role group, today's statements as kind, tone, speaker
and target relative to it); ``load_day_policy`` averages CFR's policy per key
and ``choose_speech`` draws from the key's joint, or reports ``no_match``.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from games.werewolf.day.features import decision_features
from games.werewolf.day.solve import SolveSettings, run_solve
from games.werewolf.players.cfr_policy import DayPolicy, choose_speech, load_day_policy
from games.werewolf.rules import SpeechAct

ACCUSE_3 = SpeechAct("accuse", "calm", target=3)
ACCUSE_5 = SpeechAct("accuse", "assertive", target=5)


def test_features_see_partners_only_as_a_werewolf():
    today = [(2, ACCUSE_3), (4, ACCUSE_5)]
    # Seat 3 is a werewolf whose partner is 4: it is accused, then its partner accuses 5.
    assert decision_features("werewolf", 3, [4], today) == (
        "werewolf|accuse/calm/other/me;accuse/assertive/partner/other"
    )
    # A villager in seat 3 hears the same statements but knows no partner.
    assert decision_features("villager", 3, [4], today) == (
        "village|accuse/calm/other/me;accuse/assertive/other/other"
    )
    assert decision_features("seer", 0, [], []) == "village|"
    said = [(1, SpeechAct("nothing", "any"))]
    assert decision_features("doctor", 0, [], said) == "village|nothing/any/other/-"


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    out = tmp_path_factory.mktemp("features_solve")
    run_solve(
        SolveSettings(
            out=str(out),
            days=2,
            iterations=30,
            models=("none",),
            tones=("calm", "any"),
            acts=("nothing", "accuse:most", "accuse:least"),
            deals=2,
            permutations=0,
            bootstrap=0,
            progress=False,
        )
    )
    return out


def test_the_policy_per_feature_is_the_reach_weighted_average(solved):
    doc = json.loads((solved / "decisions.json").read_text())
    weighted = defaultdict(lambda: np.zeros((2, 3)))
    plain = defaultdict(lambda: np.zeros((2, 3)))
    count: dict[str, int] = defaultdict(int)
    for day in doc["days"]:
        for dec in day["decisions"]:
            grid = np.array([[p or 0.0 for p in row] for row in dec["probs"]])
            weighted[dec["features"]] += dec["reach"] * grid
            plain[dec["features"]] += grid
            count[dec["features"]] += 1
    policy = load_day_policy(solved, "none")
    assert set(policy.features) == set(count) and dict(policy.feature_decisions) == count
    assert len(count) > 2  # first speakers of both groups, and later turns
    for key, w in weighted.items():
        grid = w if w.sum() > 0 else plain[key]
        assert np.asarray(policy.features[key]) == pytest.approx(grid / grid.sum(), abs=1e-12)


def _policy(features):
    joint = ((0.25, 0.25), (0.25, 0.25))
    return DayPolicy(
        source="hand",
        opponent_model="none",
        label="hand",
        tones=("calm", "any"),
        acts=("nothing", "accuse:most"),
        roles={"werewolf": 2, "villager": 6},
        groups={"werewolf": joint, "village": joint},
        decisions={"werewolf": 1, "village": 1},
        features=features,
        feature_decisions=dict.fromkeys(features, 1),
    )


def test_choosing_draws_from_the_speakers_features_or_reports_no_match():
    policy = _policy({"village|": ((0.0, 0.0), (0.0, 1.0)), "werewolf|": ((1.0, 0.0), (0.0, 0.0))})
    legal = [SpeechAct("accuse", "any", target=5), SpeechAct("nothing", "calm")]
    rng = np.random.default_rng(0)
    for _ in range(20):
        got = choose_speech(policy, "seer", legal, (5, 6), rng, features="village|")
        assert got.outcome == "matched" and got.act == SpeechAct("accuse", "any", target=5)
        wolf = choose_speech(policy, "werewolf", legal, (5, 6), rng, features="werewolf|")
        assert wolf.act == SpeechAct("nothing", "calm")
    missing = choose_speech(
        policy, "seer", legal, (5, 6), rng, features="village|nothing/any/other/-"
    )
    assert missing.outcome == "no_match" and missing.act is None
    with pytest.raises(ValueError, match="looked up by features"):
        choose_speech(policy, "seer", legal, (5, 6), rng)


def test_a_feature_joint_must_sum_to_one():
    with pytest.raises(ValueError, match="sums to"):
        _policy({"village|": ((0.5, 0.0), (0.0, 0.0))})
