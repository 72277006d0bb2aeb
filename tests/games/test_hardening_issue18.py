"""Issue 18, the commands: each fault of the second hardening pass made real.

Runs the real ``gt-llm`` command in a child process against the loopback
fake chat-completions server (tests/llm/fake_server.py), as a new user would.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_server import Canned, FakeChatServer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SECRET = "SECRETPW77"


@pytest.fixture
def server():
    with FakeChatServer() as s:
        yield s


@pytest.fixture
def env(monkeypatch) -> dict[str, str]:
    import os

    e = dict(os.environ)
    for name in ("GROQ_API_KEY", "GROQ_BASE_URL", "OPENAI_API_KEY"):
        e.pop(name, None)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), e.get("PYTHONPATH", "")]))
    e["NO_PROXY"] = "127.0.0.1,localhost"
    return e


def gt(env, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gt_llm.cli", *args],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )  # fmt: skip


def secret_spec(server: FakeChatServer) -> str:
    return f"openai:m@http://alice:{SECRET}@127.0.0.1:{server.port}/v1"


def files_holding(folder: Path, needle: str) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and needle.encode() in p.read_bytes()
    )


# -- 1. no password on disk or on the terminal ------------------------------------------------------

FRUIT_SMALL = ("--inits", "1", "--iterations", "10", "--max-messages", "2",
               "--no-generalisation", "--no-whole-game", "--no-progress")  # fmt: skip


@pytest.mark.parametrize(
    "command",
    [
        ("fruit-trading", "run", *FRUIT_SMALL),
        ("werewolf", "play", "--games", "2", "--no-progress"),
        ("werewolf", "arena", "--games", "2", "--no-progress"),
    ],
    ids=["fruit-run", "werewolf-play-games", "werewolf-arena"],
)  # fmt: skip
def test_a_password_in_the_backend_url_reaches_no_file_and_no_terminal(
    server, env, tmp_path, command
):
    out = tmp_path / "out"
    proc = gt(env, "-vv", *command, "--out", str(out), "--backend", secret_spec(server))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert server.request_count > 0
    assert server.requests[0].headers["authorization"].startswith("Basic ")
    assert files_holding(out, SECRET) == []
    assert SECRET not in proc.stdout and SECRET not in proc.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert "alice" not in json.dumps(manifest)


def test_a_401_echo_of_basic_credentials_is_redacted_on_the_terminal(server, env):
    server.enqueue(Canned(status=401, echo_auth=True))
    proc = gt(env, "-vv", "ask", "--backend", secret_spec(server), "hi")
    assert proc.returncode == 2
    basic = base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert "401" in proc.stderr
    for text in (proc.stdout, proc.stderr):
        assert SECRET not in text and basic not in text
