"""One chat model per seat: requests routed to the model of the player who makes them.

A game where different seats are played by different backends (a tournament of
agents, a fruit trade between two models) still runs its steps through one
:class:`~gt_llm.chat.ChatModel`: :class:`RoutedModel` sends each request to the
model its ``route`` names. The route is the game's own, explicit rule (which
field of which task names the acting player); a request it cannot place is an
error, never a silent default. Each inner model keeps its own identity, so its
answers are cached under its own backend, model name and endpoint, apart from the
others'.

A batch is split by model; each part goes out as that model's own batch, and the
answers come back in the order of the requests. The inner models belong to the
caller unless ``owns`` (then ``close`` closes them).

A call that fails (a backend error: the retry budget spent, a server refusing)
names the route key it was sent for (``requests of 'b': openai backend
(http://...): ...``), since one backend may serve several keys (two agents on
one server) and its own message names only the server. Routes whose keys are
the backend specs themselves pass ``name_keys=False``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence

from gt_llm.chat import ChatModel, ChatRequest, ChatResponse
from gt_llm.errors import BackendError, ConfigurationError
from gt_llm.retry import CallCancelled
from gt_llm.safety import public_spec

__all__ = ["Route", "RoutedModel", "UnroutedRequest"]

#: ``route(request) -> key`` of the model that answers it (a key of ``models``).
Route = Callable[[ChatRequest], str]


class UnroutedRequest(ValueError):
    """A request the route cannot place (a task the game's route does not know)."""


class RoutedModel(ChatModel):
    """Answers each request with the model its route names.

    Args:
      models: The models by key (e.g. a backend spec or an agent's name).
      route: Picks the key of the model that answers a request; raises
        :class:`UnroutedRequest` for a request it cannot place.
      label: The display name of the mixture (default: the inner specs joined).
      owns: Whether :meth:`close` closes the inner models (default: they are the caller's).
      name_keys: Whether a failed call's error names the key(s) it was routed for
        (default; e.g. agent names). Off for routes keyed by backend spec, whose
        errors name the backend already.
    """

    def __init__(
        self,
        models: Mapping[str, ChatModel],
        route: Route,
        *,
        label: str = "",
        owns: bool = False,
        name_keys: bool = True,
    ) -> None:
        if not models:
            raise ValueError("RoutedModel: give at least one model")
        self.models = dict(models)
        self.route = route
        self.owns = owns
        self.name_keys = name_keys
        specs = sorted({m.spec for m in self.models.values()})
        self.backend = "routed"
        self.model = label or "+".join(specs)
        self.max_concurrency = max(m.max_concurrency for m in self.models.values())
        self.remote = any(m.remote for m in self.models.values())
        self.unhonoured_settings = tuple(
            sorted({s for m in self.models.values() for s in m.unhonoured_settings})
        )

    @property
    def spec(self) -> str:
        return f"routed:{self.model}"

    def model_for(self, request: ChatRequest) -> ChatModel:
        """The model that answers ``request``."""
        return self.models[self._key_for(request)]

    def _key_for(self, request: ChatRequest) -> str:
        key = self.route(request)
        if key not in self.models:
            raise UnroutedRequest(
                f"RoutedModel: task {request.task!r} routed to {key!r}, which is none of "
                f"{sorted(self.models)}; give a model for every key the route returns"
            )
        return key

    def cache_key(self, request: ChatRequest) -> str:
        """``request``'s cache key under the model that answers it."""
        return self.model_for(request).cache_key(request)

    def _named(self, keys: Sequence[str], exc: BaseException) -> BaseException:
        """``exc`` with the route keys it failed for in front of its message (a copy)."""
        if (
            not self.name_keys
            or not isinstance(exc, (BackendError, ConfigurationError))
            or isinstance(exc, CallCancelled)
            or len(exc.args) != 1
            or not isinstance(exc.args[0], str)
        ):
            return exc
        shown = ", ".join(repr(public_spec(k)) for k in dict.fromkeys(keys))
        try:
            named = copy.copy(exc)
        except Exception:  # an error class that cannot be copied: left as it was
            return exc
        named.args = (f"requests of {shown}: {exc.args[0]}",)
        return named

    def complete(self, request: ChatRequest) -> ChatResponse:
        key = self._key_for(request)
        try:
            return self.models[key].complete(request)
        except (BackendError, ConfigurationError) as exc:
            named = self._named([key], exc)
            if named is exc:
                raise
            raise named.with_traceback(exc.__traceback__) from None

    def complete_batch(
        self,
        requests: Sequence[ChatRequest],
        *,
        max_concurrency: int | None = None,
        on_done: Callable[[ChatResponse], None] | None = None,
    ) -> list[ChatResponse]:
        requests = list(requests)
        # Every request is placed before the first call: an unroutable one fails the batch.
        groups: dict[int, tuple[ChatModel, list[int]]] = {}
        keys = [self._key_for(r) for r in requests]
        for i, key in enumerate(keys):
            m = self.models[key]
            groups.setdefault(id(m), (m, []))[1].append(i)
        out: list[ChatResponse | None] = [None] * len(requests)
        for model, idx in groups.values():
            try:
                answers = model.complete_batch(
                    [requests[i] for i in idx], max_concurrency=max_concurrency, on_done=on_done
                )
            except (BackendError, ConfigurationError) as exc:
                # The batch of one model: its keys (several when they share the backend).
                named = self._named([keys[i] for i in idx], exc)
                if named is exc:
                    raise
                raise named.with_traceback(exc.__traceback__) from None
            for i, a in zip(idx, answers, strict=True):
                out[i] = a
        return [a for a in out if a is not None]

    def close(self) -> None:
        if self.owns:
            for m in self.inner_models():
                m.close()

    def inner_models(self) -> list[ChatModel]:
        """The distinct inner models, in key order."""
        seen: dict[int, ChatModel] = {}
        for k in sorted(self.models):
            seen.setdefault(id(self.models[k]), self.models[k])
        return list(seen.values())
