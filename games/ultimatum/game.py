"""The ultimatum game with an LLM-written offer (``python_ultimatum``).

Two players split ``pie`` coins. The proposer picks a tone, a chance node
picks the LLM seed, and the model writes the offer in that tone; the
responder reads the message (never the tone) and accepts (payoffs: pie minus
the offer, the offer) or rejects (0, 0).

The seed node's outcome ``k`` asks the model with seed ``first_seed + k``; with
``structured`` (the default) the request carries the answer's JSON schema
(``{"message": ..., "offer": ...}``), otherwise the message ends with
``Offer: N``.
"""

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import pyspiel

from games.engine.calls import Call, Step
from games.engine.protocol import Outcomes
from games.engine.spiel import EngineGame, engine_game_info, engine_game_type, shared_model
from gt_llm.answers import AnswerFormat, integer, text
from gt_llm.backends.scripted import register_scripted_task
from gt_llm.chat import ChatRequest
from gt_llm.errors import ParseError
from gt_llm.parsing import parse_number
from gt_llm.prompts import PromptBook, PromptTemplate

SHORT_NAME = "python_ultimatum"
TONES = ("assertive", "calm", "submissive")
ACCEPT, REJECT = 0, 1
ROLES = ("proposer", "responder")
PARAMS: dict[str, Any] = {
    "pie": 10,
    "num_seeds": 2,
    "first_seed": 0,
    "structured": True,
    "backend": "scripted",
    "cache": "",
}


def offer_answer(fields: Mapping[str, Any]) -> AnswerFormat:
    """The structured offer: the message and the coins given, a whole number from 0 to the pie."""
    return AnswerFormat((text("message", 200), integer("offer", range(int(fields["pie"]) + 1))))


OFFER = PromptTemplate(
    task="ultimatum.offer",
    system="You propose how to split {pie} coins between you and another player, who "
    "will accept the split or reject it (then nobody gets anything).",
    # The format is described, never shown: a small model copies a shown "Offer: N" verbatim.
    user="Use a {tone} tone. Write one short message to the other player that says how many "
    "of the coins you give them, and end it with the word Offer, a colon and that number.",
    max_tokens=128,
    answer=offer_answer,
    answer_line='Answer with a JSON object with the keys "message" (your message) and '
    '"offer" (the number of coins you give them, a whole number, at most all {pie}).',
)
PROMPTS = PromptBook([OFFER])


def _stand_in_offer(fields: Mapping[str, Any], rng: Any) -> str:
    # A share shrinking with a firmer tone, plus noise.
    share, line = {
        "assertive": (0.2, "Take it or leave it."),
        "calm": (0.4, "I think this split is fair."),
        "submissive": (0.5, "I hope this works for you."),
    }[fields["tone"]]
    return f"{line} Offer: {int(round(share * fields['pie'])) + int(rng.integers(2))}"


def _stand_in_json(answer: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    # The same offer as the free-text answer, so results do not depend on --structured.
    return {"message": answer, "offer": int(parse_number(answer, label="Offer"))}


register_scripted_task(
    "ultimatum.offer", _stand_in_offer, reads=("tone", "pie"), as_json=_stand_in_json
)


@dataclasses.dataclass(frozen=True)
class Deal:
    """The state (immutable): the tone, the message and its offer, the answer."""

    pie: int
    tone: int | None = None
    message: str = ""
    offer: int = 0
    answer: int | None = None


@dataclasses.dataclass(frozen=True)
class Ultimatum:
    """The game logic (a :class:`games.engine.GameLogic`)."""

    pie: int
    num_seeds: int
    first_seed: int = 0
    structured: bool = True
    num_players: int = 2

    def is_terminal(self, s: Deal) -> bool:
        return s.answer is not None

    def current_player(self, s: Deal) -> int:
        return 0 if s.tone is None else 1

    def legal_actions(self, s: Deal) -> list[int]:
        return list(range(len(TONES))) if s.tone is None else [ACCEPT, REJECT]

    def chance_outcomes(self, s: Deal) -> Outcomes:
        return []  # no chance state: the only chance node is the LLM seed below

    def seed_outcomes(self, s: Deal, action: int) -> Outcomes:
        return [(k, 1 / self.num_seeds) for k in range(self.num_seeds)] if s.tone is None else []

    def step(self, s: Deal, action: int, outcome: int | None) -> Step[Deal] | Deal:
        if s.tone is not None:
            return dataclasses.replace(s, answer=action)  # no call: a plain state
        return self._offer(s, action, outcome or 0)

    def _offer(self, s: Deal, tone: int, outcome: int) -> Step[Deal]:
        request = PROMPTS.render(
            "ultimatum.offer",
            {"pie": s.pie, "tone": TONES[tone]},
            seed=self.first_seed + outcome,
            structured=self.structured,
        )
        message, offer = yield Call(request, self._parser(request), lambda r: ("", s.pie // 2))
        return dataclasses.replace(s, tone=tone, message=message, offer=offer)

    def _parser(self, request: ChatRequest) -> Callable[[str], tuple[str, int]]:
        if request.schema is not None:  # the schema's validator checks the range
            fmt = OFFER.answer_format(request.fields)
            return lambda answer: _message_and_offer(fmt.read(answer))
        return self._parse_text

    def _parse_text(self, answer: str) -> tuple[str, int]:
        if (offer := parse_number(answer, label="Offer")) not in range(self.pie + 1):
            raise ParseError(f"a whole number of coins from 0 to {self.pie}", answer)
        return answer, int(offer)

    def information_state(self, s: Deal, player: int) -> str:
        # The seat first: the proposer's root and a responder who read an empty (fallback)
        # message would otherwise share one string.
        mine = f"tone={TONES[s.tone]}\n" if player == 0 and s.tone is not None else ""
        return f"{ROLES[player]}\npie={s.pie}\n{mine}message={s.message!r}"

    def returns(self, s: Deal) -> tuple[float, float]:
        return (float(s.pie - s.offer), float(s.offer)) if s.answer == ACCEPT else (0.0, 0.0)

    def action_to_string(self, s: Deal, action: int) -> str:
        return TONES[action] if s.tone is None else ("accept", "reject")[action]


def _message_and_offer(obj: Mapping[str, Any]) -> tuple[str, int]:
    return str(obj["message"]), int(obj["offer"])


GAME_TYPE = engine_game_type(SHORT_NAME, "Python ultimatum", num_players=2, parameters=PARAMS)


class UltimatumGame(EngineGame[Deal]):
    """``python_ultimatum(pie=10,num_seeds=2,first_seed=0,structured=True,backend=scripted,cache=)``."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**PARAMS, **(params or {})}
        pie, seeds, first = int(p["pie"]), int(p["num_seeds"]), int(p["first_seed"])
        if pie < 1 or seeds < 1 or first < 0:
            raise ValueError(
                f"{SHORT_NAME}: pie and num_seeds must be >= 1 and first_seed >= 0, got "
                f"{pie}, {seeds}, {first}"
            )
        model = shared_model(str(p["backend"]), str(p["cache"]))
        logic = Ultimatum(pie, seeds, first, bool(p["structured"]))
        self.setup_logic(logic, model, [lambda: Deal(pie)])
        info = engine_game_info(
            num_actions=3, max_chance_outcomes=seeds, num_players=2, utility_bounds=(0, pie),
            max_game_length=3,  # the tone, the seed, the answer
        )  # fmt: skip
        super().__init__(GAME_TYPE, info, p)


pyspiel.register_game(GAME_TYPE, UltimatumGame)
