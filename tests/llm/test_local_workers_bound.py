"""The local backend's worker and thread counts are bounded before anything is built.

``GT_LLM_LOCAL_WORKERS`` (and ``GT_LLM_LOCAL_THREADS``) above the named
maximum, or written with anything but the digits 0-9 (``²`` passes
``str.isdigit``; ``٢`` passes ``int()``), is refused in one line naming the
variable, before a worker pool (one record per worker) or a model exists.
"""

from __future__ import annotations

import os

import pytest

from gt_llm.backends import local, local_env, local_pool
from gt_llm.backends.local_pool import MAX_WORKERS, WorkerConfig, WorkerPool
from gt_llm.errors import ConfigurationError
from tests.cli_runner import run_cli


@pytest.fixture(autouse=True)
def no_pool(monkeypatch):
    """Fails the test if a pool is made: a refused count must never size anything."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"a worker pool was built: {args} {kwargs}")

    monkeypatch.setattr(local, "shared_pool", refuse)
    monkeypatch.setattr(local_pool, "shared_pool", refuse)


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        (local.WORKERS_VARIABLE, "100000000", f"between 1 and {MAX_WORKERS}"),
        (local.WORKERS_VARIABLE, str(MAX_WORKERS + 1), f"between 1 and {MAX_WORKERS}"),
        (local.WORKERS_VARIABLE, "9" * 5000, f"between 1 and {MAX_WORKERS}"),
        (local.WORKERS_VARIABLE, "²", "digits 0-9"),
        (local.WORKERS_VARIABLE, "\u0662", "digits 0-9"),  # ARABIC-INDIC DIGIT TWO: int() takes it
        (local.THREADS_VARIABLE, "100000000", f"between 1 and {local.MAX_THREADS}"),
        (local.THREADS_VARIABLE, "³", "digits 0-9"),
    ],
)
def test_a_count_out_of_range_is_refused_naming_the_variable(monkeypatch, variable, value, words):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as err:
        local.LocalModel()
    message = str(err.value)
    assert "\n" not in message and len(message) < 300, message
    assert message.startswith(f"local backend: {variable}=") and words in message, message
    assert f"unset it or set e.g. {variable}=" in message


def test_the_largest_count_passes_the_variable_check(monkeypatch):
    monkeypatch.setenv(local.WORKERS_VARIABLE, f"00{MAX_WORKERS}")
    assert local_env.positive_from_env(local.WORKERS_VARIABLE, "2", most=MAX_WORKERS) == MAX_WORKERS


@pytest.mark.parametrize("workers", [0, MAX_WORKERS + 1, True])
def test_the_pool_refuses_a_count_out_of_range_before_building_it(workers):
    with pytest.raises(ValueError, match=f"1 to {MAX_WORKERS}"):
        WorkerPool(WorkerConfig("unused.gguf", 256, 1, False), workers)


def test_the_workers_argument_is_bounded_too():
    with pytest.raises(ValueError, match=f"workers must be 1 to {MAX_WORKERS}"):
        local.LocalModel(workers=MAX_WORKERS + 1)


@pytest.mark.parametrize("value", ["²", "100000000"])
def test_commands_and_backends_name_the_variable_before_starting(value, tmp_path):
    env = {**os.environ, local.WORKERS_VARIABLE: value}
    out = tmp_path / "out"
    proc = run_cli(
        ["werewolf", "play", "--games", "2", "--backend", "local", "--out", str(out)], env=env
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert "--backend" in lines[0] and f"{local.WORKERS_VARIABLE}=" in lines[0], lines[0]
    assert not out.exists()
    proc = run_cli(["backends", "local"], env=env)
    assert proc.returncode == 1
    assert f"local: not configured: {local.WORKERS_VARIABLE}=" in proc.stdout, proc.stdout
