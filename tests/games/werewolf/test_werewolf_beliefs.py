"""Werewolf belief providers: events -> evidence, facts pinned, Dirichlet counts, prompt fields."""

from __future__ import annotations

import pytest

import games.werewolf.players.stand_in  # noqa: F401  (registers the scripted answers)
import gt_llm
from games.engine.calls import run_sync
from games.werewolf import rules
from games.werewolf.players import beliefs as wb
from games.werewolf.players import table_beliefs as tb
from games.werewolf.rules import Event
from gt_llm.opponents import Evidence, opponent_models

GRATR = rules.preset("gratr")  # werewolf 3, villager 2, seer, witch, guard
ALL = ("none", "dirichlet", "gratr", "bayes", "native-rag", "rerank-rag")


@pytest.fixture(scope="module")
def chat():
    return gt_llm.load_model("scripted")


def speech(rnd, player, kind, **act):
    return Event("speech", rnd, {"player": player, "turn": 0, "act": {"kind": kind, **act}})


def observe(b, chat, events, texts=None):
    return run_sync(b.observe(events, texts or {}), chat)


def test_every_registered_model_has_a_provider(chat):
    assert set(ALL) == set(opponent_models())
    for name in ALL:
        b = wb.make_seat_beliefs(name, GRATR, 0, "villager", chat=chat)
        assert b.name == name
        b2, fields = b.consult(phase="day_vote", subjects=[1, 2])
        assert fields["opponent"]["model"] == name
        assert set(fields) == {"opponent", "beliefs", "labels", "known"}


def test_unknown_model_and_role_are_refused():
    with pytest.raises(ValueError, match="unknown opponent model 'grat'"):
        wb.make_seat_beliefs("grat", GRATR, 0, "villager")
    with pytest.raises(ValueError, match="role must be one of"):
        wb.make_seat_beliefs("none", GRATR, 0, "mayor")


def test_context_alignment_by_side():
    v = wb.seat_context(GRATR, 0, "seer")
    w = wb.seat_context(GRATR, 1, "werewolf")
    assert v.hypotheses == ("villager", "werewolf", "seer", "witch", "guard")
    assert v.alignment["werewolf"] == -1.0 and v.alignment["witch"] == 1.0
    assert w.alignment["werewolf"] == 1.0 and w.alignment["villager"] == -1.0
    assert v.players[3] == "Player 4" and v.self_id == "Player 1"


def test_seer_check_pins_for_every_identity_model(chat):
    check = Event("check", 1, {"player": 0, "target": 3, "result": "werewolf"}, (0,))
    for name in ("dirichlet", "gratr"):
        b = observe(wb.make_seat_beliefs(name, GRATR, 0, "seer"), chat, [check])
        belief = b.model.belief("Player 4")
        assert belief.pinned and belief.distribution["werewolf"] == 1.0
        # A later judgment never moves the fact: a claim that it is the witch.
        b = observe(b, chat, [check, speech(1, 3, "claim", role="witch")])
        assert b.model.belief("Player 4").distribution["werewolf"] == 1.0
    g = observe(wb.make_seat_beliefs("gratr", GRATR, 0, "seer"), chat, [check])
    assert g.model.trust("Player 4") == -1.0  # an adversary of the seer, pinned
    # A team check's "not a werewolf" pins the village side, no role.
    ok = Event("check", 1, {"player": 0, "target": 5, "result": "not_werewolf"}, (0,))
    for name in ALL:
        d = observe(wb.make_seat_beliefs(name, GRATR, 0, "seer", chat=chat), chat, [ok])
        b6 = d.model.belief("Player 6")
        assert b6.pinned and b6.distribution["werewolf"] == 0.0
        assert b6.distribution["villager"] < 1.0
        assert wb.known_roles(d.model, [5]) == {5: wb.VILLAGE_SIDE}
    # Another seat's check is not this seat's fact (it could not see it anyway).
    other = observe(wb.make_seat_beliefs("dirichlet", GRATR, 1, "villager"), chat, [check])
    assert not other.model.belief("Player 4").pinned


