"""One conformance suite over every registered opponent model."""

from __future__ import annotations

import json

import pytest
from opponent_fixtures import PLAYERS, ROLES, werewolf_context

from gt_llm.opponents import (
    Belief,
    Consultation,
    Evidence,
    OpponentModel,
    make_opponent_model,
    opponent_models,
)

MODELS = opponent_models()


def test_every_model_of_the_issue_is_registered():
    assert set(MODELS) >= {"none", "dirichlet", "gratr", "native-rag", "rerank-rag"}


def _story() -> list[Evidence]:
    return [
        Evidence(
            subject="Player 3", actor="Player 3", kind="message", text="I am the seer.", step=1
        ),
        Evidence(subject="Player 3", value="seer", weight=0.7, actor="Player 3", step=1),
        Evidence(
            subject="Player 4",
            kind="intent",
            actor="Player 3",
            credibility=-0.8,
            step=1,
            value="Attack",
        ),
        Evidence(
            subject="Player 4",
            actor="Player 3",
            kind="message",
            text="Player 4 is a werewolf.",
            step=2,
        ),
        Evidence(subject="Player 4", value="werewolf", weight=0.6, actor="Player 3", step=2),
        Evidence(
            subject="Player 1",
            kind="intent",
            actor="Player 4",
            credibility=-0.9,
            step=3,
            value="Attack",
        ),
        Evidence(
            subject="Player 2",
            kind="intent",
            actor="Player 1",
            credibility=0.6,
            step=3,
            value="Defend",
        ),
        Evidence(subject="Player 5", value="witch", certain=True, step=4, source="moderator"),
        Evidence(
            subject="Player 6", actor="Player 6", kind="message", text="Vote Player 4 out.", step=5
        ),
    ]


def _build(name: str) -> OpponentModel:
    m = make_opponent_model(name, werewolf_context(k=2))
    for e in _story():
        m = m.observe(e)
    return m


def _dump(x) -> str:
    return json.dumps(x, sort_keys=True, allow_nan=False)


@pytest.mark.parametrize("name", MODELS)
def test_observe_belief_and_fields(name):
    m = _build(name)
    assert m.name == name
    for who in PLAYERS:
        b = m.belief(who)
        assert isinstance(b, Belief) and b.subject == who
        assert set(b.distribution) <= set(ROLES)
        if b.distribution:
            assert sum(b.distribution.values()) == pytest.approx(1.0)
            assert all(0.0 <= v <= 1.0 for v in b.distribution.values())
        assert set(b.most_likely()) <= set(b.distribution)
        assert b.value is None or -1.0 <= b.value <= 1.0
        assert all(isinstance(e, Evidence) for e in b.evidence)
        with pytest.raises(TypeError):
            b.distribution["x"] = 1.0  # type: ignore[index]
    c = m.consult(goal="Who should be voted out?", subjects=["Player 4", "Player 3"])
    assert isinstance(c, Consultation) and isinstance(c.model, OpponentModel)
    f = c.fields
    assert set(f) == {"model", "history", "retrieved", "players"}
    assert f["model"] == name
    # Every model shows the last K = 2 messages.
    assert [h["text"] for h in f["history"]] == ["Player 4 is a werewolf.", "Vote Player 4 out."]
    assert len(f["retrieved"]) <= 3
    for view in f["players"]:
        assert set(view) == {
            "player",
            "identity",
            "probabilities",
            "stance",
            "trust",
            "chains",
            "pinned",
        }
        assert view["identity"] in ROLES + ("unsure",)
        assert view["stance"] in ("ally", "adversary", "unsure")
    assert [v["player"] for v in f["players"]] in ([], ["Player 4", "Player 3"])
    _dump(f)  # JSON-ready
    _dump(m.snapshot())
    # Default subjects: every other player (models with per-player views).
    default = m.prompt_fields()
    assert [v["player"] for v in default["players"]] in ([], list(PLAYERS[1:]))


@pytest.mark.parametrize("name", MODELS)
def test_value_semantics_and_branching(name):
    m = _build(name)
    before = _dump(m.snapshot())
    a = m.observe(Evidence(subject="Player 7", value="werewolf", weight=1.0, step=6))
    a = a.observe(
        Evidence(subject="Player 7", actor="Player 7", kind="message", text="Hi.", step=6)
    )
    b = m.observe(Evidence(subject="Player 7", value="villager", weight=1.0, step=6))
    b = b.observe(
        Evidence(subject="Player 8", actor="Player 8", kind="message", text="Yo.", step=6)
    )
    assert _dump(m.snapshot()) == before
    assert _dump(a.snapshot()) != _dump(b.snapshot())
    c = m.consult(goal="vote", subjects=["Player 4"])
    assert _dump(m.snapshot()) == before  # consulting does not change the model itself
    assert c.model.name == name


@pytest.mark.parametrize("name", MODELS)
def test_determinism(name):
    m1, m2 = _build(name), _build(name)
    assert _dump(m1.snapshot()) == _dump(m2.snapshot())
    f1 = m1.prompt_fields(goal="vote Player 4", subjects=["Player 4"])
    f2 = m2.prompt_fields(goal="vote Player 4", subjects=["Player 4"])
    assert _dump(f1) == _dump(f2)


@pytest.mark.parametrize("name", MODELS)
def test_outcome_and_facts(name):
    m = _build(name).on_outcome({"Player 8": "werewolf"}, step=9)
    b = m.belief("Player 8")
    if b.distribution:  # models with a distribution pin it
        assert b.pinned and b.most_likely() == ("werewolf",)
        # The earlier moderator fact holds too.
        assert m.belief("Player 5").most_likely() == ("witch",)
    if b.value is not None:
        assert b.value == -1.0


@pytest.mark.parametrize("name", MODELS)
def test_validation(name):
    m = make_opponent_model(name, werewolf_context())
    with pytest.raises(ValueError, match="Player 12"):
        m.observe(Evidence(subject="Player 12", value="werewolf"))
    with pytest.raises(ValueError, match="Player 12"):
        m.belief("Player 12")


def test_factory_errors():
    with pytest.raises(ValueError, match="unknown opponent model"):
        make_opponent_model("oracle", werewolf_context())
    with pytest.raises(ValueError, match="not both"):
        make_opponent_model("dirichlet", werewolf_context(), hypotheses=ROLES)
    with pytest.raises(ValueError, match="unknown fields"):
        make_opponent_model("dirichlet", hypotheses=ROLES, concentration=2.0)
    with pytest.raises(ValueError, match="self_id"):
        werewolf_context(self_id="Player 99")
    with pytest.raises(ValueError, match="alignment"):
        werewolf_context(alignment={"pirate": 1.0})
    with pytest.raises(ValueError, match="credibility"):
        Evidence(subject="Player 2", kind="intent", actor="Player 3", credibility=1.5)
    with pytest.raises(ValueError, match="actor"):
        Evidence(subject="Player 2", kind="intent", credibility=0.5)
