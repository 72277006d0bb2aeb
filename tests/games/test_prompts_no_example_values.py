"""No prompt shows a copyable value.

Every task of every prompt book (:func:`gt_llm.prompts.prompt_books`: each
game's book and the opponent models' book, found without naming them) is
rendered from the fields of real requests -- the requests every registered
game's conformance instances send, plus a scripted Werewolf arena game whose
seats use the LLM opponent models, and scripted fruit dialogues with beliefs --
in both answer modes, and the text must show no example value that is also a
legal answer of the task (:func:`gt_llm.prompt_examples.legal_examples`: an
example word, a sample JSON object or a quoted ``Label: N``, holding an enum
value, a number in range, or anything for a free-text answer). A task no
request reached fails the test, so a new task cannot go unchecked.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel
import pytest

import games  # noqa: F401  (registers every game, its prompt book and stand-in answers)
import gt_llm.opponents  # noqa: F401  (the opponent models' prompt book)
from games.engine.calls import run_sync
from games.engine.quality import copied_shares
from games.engine.registry import registered_game_specs
from games.fruit_trading import dialogue
from games.fruit_trading import prompts as fruit_prompts
from games.werewolf import rules
from games.werewolf.arena.matches import play_arena_game
from games.werewolf.players import prompts as ww_prompts
from gt_llm.backends.scripted import ScriptedModel
from gt_llm.cache_store import cached_requests
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Message
from gt_llm.parsing import ParseStats, complete_parsed
from gt_llm.prompt_examples import legal_examples
from gt_llm.prompts import PromptTemplate, prompt_books, template_for
from gt_llm.recording import RecordingModel

#: Requests checked per task (the first ones seen).
PER_TASK = 12


def _engine_requests(tmp_path) -> list[tuple[str, dict[str, Any]]]:
    """The requests of random plays of every registered game's conformance instances."""
    out = []
    for spec in registered_game_specs():
        for k, game_string in enumerate(spec.conformance.game_strings):
            params = pyspiel.load_game(game_string).get_parameters()
            if "cache" not in params:
                continue  # pure rules: no model
            path = str(tmp_path / f"{spec.name}_{k}.sqlite")
            game = pyspiel.load_game(
                pyspiel.load_game(game_string).get_type().short_name, {**params, "cache": path}
            )
            for seed in range(spec.conformance.num_sims):
                rng = np.random.default_rng(seed)
                state = game.new_initial_state()
                while not state.is_terminal():
                    if state.is_chance_node():
                        outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                        state.apply_action(int(rng.choice(outcomes, p=probs)))
                    else:
                        state.apply_action(int(rng.choice(state.legal_actions())))
            out += [(str(r["task"]), dict(r["fields"])) for r in cached_requests(path)]
    return out


def _played_requests() -> list[tuple[str, dict[str, Any]]]:
    """Scripted fruit dialogues with beliefs and Werewolf arena games with LLM opponent models."""
    rec = RecordingModel(ScriptedModel())
    for init in range(4):
        cfg = dialogue.Config(max_messages=4, beliefs=True, opponent_model="gratr")
        state = dialogue.initial_state(cfg.scenario(init), cfg)
        for k, tone in enumerate(("calm", "submissive", "assertive", "calm")):
            if state.is_terminal():
                break
            state = run_sync(dialogue.step(state, tone, k % 2), rec)
    for wolf, leader in (("gratr", "dirichlet"), ("rerank-rag", "native-rag")):
        play_arena_game(rules.preset("gratr"), rec, wolf_model=wolf, leader_model=leader, seed=0)
    return [(r.task, r.fields_dict()) for r in rec.requests]


@pytest.fixture(scope="module")
def requests_by_task(tmp_path_factory) -> dict[str, list[dict[str, Any]]]:
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for task, fields in _engine_requests(tmp_path_factory.mktemp("calls")) + _played_requests():
        if len(by_task[task]) < PER_TASK:
            by_task[task].append(fields)
    return by_task


def _examples(template: PromptTemplate, fields: Mapping[str, Any]) -> list[str]:
    """The legal example values of ``template`` rendered from ``fields``, in both answer modes."""
    schema = template.answer_format(fields).schema() if template.answer is not None else None
    bad = []
    for structured in (True, False):
        request = template.render(fields, structured=structured)
        bad += legal_examples("\n".join(m.content for m in request.messages), schema)
    return bad


def test_every_task_of_every_prompt_book_is_rendered(requests_by_task):
    tasks = {t.task for book in prompt_books() for t in book}
    assert {"werewolf.vote", "fruit_trading.opening", "ultimatum.offer"} <= tasks  # found
    missing = sorted(tasks - set(requests_by_task))
    assert not missing, f"no request reached {missing}: extend the plays of this test"


def test_no_rendered_prompt_shows_a_legal_answer_as_an_example(requests_by_task):
    found = {}
    for task, field_sets in sorted(requests_by_task.items()):
        template = template_for(task)
        for fields in field_sets:
            if bad := _examples(template, fields):
                found[task] = bad
                break
    assert not found, f"prompts show legal answers as examples: {found}"


@pytest.mark.parametrize(
    ("template", "old", "new"),
    [
        # The texts a small model copied: Werewolf's "e.g. 3" and fruit trading's example trade.
        (ww_prompts.VOTE, "one of the valid votes above", "e.g. 3"),
        (ww_prompts.NIGHT_KILL, "one of the valid ones above", "e.g. 3"),
        (
            fruit_prompts.OPENING,
            "proposing a trade:",
            "proposing a trade (for example: I would like to trade you 1 banana for 2 apples):",
        ),
    ],
    ids=["vote", "night_kill", "opening"],
)
def test_the_check_fails_when_an_example_is_put_back(requests_by_task, template, old, new):
    assert old in template.user
    fields = next(
        f
        for f in requests_by_task[template.task]
        if template.task != "werewolf.vote" or 2 in f["options"]  # player 3 is a legal vote
    )
    assert not _examples(template, fields)
    assert _examples(dataclasses.replace(template, user=template.user.replace(old, new)), fields)


def test_an_answer_repeating_the_prompts_example_is_counted_as_copied():
    class Echo(ChatModel):
        backend, model = "echo", "e"

        def complete(self, request: ChatRequest) -> ChatResponse:
            return ChatResponse('{"target": 3}', self.backend, self.model)

    stats = ParseStats()
    for prompt in ("Choose a player (e.g. 3).", "Choose a player by number."):
        req = ChatRequest("t", {}, (Message("user", prompt),))
        complete_parsed(Echo(), req, lambda text: text, fallback=lambda r: "", stats=stats)
    d = stats.to_dict()
    assert d["parsed"] == {"t": 2} and d["copied"] == {"t": 1}
    assert {t: c["share"] for t, c in copied_shares(d).items()} == {"t": 0.5}