def test_revealed_role_pins(chat):
    exile = Event("exile", 1, {"player": 2, "roles": {"2": "werewolf"}})
    deaths = Event("deaths", 2, {"players": [4], "roles": {"4": "guard"}})
    for name in ("dirichlet", "gratr"):
        b = observe(wb.make_seat_beliefs(name, GRATR, 0, "villager"), chat, [exile, deaths])
        assert b.model.belief("Player 3").distribution["werewolf"] == 1.0
        assert b.model.belief("Player 5").distribution["guard"] == 1.0
    g = observe(wb.make_seat_beliefs("gratr", GRATR, 0, "villager"), chat, [exile, deaths])
    assert g.model.trust("Player 3") == -1.0 and g.model.trust("Player 5") == 1.0
    # Without revealed roles, an exile is only a message.
    quiet = Event("exile", 1, {"player": 2})
    d = observe(wb.make_seat_beliefs("dirichlet", GRATR, 0, "villager"), chat, [quiet])
    assert not d.model.belief("Player 3").pinned
    assert d.model.history[-1].text == "Player 3 was exiled."


def test_werewolf_partners_are_facts(chat):
    partners = Event("partners", 1, {"werewolves": [1, 4, 6]}, (1, 4, 6))
    b = observe(wb.make_seat_beliefs("gratr", GRATR, 1, "werewolf"), chat, [partners])
    assert b.model.trust("Player 5") == 1.0 and b.model.trust("Player 7") == 1.0
    assert b.model.belief("Player 5").distribution["werewolf"] == 1.0
    v = observe(wb.make_seat_beliefs("gratr", GRATR, 0, "villager"), chat, [partners])
    assert v.model.trust("Player 5") == 0.0  # not a villager's knowledge


def test_dirichlet_counts_by_hand(chat):
    # Scripted extraction: a claim -> [speaker][role][7] (counts, 0.7 >= 0.5); an
    # accusation -> [target][werewolf][4] (below the threshold: recorded, no count);
    # a shared werewolf check -> [target][werewolf][6] (counts).
    events = [
        speech(1, 2, "claim", role="seer"),
        speech(1, 3, "accuse", target=5),
        speech(1, 2, "share_check", target=5, result="werewolf"),
    ]
    b = observe(wb.make_seat_beliefs("dirichlet", GRATR, 0, "villager"), chat, events)
    m = b.model
    # Hypotheses (villager, werewolf, seer, witch, guard); the other 7 players hold
    # (1, 3, 1, 1, 1) of them, so alpha_0 = 5 * (1, 3, 1, 1, 1) / 7 (total K = 5).
    a0 = [5 / 7, 15 / 7, 5 / 7, 5 / 7, 5 / 7]
    assert list(m.alpha("Player 3")) == pytest.approx([a0[0], a0[1], a0[2] + 1, a0[3], a0[4]])
    assert m.belief("Player 3").distribution["seer"] == pytest.approx(12 / 42)
    # The check counted, the accusation not.
    assert list(m.alpha("Player 6")) == pytest.approx([a0[0], a0[1] + 1, *a0[2:]])
    assert len(m.evidence["Player 6"]) == 2
    _, fields = b.consult(phase="day_vote", subjects=[2, 5])
    views = {v["player"]: v for v in fields["opponent"]["players"]}
    # The label names the likeliest role when its odds grew at least 3x: Player 3's
    # seer rose 5/35 -> 12/42 but werewolf's 15/42 is likelier (and fell from 15/35):
    # unsure. Player 6: werewolf 15/35 -> 22/42 is the likeliest, odds x1.47: unsure.
    assert views["Player 3"]["identity"] == "unsure"
    assert views["Player 6"]["identity"] == "unsure"
    assert views["Player 3"]["probabilities"]["seer"] == pytest.approx(12 / 42)
    assert fields["beliefs"][5]["werewolf"] == pytest.approx(22 / 42)
    assert sum(fields["beliefs"][5].values()) == pytest.approx(1.0)
    # A threshold of 0 counts the accusation too.
    loose = wb.make_seat_beliefs(
        "dirichlet", GRATR, 0, "villager", wb.BeliefSettings(threshold=0.0)
    )
    alpha6 = observe(loose, chat, events).model.alpha("Player 6")
    assert list(alpha6) == pytest.approx([a0[0], a0[1] + 2, *a0[2:]])


