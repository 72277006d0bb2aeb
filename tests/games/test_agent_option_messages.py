"""Refusals of agent and backend options say what is wrong and how to fix it, in one line.

* ``--seat-backends "scripted,,..."`` said ``needs 8 ... got 8`` (and
  ``--player-backends scripted,`` ``needs two ... got 2``): an empty entry is now
  named (its position, and its seat);
* ``--team-backends werewolves=A,werewolves=B,...`` was accepted, the last
  silently winning: a team named twice is refused;
* a bad agent name suggested ``NAME=a/b=none``: the suggestion is now a name that
  works (``a-b=none``);
* a call that failed (its retry budget spent) named the server's URL but not the
  agent it was made for: a routed model's errors name the agent(s) whose requests
  failed.
"""

from __future__ import annotations

import argparse

import pytest

from games.werewolf.agents import parse_agents
from games.werewolf.cli import add_parser
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, user_request
from gt_llm.errors import BackendError
from gt_llm.registry import load_model
from gt_llm.retry import CallCancelled
from gt_llm.routing import RoutedModel


def _play(argv: list[str]) -> None:
    """``gt-llm werewolf play ARGV``'s option checks (raising ValueError), without a game."""
    from games.werewolf.cli import seat_specs, team_specs

    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers())
    args = p.parse_args(["werewolf", "play", *argv])
    if args.seat_backends is not None:
        seat_specs(args, 8)
    if args.team_backends is not None:
        team_specs(args)


def test_an_empty_seat_backend_entry_is_named() -> None:
    specs = ",".join(["scripted", "", *["scripted"] * 6])
    with pytest.raises(ValueError) as err:
        _play(["--seat-backends", specs])
    message = str(err.value)
    assert "--seat-backends entry 2 of 8 (seat 1) is empty" in message
    assert "got 8" not in message and "\n" not in message


def test_an_empty_player_backend_entry_is_named() -> None:
    from games.fruit_trading.cli import player_specs

    with pytest.raises(ValueError) as err:
        player_specs(argparse.Namespace(player_backends="scripted,"))
    assert "--player-backends entry 2 of 2 is empty" in str(err.value)
    assert player_specs(argparse.Namespace(player_backends="scripted,scripted")) == (
        "scripted",
        "scripted",
    )


def test_a_team_named_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="--team-backends names werewolves twice") as err:
        _play(
            [
                "--team-backends",
                "werewolves=scripted,werewolves=scripted:rules-v2/b,villagers=scripted",
            ]
        )
    assert "werewolves=SPEC,villagers=SPEC" in str(err.value)
    # Each team once is accepted.
    _play(["--team-backends", "werewolves=scripted:rules-v2/b,villagers=scripted"])


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [("a/b=none,rules", "e.g. a-b=none"), ("my agent=gratr,rules", "e.g. my-agent=gratr")],
)
def test_a_bad_agent_name_suggests_a_name_that_works(text: str, suggestion: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_agents(text)
    message = str(err.value)
    assert suggestion in message and "NAME=a/b" not in message, message
    suggested = message.rpartition("e.g. ")[2]
    assert parse_agents(f"{suggested},rules")[0].name == suggested.partition("=")[0]


class _Failing(ChatModel):
    """A backend whose every call fails as a spent retry budget does."""

    backend = "openai"
    model = "mX"

    def __init__(self, error: BackendError | None = None) -> None:
        self.error = error

    def complete(self, request: ChatRequest) -> ChatResponse:
        raise self.error or BackendError(
            "openai backend (http://127.0.0.1:9/v1/chat/completions): failed after 3 "
            "attempt(s) within the retry budget of 1 s",
            retryable=True,
        )


def _by_player(request: ChatRequest) -> str:
    return str(request.fields["prompt"]).partition(":")[0]


def test_a_failed_call_names_the_agent_it_was_made_for() -> None:
    ok, failing = load_model("scripted"), _Failing()
    routed = RoutedModel({"a": ok, "b": failing}, _by_player)
    with pytest.raises(BackendError) as err:
        routed.complete(user_request("b: hello"))
    assert str(err.value).startswith("requests of 'b': openai backend (http://127.0.0.1:9/")
    assert err.value.retryable
    # In a batch: the agent whose model failed, not the one whose calls succeeded.
    with pytest.raises(BackendError) as err:
        routed.complete_batch([user_request("a: hi"), user_request("b: hi")])
    assert str(err.value).startswith("requests of 'b': ")
    # Two agents on one backend: both named (either may have made the failed call).
    shared = RoutedModel({"a": failing, "b": failing}, _by_player)
    with pytest.raises(BackendError, match=r"^requests of 'a', 'b': openai backend"):
        shared.complete_batch([user_request("a: hi"), user_request("b: hi")])


def test_routes_keyed_by_spec_and_interruptions_are_not_renamed() -> None:
    spec_keyed = RoutedModel({"openai:mX@http://h/v1": _Failing()}, lambda r: "openai:mX@http://h/v1",
                             name_keys=False)  # fmt: skip
    with pytest.raises(BackendError, match=r"^openai backend"):
        spec_keyed.complete(user_request("hi"))
    cancelled = RoutedModel({"a": _Failing(CallCancelled())}, lambda r: "a")
    with pytest.raises(CallCancelled, match=r"^call cancelled"):
        cancelled.complete(user_request("hi"))
