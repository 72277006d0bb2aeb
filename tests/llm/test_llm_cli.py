"""The gt-llm command line: in this process (``tests/cli_runner.py``), and a few runs of the
real entry point as a subprocess (``python -m gt_llm.cli``)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

import gt_llm
from gt_llm.cli import build_parser, main
from tests.cli_runner import run_cli


def cli(child_env, *args: str, env_extra: dict[str, str] | None = None):
    return run_cli(args, env=dict(child_env, **(env_extra or {})))


def entry_point(child_env, *args: str):
    """The real entry point in a fresh interpreter (imports, plugin loading, exit status)."""
    return subprocess.run(
        [sys.executable, "-m", "gt_llm.cli", *args],
        env=child_env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("gt-llm: error: ")
    assert "Traceback" not in stderr
    return lines[0]


def test_version(child_env):
    proc = entry_point(child_env, "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"gt-llm {gt_llm.__version__}"


def test_help_lists_subcommands(child_env):
    proc = entry_point(child_env, "--help")
    assert proc.returncode == 0
    assert "backends" in proc.stdout and "ask" in proc.stdout
    # The game commands come from the games plugin, loaded by name in a fresh process.
    import games  # noqa: F401  (registers every game in this process too)
    from games.engine.registry import registered_game_specs

    commands = [s.name for s in registered_game_specs() if s.commands]
    assert "fruit-trading" in commands and all(g in proc.stdout for g in commands)
    assert "failed to load" not in proc.stdout and proc.stderr == ""


def test_backends(child_env):
    proc = cli(child_env, "backends")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for name in ("scripted", "groq", "openai"):
        assert name in out
    assert "openai:MODEL@" in out
    assert "groq: not configured: GROQ_API_KEY is not set" in out  # child_env has no key


def test_ask_scripted(child_env):
    proc = cli(child_env, "ask", "--backend", "scripted", "--seed", "3", "hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == gt_llm.load_model("scripted").ask("hi", seed=3) + "\n"
    assert proc.stderr == ""


def test_unknown_backend(child_env):
    proc = cli(child_env, "ask", "--backend", "nope", "hi")
    assert proc.returncode == 2
    assert "unknown backend 'nope'" in one_error_line(proc.stderr)
    assert proc.stdout == ""


def test_groq_without_key(child_env):
    proc = cli(child_env, "ask", "--backend", "groq", "hi")
    assert proc.returncode == 2
    assert "GROQ_API_KEY" in one_error_line(proc.stderr)


def test_bad_openai_spec(child_env):
    proc = cli(child_env, "ask", "--backend", "openai:m", "hi")
    assert proc.returncode == 2
    assert "openai:MODEL@BASE_URL" in one_error_line(proc.stderr)


def test_unreachable_server(child_env):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    start = time.monotonic()
    proc = cli(child_env, "ask", "-b", f"openai:m@{url}", "hi")
    took = time.monotonic() - start
    assert proc.returncode == 2
    line = one_error_line(proc.stderr)
    assert f"{url}/chat/completions" in line and "connection refused" in line
    assert took < 10  # one refused connect, not ~35 s of retries (the child's startup included)


def test_ask_fake_server_and_cache(child_env, fake_server, tmp_path):
    spec = f"openai:m@{fake_server.url}/v1"
    cache = str(tmp_path / "sub" / "cli.db")
    args = ["-v", "ask", "--backend", spec, "--seed", "5", "--temperature", "0.2",
            "--max-tokens", "9", "--cache", cache, "hello there"]  # fmt: skip
    first = cli(child_env, *args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == "echo: hello there (seed 5)\n"
    assert "answered" in first.stderr  # INFO log with -v
    [req] = fake_server.requests
    assert (req.body["seed"], req.body["temperature"], req.body["max_tokens"]) == (5, 0.2, 9)
    second = cli(child_env, *args)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert "cache hit" in second.stderr
    assert fake_server.request_count == 1


def test_quiet_and_verbose_are_exclusive(child_env):
    proc = cli(child_env, "-q", "-v", "backends")
    assert proc.returncode == 2


def test_main_in_process(capsys):
    assert main(["ask", "hi"]) == 0
    assert capsys.readouterr().out.endswith("\n")
    assert main([]) == 2  # no command: help on stderr


def test_parser_has_extension_point():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"backends", "ask"} <= set(sub.choices)


@pytest.mark.parametrize("args", [["ask"], ["ask", "--seed", "x", "hi"]])
def test_usage_errors_exit_2(child_env, args):
    assert cli(child_env, *args).returncode == 2


def test_a_usage_error_of_the_real_entry_point_is_one_line_and_status_2(child_env):
    proc = entry_point(child_env, "ask", "--seed", "x", "hi")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