def test_extraction_is_one_batch_and_own_statements_are_not_sent(chat):
    events = [
        speech(1, 2, "claim", role="seer"),
        speech(1, 0, "accuse", target=5),  # the observer's own statement
        speech(1, 3, "nothing"),  # says nothing new
        speech(1, 4, "defend", target=2),
    ]
    b = wb.make_seat_beliefs("gratr", GRATR, 0, "villager")
    gen = b.observe(events, {})
    calls = next(gen)
    assert len(calls) == 4  # identity + intent for statements 0 and 3 only
    assert {c.request.task for c in calls} == {"opponents.identity", "opponents.intent"}
    for name in ("none", "native-rag", "rerank-rag"):
        g = wb.make_seat_beliefs(name, GRATR, 0, "villager").observe(events, {})
        with pytest.raises(StopIteration) as stop:
            next(g)  # no LLM call at all
        assert len(stop.value.value.model.history) == 4


def test_statement_ids_and_texts(chat):
    events = [speech(1, 2, "claim", role="seer")]
    b = observe(wb.make_seat_beliefs("native-rag", GRATR, 0, "villager"), chat, events, {0: "Hi."})
    assert b.statements == 1
    assert b.model.history[-1].text == "Player 3: Hi."
    b2 = observe(b, chat, [speech(1, 4, "accuse", target=2)])  # statement 1, no text given
    assert b2.statements == 2
    assert b2.model.history[-1].text == "Player 5: I think Player 3 is a werewolf."
    assert len(b2.last_evidence) == 1 and b2.last_evidence[0].kind == "message"


def test_table_adapter_queues_flushes_and_consults_once_per_evidence(chat):
    from games.werewolf.players.table import PublicObservation

    b = wb.make_seat_beliefs("gratr", GRATR, 0, "seer")
    t = tb.TableBeliefs(b, chat)
    t.observe(
        PublicObservation(
            "statement", 1, 5, None, {"kind": "claim", "role": "seer", "target": None}, "I am.", 0
        )
    )
    t.observe(PublicObservation("vote", 1, 5, 0))
    t.add_private([Event("check", 1, {"player": 0, "target": 3, "result": "werewolf"}, (0,))])
    assert len(t.queue) == 3
    beliefs = t.beliefs()  # flushes the queue alone (2 extraction calls) and consults
    assert not t.queue and beliefs[3]["werewolf"] == 1.0
    assert [r["type"] for r in t.records] == ["belief_evidence", "belief_consult"]
    text = t.belief_lines()
    assert len(t.consults) == 1  # the same evidence: no second consultation
    assert "Known for certain: Player 4 werewolf" in text
    assert "Player 4: werewolf (certain); adversary (trust -1.00)" in text
    assert "Player 6: werewolf; adversary" in text  # the false seer claim the seer saw
    assert "chains: Player 1 <- " in text
    d = tb.TableBeliefs(wb.make_seat_beliefs("dirichlet", GRATR, 0, "villager"), chat)
    d.observe(
        PublicObservation(
            "statement", 1, 2, None, {"kind": "claim", "role": "seer", "target": None}, "I am.", 0
        )
    )
    assert "Player 3: unsure; werewolf 0.36, seer 0.29, villager 0.12" in d.belief_lines()
    # Facts already taken are not taken twice.
    t.add_private([Event("check", 1, {"player": 0, "target": 3, "result": "werewolf"}, (0,))])
    assert not t.queue
    rag = tb.TableBeliefs(wb.make_seat_beliefs("native-rag", GRATR, 0, "seer"), chat)
    rag.observe(
        PublicObservation(
            "statement", 1, 5, 2, {"kind": "accuse", "target": 2}, "Player 3 is a wolf.", 0
        )
    )
    # The retrieval baseline's reading: the base rate 3/7, with its odds doubled by the
    # one retrieved accusation of Player 3.
    assert rag.beliefs("day_vote")[2]["werewolf"] == pytest.approx(6 / 10)
    assert rag.beliefs("day_vote")[4]["werewolf"] == pytest.approx(3 / 7)
    assert "Player 6: Player 3 is a wolf." in rag.belief_lines("day_vote")
    assert (
        tb.render_fields({"model": "none", "history": [], "retrieved": [], "players": []})
        == tb.NO_FIELDS
    )


