"""The call cache keys a remote model by its server too: one model name on two servers is two models.

The key holds backend, model name and the endpoint (the public label of the
server's base URL: no user, password or query value), so two servers that
answer differently under one model name never share a cached answer. In-process
backends (``scripted``, ``local``) have no endpoint and keep the keys they always
had (pinned here), so reference numbers do not move. A cache filled before the
endpoint was part of the key is read without error: its remote answers are not
found and are asked again.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fake_server import completion_body

from gt_llm.cache import CachedModel, CacheOnlyModel
from gt_llm.chat import ChatModel, ChatRequest, ChatResponse, Message, user_request
from gt_llm.recording import RecordingModel
from gt_llm.registry import load_model, model_endpoint
from gt_llm.safety import endpoint_label, public_spec, register_secret

PASSWORD = "EndpointPass7741"
QUERY_KEY = "EndpointQueryKey5520"


class TaggedServer:
    """A loopback chat-completions server whose every answer is ``answer from TAG``.

    Any path ending in ``/chat/completions`` (a query string and all) is answered.
    """

    def __init__(self, tag: str) -> None:
        counter = self.requests = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                counter.append(self.path)
                data = json.dumps(completion_body(f"answer from {tag}")).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def request_count(self) -> int:
        return len(self.requests)

    def __enter__(self) -> TaggedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _file_bytes(cache: Path) -> bytes:
    """The cache file and its WAL/SHM companions, as bytes."""
    return b"".join(p.read_bytes() for p in cache.parent.glob(cache.name + "*"))


def test_endpoint_label_keeps_the_server_and_drops_every_credential() -> None:
    url = f"HTTP://alice:{PASSWORD}@Host.Example:8000/v1/?key={QUERY_KEY}&mode=x#frag"
    assert endpoint_label(url) == "http://host.example:8000/v1?key=[REDACTED]&mode=[REDACTED]"
    # A malformed port still loses its user info; a key-shaped path segment is removed.
    assert "alice" not in endpoint_label(f"http://alice:{PASSWORD}@h:xx/v1")
    assert "sk-" not in endpoint_label("http://h/v1/sk-abcdefghijklmnop")


def test_endpoint_label_does_not_depend_on_the_secrets_registered_so_far() -> None:
    url = "http://127.0.0.1:8000/endpointpathsegment/v1"
    before = endpoint_label(url)
    register_secret("endpointpathsegment")  # e.g. a password equal to a path segment
    assert "endpointpathsegment" not in public_spec(url)
    assert endpoint_label(url) == before == url


def test_in_process_backends_keep_their_keys() -> None:
    """The keys of scripted (and local) requests are those of before the endpoint was added."""
    request = ChatRequest(
        task="free_form",
        fields={"prompt": "hi"},
        messages=(Message("user", "hi"),),
        seed=3,
        temperature=0.5,
        max_tokens=64,
    )
    # Computed with the key function of before the endpoint (commit 046766a).
    assert (
        request.cache_key("scripted", "rules-v2")
        == "dfd470555197a2b5f32d9a512aedd8c90dd59b0c6c7b240896d5f5f918173f8a"
    )
    assert (
        request.cache_key("local", "qwen2.5-0.5b-instruct-q4_k_m.gguf")
        == "447b03951d98cda101009d8dc22689520b8e8cae558a58e7016acbf019646600"
    )
    scripted = load_model("scripted")
    assert scripted.endpoint == "" and model_endpoint("scripted") == ""
    assert scripted.cache_key(request) == request.cache_key("scripted", scripted.model)
    from gt_llm.backends.local import LocalModel

    assert LocalModel.endpoint == "" and model_endpoint("local") == ""
    # A remote model's key differs from the same model name's without a server.
    assert request.cache_key("openai", "mX", "http://h/v1") != request.cache_key("openai", "mX")


def test_two_servers_under_one_model_name_are_cached_apart(tmp_path: Path) -> None:
    cache = tmp_path / "calls.sqlite"
    with TaggedServer("ONE") as one, TaggedServer("TWO") as two:
        a = load_model(
            f"openai:mX@http://alice:{PASSWORD}@127.0.0.1:{one.port}/v1?key={QUERY_KEY}",
            cache=cache,
        )
        b = load_model(f"openai:mX@{two.url}/v1", cache=cache)
        request = user_request("the same question to both")
        assert a.complete(request).text == "answer from ONE"
        second = b.complete(request)
        assert (second.text, second.cached) == ("answer from TWO", False)
        assert (one.request_count, two.request_count) == (1, 1)
        # Asked again: each from its own entry, no call.
        again_a, again_b = a.complete(request), b.complete(request)
        assert (again_a.text, again_a.cached) == ("answer from ONE", True)
        assert (again_b.text, again_b.cached) == ("answer from TWO", True)
        assert (one.request_count, two.request_count) == (1, 1)
        assert isinstance(a, CachedModel)
        endpoints = sorted(json.loads(e["request_json"])["endpoint"] for e in a.entries())
        a.close()
        b.close()
    assert endpoints == sorted(
        [f"http://127.0.0.1:{one.port}/v1?key=[REDACTED]", f"http://127.0.0.1:{two.port}/v1"]
    )
    stored = _file_bytes(cache)
    for secret in (PASSWORD, QUERY_KEY, "alice"):
        assert secret.encode() not in stored


class _OldKeyModel(ChatModel):
    """An ``openai:mX`` model as the cache saw it before endpoints: no endpoint."""

    backend = "openai"
    model = "mX"

    def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(
            text="an answer cached without its server", backend="openai", model="mX"
        )


def test_a_cache_filled_before_endpoints_were_keyed_is_reasked_without_error(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "old.sqlite"
    request = user_request("asked before the endpoint was keyed")
    with CachedModel(_OldKeyModel(), cache) as old:
        old.complete(request)
        assert request in old
    with TaggedServer("NEW") as server:
        model = load_model(f"openai:mX@{server.url}/v1", cache=cache)
        first = model.complete(request)
        assert (first.text, first.cached, server.request_count) == ("answer from NEW", False, 1)
        assert model.complete(request).cached and server.request_count == 1
        assert len(model) == 2  # the old entry is kept, unread
        model.close()


def test_a_cache_only_model_finds_what_the_real_model_stored(tmp_path: Path) -> None:
    """A finished run re-read without its key (``CacheOnlyModel``) keys by the same endpoint."""
    cache = tmp_path / "calls.sqlite"
    request = user_request("stored, then read back")
    with TaggedServer("ONE") as server:
        spec = f"openai:mX@http://alice:{PASSWORD}@127.0.0.1:{server.port}/v1/"
        with load_model(spec, cache=cache) as real:  # type: ignore[attr-defined]
            real.complete(request)
            assert real.endpoint == model_endpoint(spec)
    reader = CacheOnlyModel("openai", "mX", "no key here", endpoint=model_endpoint(spec))
    with CachedModel(reader, cache) as cached:
        assert cached.complete(request).text == "answer from ONE"


def test_the_spec_endpoint_is_the_loaded_models(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = f"openai:mX@http://alice:{PASSWORD}@Host.Example:8000/v1/?key={QUERY_KEY}"
    model = load_model(spec)
    assert model.endpoint == model_endpoint(spec) == "http://host.example:8000/v1?key=[REDACTED]"
    assert RecordingModel(model).endpoint == model.endpoint
    model.close()
    monkeypatch.setenv("GROQ_BASE_URL", "http://127.0.0.1:9/")
    groq = load_model("groq:m", api_key="gsk_endpointtestkey0123")
    assert groq.endpoint == model_endpoint("groq:m") == "http://127.0.0.1:9"
    groq.close()
    monkeypatch.delenv("GROQ_BASE_URL")
    assert model_endpoint("groq") == "https://api.groq.com"
