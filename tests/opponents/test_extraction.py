"""GRATR's extraction formats: parsers, prompt book, scripted stand-in, evidence."""

from __future__ import annotations

import pytest
from opponent_fixtures import PLAYERS, ROLES, werewolf_context

from gt_llm import ParseError, load_model
from gt_llm.opponents import (
    OPPONENT_PROMPTS,
    SpeechAct,
    identity_request,
    intent_request,
    intents_to_evidence,
    judgments_to_evidence,
    make_opponent_model,
    parse_identity_judgments,
    parse_intents,
    parse_relevance,
    rerank_request,
)


def _setting(self_role: str = "villager", **extra):
    """The observer's fields the extraction requests share: Player 1 in the GRATR game."""
    return dict(
        players=PLAYERS,
        self_id="Player 1",
        self_role=self_role,
        unique=("seer", "witch", "guard"),
        impostor="werewolf",
        **extra,
    )


def test_identity_parser_appendix_example():
    text = (
        "[Player 3][seer][8][No one else has claimed seer.]\n"
        "[Player 4][werewolf][8][Player 3 checked Player 4.]"
    )
    r = parse_identity_judgments(text, players=PLAYERS, identities=ROLES)
    assert r.skipped == 0
    assert [(j.player, j.identity, j.confidence) for j in r.items] == [
        ("Player 3", "seer", 8.0),
        ("Player 4", "werewolf", 8.0),
    ]
    assert r.items[1].analysis == "Player 3 checked Player 4."


def test_identity_parser_skips_and_counts_malformed():
    text = (
        "Here is my answer:\n"
        "[Player 2][villager][10][moderator]\n"
        "[Player 5][witch][10]\n"  # three groups: not a record
        "[Player 9][seer][5][no such player]\n"
        "[Player 6][pirate][5][no such identity]\n"
        "[Player 7][werewolf][11][confidence out of range]\n"
        "[Player 8][Unsure][0][case-insensitive]"
    )
    r = parse_identity_judgments(text, players=PLAYERS, identities=ROLES)
    assert [(j.player, j.identity) for j in r.items] == [
        ("Player 2", "villager"),
        ("Player 8", "unsure"),
    ]
    assert r.skipped == 4
    with pytest.raises(ParseError):
        parse_identity_judgments(text, players=PLAYERS, identities=ROLES, strict=True)
    with pytest.raises(ParseError):
        parse_identity_judgments("I think Player 2 is a villager.", players=PLAYERS)
    with pytest.raises(ParseError):
        parse_identity_judgments("[Player 2][villager]", players=PLAYERS)
    assert parse_identity_judgments("none").items == ()
    assert parse_identity_judgments("[none]").items == ()


def test_intent_parser_appendix_examples():
    # Two records on one line, as in the appendix's first example.
    text = (
        "[Player 1][Attack][Player 2][Questions Player 2.][6]"
        "[Player 1][Defend][Player 4][Vouches for Player 4.][7]\n"
        "[Player 7][Defind][Player 4][The appendix's own spelling.][7]\n"
        "[Player 2][deceive][Player 3][Misleads.][9.5]"
    )
    r = parse_intents(text, players=PLAYERS)
    assert r.skipped == 0
    assert [(i.actor, i.type, i.target, i.score) for i in r.items] == [
        ("Player 1", "Attack", "Player 2", 6.0),
        ("Player 1", "Defend", "Player 4", 7.0),
        ("Player 7", "Defend", "Player 4", 7.0),
        ("Player 2", "Deceive", "Player 3", 9.5),
    ]
    assert [i.credibility for i in r.items] == pytest.approx([-0.6, 0.7, 0.7, -0.95])