def test_votes_are_attack_intents_and_messages(chat):
    votes = Event("votes", 1, {"votes": {"1": 2, "3": 2, "2": 1}})
    g = observe(wb.make_seat_beliefs("gratr", GRATR, 0, "villager"), chat, [votes])
    ev = g.model.edge_evidence("Player 2", "Player 3")
    assert len(ev) == 1 and ev[0].credibility == -0.5 and ev[0].value == "Attack"
    assert g.model.edge_trust("Player 2", "Player 3") == pytest.approx(-0.46211715726000974)
    n = observe(wb.make_seat_beliefs("none", GRATR, 0, "villager"), chat, [votes])
    assert [e.text for e in n.model.history] == [
        "Player 2 voted to exile Player 3.",
        "Player 3 voted to exile Player 2.",
        "Player 4 voted to exile Player 3.",
    ]


def test_gratr_fields_and_belief_map(chat):
    events = [
        Event("check", 1, {"player": 0, "target": 3, "result": "werewolf"}, (0,)),
        speech(1, 5, "claim", role="seer"),  # a lie the seer sees: [Player 6][werewolf][8]
        speech(1, 3, "accuse", target=6),
    ]
    b = observe(wb.make_seat_beliefs("gratr", GRATR, 0, "seer"), chat, events)
    b2, fields = b.consult(phase="day_vote", subjects=[3, 5, 6])
    views = {v["player"]: v for v in fields["opponent"]["players"]}
    assert views["Player 4"]["identity"] == "werewolf" and views["Player 4"]["pinned"]
    assert views["Player 4"]["stance"] == "adversary" and views["Player 4"]["trust"] == -1.0
    # The lie gave T = -0.8 (Eqs. 2-3); the consultation's retrieval (Eq. 8) then
    # combined the chains to Player 6 (a read), and the fields show that reading.
    assert b.model.trust("Player 6") == pytest.approx(-0.8)
    t6 = b2.model.belief("Player 6").value
    assert views["Player 6"]["stance"] == "adversary" and t6 < -0.1
    assert views["Player 6"]["trust"] == pytest.approx(t6, abs=1e-6)
    assert views["Player 6"]["chains"]
    bm = fields["beliefs"]
    assert bm[3]["werewolf"] == 1.0
    # One reading: the beliefs are the model's belief(p).distribution.
    for q in (3, 5, 6):
        assert bm[q] == dict(b2.model.belief(f"Player {q + 1}").distribution)
    # Player 7 was accused by a known werewolf (T = -1): Eq. 2 makes that support.
    assert b2.model.belief("Player 7").value > 0.1 and views["Player 7"]["stance"] == "ally"
    assert bm[6]["werewolf"] < 0.6 < bm[5]["werewolf"]
    for dist in bm.values():
        assert sum(dist.values()) == pytest.approx(1.0)


def test_goal_text_is_one_per_decision_kind():
    assert wb.goal_text(2, "seer", "day_vote") == (
        "Player 3 is a seer and must find the werewolves: choose whom to vote out (vote)."
    )
    kinds = {wb.decision_kind(p) for p in ("night_wolves", "night_seer", "day_vote", "day_speak")}
    assert kinds == {"night", "vote", "statement"}
    goals = {wb.goal_text(2, "seer", p) for p in ("night_seer", "day_vote", "day_speak")}
    assert len(goals) == 3


