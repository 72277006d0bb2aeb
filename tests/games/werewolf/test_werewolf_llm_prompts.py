"""Every Werewolf prompt renders with its options and required JSON keys listed."""

from __future__ import annotations

import pytest

from games.werewolf.players import llm as players
from games.werewolf.players import prompts
from games.werewolf.players.view import PlayerView, PublicStatement
from games.werewolf.rules import SPEECH_ACTS, TONES, SpeechAct

ALL = tuple(range(8))


def wolf_view(**kw) -> PlayerView:
    base = dict(
        player=0,
        role="werewolf",
        num_players=8,
        alive=ALL,
        round=2,
        partners=(3,),
        check_results=("werewolf", "not_werewolf"),
        scratchpad="Player 6 looks nervous.",
        beliefs={5: {"werewolf": 0.6, "villager": 0.4}},
        suspicion={5: 0.78},
    )
    base.update(kw)
    return PlayerView(**base)


def first_call(step):
    return step.send(None)


def user_text(call) -> str:
    return "\n".join(m.content for m in call.request.messages)


STATEMENT = PublicStatement(0, 2, 5, SpeechAct("accuse", "calm", target=6), "Player 7 is a wolf.")


def requests():
    v = wolf_view()
    seer = wolf_view(player=2, role="seer", partners=(), checks={4: "not_werewolf"})
    witch = wolf_view(player=1, role="witch", partners=())
    doctor = wolf_view(player=6, role="doctor", partners=())
    speaker = wolf_view(player=5, role="villager", partners=(), statements=(STATEMENT,))
    # One batch: the speaker's self-analysis, then each observer's peer analysis.
    analysis = first_call(players.analyse_statement({5: speaker, 0: v}, STATEMENT, seed=1))
    return {
        "werewolf.night_kill": (
            first_call(players.night_kill(v, [1, 2, 4], partner_votes={3: 4}, seed=1)),
            ('"target"',),
            ["Player 2", "Player 3", "Player 5"],
        ),
        "werewolf.night_protect": (
            first_call(players.night_protect(doctor, [0, 1, 2], seed=1)),
            ('"target"',),
            ["Player 1", "Player 2", "Player 3"],
        ),
        "werewolf.night_check": (
            first_call(players.night_check(seer, [0, 1], seed=1)),
            ('"target"',),
            ["Player 1", "Player 2", "werewolf or not"],
        ),
        "werewolf.night_witch": (
            first_call(
                players.night_witch(witch, [0, 2], victim=4, can_save=True, can_poison=True, seed=1)
            ),
            ('"save"', '"poison"'),
            ["Player 5", "Player 1", "Player 3"],  # the choices in the request's order
        ),
        "werewolf.bid": (first_call(players.bid(v, seed=1)), ('"bid"',), ["0", "10"]),
        "werewolf.speech_act": (
            first_call(
                players.speak(
                    v,
                    acts=SPEECH_ACTS,
                    tones=TONES[:3],
                    targets=[1, 2],
                    roles=["villager", "seer"],
                    seed=1,
                )
            ),
            ('"act"', '"tone"', '"target"', '"role"', '"result"'),
            [*SPEECH_ACTS, *TONES[:3], "Player 2", "Player 3", "villager, seer", "not_werewolf"],
        ),
        "werewolf.vote": (
            first_call(players.vote(v, [1, 2], seed=1)),
            ('"vote"',),
            ["Player 2", "Player 3"],
        ),
        "werewolf.scratchpad": (
            first_call(players.update_scratchpad(v, "day 2", seed=1)),
            ('"scratchpad"',),
            ["day 2"],
        ),
        "werewolf.self_analysis": (
            analysis[0],
            ('"deceptive"', '"type"', '"confidence"'),
            list(prompts.DECEPTION_TYPES) + ["accuse Player 7"],
        ),
        "werewolf.peer_analysis": (
            analysis[1],
            ('"label"', '"confidence"', '"suspicion"', '"reasoning"'),
            ["Player 6 just said", "deceptive", "truthful"],
        ),
    }


def test_every_task_is_covered():
    covered = set(requests()) | {"werewolf.statement"}
    assert covered == {t.task for t in prompts.BOOK}


@pytest.mark.parametrize("task", sorted(requests()))
def test_prompt_lists_options_and_keys(task):
    call, keys, options = requests()[task]
    assert call.request.task == task
    text = user_text(call)
    for k in keys:
        assert k in text, (task, k)
    for o in options:
        assert o in text, (task, o)
    # The context: the player's own notes and beliefs are in its prompt.
    if call.request.fields["player"] == 0:
        assert "Player 6 looks nervous." in text
        assert "Player 6: werewolf 0.60, villager 0.40." in text
        assert "Player 6 0.78" in text  # own deception score


def test_werewolves_are_told_their_partners_and_others_are_not():
    wolf = user_text(first_call(players.bid(wolf_view(), seed=0)))
    assert "Your fellow werewolves: Player 4." in wolf
    seer = user_text(first_call(players.bid(wolf_view(role="seer", partners=()), seed=0)))
    assert "fellow werewolves" not in seer


def test_scratchpad_is_private():
    v = wolf_view()
    other = wolf_view(player=1, role="villager", partners=(), scratchpad="")
    assert "Player 6 looks nervous." not in user_text(first_call(players.bid(other, seed=0)))
    assert "Player 6 looks nervous." in user_text(first_call(players.bid(v, seed=0)))


def test_statement_prompt_carries_act_and_tone():
    v = wolf_view()
    step = players.speak(v, acts=SPEECH_ACTS, tones=["assertive"], targets=[1], roles=[], seed=3)
    step.send(None)
    call = step.send(SpeechAct("accuse", "assertive", target=1))
    text = user_text(call)
    assert call.request.task == "werewolf.statement"
    assert "accuse Player 2 of being a werewolf" in text
    assert "Tone: use an assertive tone." in text
    assert '"statement"' in text


def test_render_rejects_missing_fields():
    with pytest.raises(ValueError, match="missing fields"):
        prompts.VOTE.render({"options": [1]})


def test_history_lists_statements_votes_and_announcements():
    v = wolf_view(
        statements=(STATEMENT,),
        votes=((1, 2, 5), (1, 3, None)),
        announcements=((1, "Nobody died last night."),),
    )
    text = user_text(first_call(players.bid(v, seed=0)))
    assert "Player 6 said: Player 7 is a wolf." in text
    assert "Player 3 -> Player 6; Player 4 -> nobody" in text
    assert "Nobody died last night." in text