def test_intent_parser_malformed():
    text = (
        "[Player 1][Attack][Player 2][reason][6]\n"
        "[Player 1][Praise][Player 2][unknown type][6]\n"
        "[Player 1][Attack][Player 2][score missing]\n"
        "[Player 1][Attack][Player 2][negative][-3]\n"
        "[Player 1][Attack][Nobody][unknown player][3]"
    )
    r = parse_intents(text, players=PLAYERS)
    assert len(r.items) == 1 and r.skipped == 4
    with pytest.raises(ParseError):
        parse_intents(text, players=PLAYERS, strict=True)
    with pytest.raises(ParseError):
        parse_intents("[Player 1][Praise][Player 2][x][6]", players=PLAYERS)
    assert parse_intents("none").items == ()


def test_evidence_conversion():
    js = parse_identity_judgments(
        "[Player 3][seer][8][a]\n[Player 4][unsure][0][b]", players=PLAYERS, identities=ROLES
    ).items
    ev = judgments_to_evidence(js, step=4, speaker="Player 3")
    assert len(ev) == 1  # unsure carries no evidence
    assert (ev[0].subject, ev[0].value, ev[0].weight, ev[0].actor, ev[0].step) == (
        "Player 3",
        "seer",
        0.8,
        "Player 3",
        4,
    )
    ins = parse_intents("[Player 2][Deceive][Player 1][x][9]", players=PLAYERS).items
    (e,) = intents_to_evidence(ins, step=5)
    assert (e.kind, e.actor, e.subject, e.credibility) == ("intent", "Player 2", "Player 1", -0.9)


def test_prompt_book_tasks_and_rendering():
    assert {t.task for t in OPPONENT_PROMPTS} == {
        "opponents.identity",
        "opponents.intent",
        "opponents.rerank",
    }
    act = SpeechAct("claim", "Player 3", role="seer")
    req = identity_request(
        identities=ROLES, **_setting("seer", statement="(Player 3): I am the seer.", act=act)
    )
    text = "\n".join(m.content for m in req.messages)
    assert "[Player][identity][confidence][analysis]" in text
    assert "I am the seer." in text
    assert req.fields["act"]["kind"] == "claim"
    with pytest.raises(ValueError):
        SpeechAct("accuse", "Player 3")  # an accusation needs a target
    with pytest.raises(ValueError):
        SpeechAct("shout", "Player 3")


def _ask(kind, speaker, target="", role="", *, self_role="villager"):
    model = load_model("scripted")
    act = SpeechAct(kind, speaker, target, role)
    common = _setting(self_role, statement=f"({speaker}): a {kind} statement", act=act)
    ident = model.complete(identity_request(identities=ROLES, **common)).text
    inten = model.complete(intent_request(**common)).text
    return (
        parse_identity_judgments(ident, players=PLAYERS, identities=ROLES, strict=True).items,
        parse_intents(inten, players=PLAYERS, strict=True).items,
    )


def test_scripted_answers_follow_the_speech_act():
    ids, ins = _ask("accuse", "Player 3", "Player 4")
    assert [(i.actor, i.type, i.target, i.score) for i in ins] == [
        ("Player 3", "Attack", "Player 4", 8.0)
    ]
    assert [(j.player, j.identity) for j in ids] == [("Player 4", "werewolf")]
    ids, ins = _ask("defend", "Player 3", "Player 4")
    assert [(i.type, i.credibility) for i in ins] == [("Defend", 0.7)]
    assert [j.identity for j in ids] == ["unsure"]
    # A seer claim to a villager: believed; to the seer: a lie.
    ids, ins = _ask("claim", "Player 5", role="seer")
    assert [(j.player, j.identity, j.confidence) for j in ids] == [("Player 5", "seer", 7.0)]
    assert [(i.type, i.target) for i in ins] == [("Defend", "Player 5")]
    ids, ins = _ask("claim", "Player 5", role="seer", self_role="seer")
    assert [(j.player, j.identity) for j in ids] == [("Player 5", "werewolf")]
    assert [(i.type, i.target, i.credibility) for i in ins] == [("Deceive", "Player 1", -0.8)]
    # A check about me that contradicts my role is a lie; about another, an attack.
    ids, ins = _ask("share_check", "Player 6", "Player 1", "werewolf")
    assert [(j.player, j.identity) for j in ids] == [("Player 6", "werewolf")]
    assert [i.type for i in ins] == ["Deceive"]
    ids, ins = _ask("share_check", "Player 6", "Player 2", "werewolf")
    assert [(j.player, j.identity, j.confidence) for j in ids] == [("Player 2", "werewolf", 6.0)]
    assert [(i.type, i.target) for i in ins] == [("Attack", "Player 2")]
    ids, ins = _ask("reveal", "moderator", "Player 2", "witch")
    assert [(j.player, j.identity, j.confidence) for j in ids] == [("Player 2", "witch", 10.0)]
    assert ins == ()
    ids, ins = _ask("nothing", "Player 2")
    assert ids == () and ins == ()