def test_settings_are_validated():
    with pytest.raises(ValueError, match="threshold"):
        wb.BeliefSettings(threshold=1.5)
    with pytest.raises(ValueError, match="vote_credibility"):
        wb.BeliefSettings(vote_credibility=0.0)


def test_prior_is_the_role_counts_among_the_others():
    for name, config in rules.PRESETS.items():
        for role in wb.hypotheses_of(config):
            ctx = wb.seat_context(config, 0, role)
            counts = {h: config.roles.count(h) - (h == role) for h in ctx.hypotheses}
            assert dict(ctx.prior) == counts, name
            n = config.num_players - 1
            for model in ALL:
                m = wb.make_seat_model(model, config, 0, role)
                d = m.belief("Player 2").distribution
                assert d == pytest.approx({h: c / n for h, c in counts.items()}), (name, model)


def test_three_readings_agree(chat):
    # One accusation of Player 5, judged werewolf 4/10 by the extraction.
    from games.werewolf.day import steps as day_steps

    events = [speech(1, 2, "accuse", target=4)]
    for name in ALL:
        t = tb.TableBeliefs(wb.make_seat_beliefs(name, GRATR, 0, "villager", chat=chat), chat)
        t.add_private(events)  # nothing private here; the statement comes from observe
        t.queue += events
        stand_in = t.beliefs("day_vote")  # what the stand-in reads (belief_map)
        text = t.belief_lines("day_vote")  # what the prompt shows
        day = day_steps.werewolf_probabilities(t.state.model, [1, 2, 3, 4])  # the day study
        for q in (1, 2, 3, 4):
            assert stand_in[q] == pytest.approx(day[q]) or name in wb.RETRIEVAL_MODELS
        if name in ("gratr", "dirichlet"):
            shown = f"werewolf {stand_in[4]['werewolf']:.2f}"
            assert "Player 5: " in text and shown in text.split("Player 5: ")[1].split("\n")[0]
    g = wb.make_seat_beliefs("gratr", GRATR, 0, "villager", chat=chat)
    g = observe(g, chat, events)
    # The judgment came from the accuser's statement, whose trust is 0 (Eq. 2: u = 0), so
    # GRATR still reads the prior 3/7 — in the prompt, the stand-in and the day study alike.
    assert g.model.trust("Player 5") == 0.0
    assert g.model.belief("Player 5").distribution["werewolf"] == pytest.approx(3 / 7)
    own = g.model.observe(Evidence(subject="Player 5", value="werewolf", weight=0.4, step=1))
    # The seat's own judgment at 4/10: T = -0.4, P = 3 * 1.4 / (3 * 1.4 + 4 * 0.6).
    assert own.belief("Player 5").distribution["werewolf"] == pytest.approx(4.2 / 6.6)


def test_a_werewolf_seat_knows_every_side_whatever_its_model(chat):
    partners = Event("partners", 1, {"werewolves": [1, 4, 6]}, (1, 4, 6))
    for name in ALL:
        t = tb.TableBeliefs(wb.make_seat_beliefs(name, GRATR, 1, "werewolf", chat=chat), chat)
        t.add_private([partners])
        text = t.belief_lines("day_vote")
        known = text.splitlines()[0]
        expected = "; ".join(
            f"Player {q + 1} " + ("werewolf" if q in (4, 6) else "village side")
            for q in range(8)
            if q != 1
        )
        assert known == f"Known for certain: {expected}", name
        # Models with per-player lines say the same on every line (never "werewolf 0.20").
        for line in text.splitlines()[1:]:
            if line.startswith("Player "):
                q = int(line.split(":")[0].split()[-1]) - 1
                side = "werewolf" if q in (4, 6) else "village side"
                assert line.split(": ", 1)[1].startswith(f"{side} (certain)"), (name, line)
        beliefs = t.beliefs("day_vote")
        for q in range(8):
            if q == 1:
                continue
            assert beliefs[q]["werewolf"] == (1.0 if q in (4, 6) else 0.0), (name, q)