def test_scripted_answers_depend_on_fields_not_text():
    model = load_model("scripted")
    act = SpeechAct("accuse", "Player 3", "Player 4")
    base = dict(players=PLAYERS, self_id="Player 1", self_role="villager", act=act)
    a = model.complete(intent_request(statement="I think Player 4 lies.", **base)).text
    b = model.complete(intent_request(statement="Totally unrelated words.", **base)).text
    assert a == b


def test_scripted_extraction_feeds_gratr():
    m = make_opponent_model("gratr", werewolf_context())
    _, ins = _ask("accuse", "Player 3", "Player 1")
    m = m.observe_all(intents_to_evidence(ins, step=1))
    r = m.retrieve("Player 3")
    assert r.trust_after < -0.5  # attacked me: an adversary


def test_rerank_request_and_parser():
    model = load_model("scripted")
    req = rerank_request(
        goal="Vote out a werewolf",
        focus=["Player 4"],
        speaker="Player 4",
        target="Player 2",
        step=3,
        message="Player 2 is lying",
    )
    assert parse_relevance(model.complete(req).text) == 6.0
    req = rerank_request(
        goal="Vote", focus=["Player 2"], speaker="Player 4", target="Player 2", step=3, message="x"
    )
    assert parse_relevance(model.complete(req).text) == 4.0
    with pytest.raises(ParseError):
        parse_relevance("Relevance: 12")
    with pytest.raises(ParseError):
        parse_relevance("very relevant")


def test_extract_statement_evidence_end_to_end_and_fallback():
    from gt_llm.chat import ChatModel, ChatResponse
    from gt_llm.opponents import extract_statement_evidence
    from gt_llm.parsing import ParsePolicy, ParseStats

    common = _setting(identities=ROLES, step=7)
    ev = extract_statement_evidence(
        load_model("scripted"),
        statement="(Player 6): I checked Player 2, a werewolf.",
        act=SpeechAct("share_check", "Player 6", "Player 2", "werewolf"),
        **common,
    )
    assert [(e.kind, e.subject, e.value, e.actor) for e in ev] == [
        ("identity", "Player 2", "werewolf", "Player 6"),
        ("intent", "Player 2", "Attack", "Player 6"),
    ]
    assert ev[1].credibility == pytest.approx(-0.9) and all(e.step == 7 for e in ev)
    facts = extract_statement_evidence(
        load_model("scripted"),
        statement="(Moderator): Player 2 was the witch.",
        act=SpeechAct("reveal", "moderator", "Player 2", "witch"),
        **common,
    )
    assert [(e.subject, e.value, e.certain, e.actor) for e in facts] == [
        ("Player 2", "witch", True, "")
    ]

    class Babbler(ChatModel):
        backend, model = "babbler", "v0"

        def complete(self, request):
            return ChatResponse(text="I have no idea.", backend=self.backend, model=self.model)

    stats = ParseStats()
    ev = extract_statement_evidence(
        Babbler(),
        statement="x",
        act=SpeechAct("accuse", "Player 3", "Player 4"),
        policy=ParsePolicy(max_reasks=1),
        stats=stats,
        **common,
    )
    assert ev == ()
    assert stats.to_dict()["fallbacks"] == {"opponents.identity": 1, "opponents.intent": 1}
