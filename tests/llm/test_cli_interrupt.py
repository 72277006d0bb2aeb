"""Ctrl-C during the start-up of the ``gt-llm`` program: status 130 and one line, always.

The program is started as pip's console script starts it (``import re``, ``import
sys``, ``from gt_llm.cli import main``) and as ``python -m gt_llm.cli``, and SIGINT is
sent at several moments of its first second and a half of imports. Every child must
exit 130 with ``gt-llm: interrupted`` as its only line: no ``KeyboardInterrupt``
traceback, no "Fatal Python error".

The clock of each child starts when ``gt_llm.startup`` has been imported (read from
``-X importtime``, which reports each import as it finishes): what runs before it is
the interpreter's own start-up and the launcher's ``import re``, Python's and pip's
code, which no package can guard; on a loaded machine it alone can take longer than
50 ms. The children run side by side, so the whole test takes about two seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gt_llm import startup

ROOT = Path(__file__).resolve().parents[2]

#: pip's console-script launcher for ``gt-llm = "gt_llm.cli:main"``.
LAUNCHER = """\
import re
import sys
from gt_llm.cli import main
if __name__ == "__main__":
    sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
    sys.exit(main())
"""

#: Seconds after ``gt_llm.startup`` is imported at which SIGINT is sent.
DELAYS = (0.0, 0.05, 0.2, 0.5, 1.0)
#: Seconds a child may take to show it started, and to exit after SIGINT.
START_TIMEOUT = 30.0
EXIT_TIMEOUT = 30.0

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("GROQ_API_KEY", "GROQ_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


class _Child:
    """One ``gt-llm`` child whose stderr is read by a thread (import times included)."""

    def __init__(self, argv: list[str], delay: float) -> None:
        self.delay = delay
        self.guarded = threading.Event()
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            argv,
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if line.startswith("import time:"):
                if line.rstrip().endswith("gt_llm.startup"):
                    self.guarded.set()
                continue
            self.lines.append(line.rstrip("\n"))
        self.guarded.set()  # the child ended without it: the assertions say so

    def finish(self) -> tuple[int, list[str]]:
        code = self.process.wait(timeout=EXIT_TIMEOUT)
        self._reader.join(timeout=EXIT_TIMEOUT)
        return code, self.lines


def _commands(out: Path) -> dict[str, list[str]]:
    launcher = out / "gt-llm"
    launcher.write_text(LAUNCHER)
    python = [sys.executable, "-X", "importtime"]
    return {
        "fruit-trading run": [*python, str(launcher), "fruit-trading", "run", "--out"],
        "werewolf tournament": [
            *python,
            str(launcher),
            "werewolf",
            "tournament",
            "--agents",
            "none,rules",
            "--games",
            "2",
            "--max-rounds",
            "1",
            "--out",
        ],
        "python -m gt_llm.cli": [*python, "-m", "gt_llm.cli", "fruit-trading", "run", "--out"],
    }


def test_ctrl_c_at_any_moment_of_start_up_exits_130_in_one_line(tmp_path: Path) -> None:
    children: dict[tuple[str, float], _Child] = {}
    for name, argv in _commands(tmp_path).items():
        delays = DELAYS if name != "python -m gt_llm.cli" else (0.0, 0.5)
        for delay in delays:
            out = tmp_path / f"{name.replace(' ', '_')}-{delay}"
            children[(name, delay)] = _Child([*argv, str(out)], delay)
    try:
        guarded_at: dict[tuple[str, float], float] = {}
        deadline = time.monotonic() + START_TIMEOUT
        pending = dict(children)
        # Each child's SIGINT at its delay after its own guard (children start side by side).
        while pending and time.monotonic() < deadline:
            now = time.monotonic()
            for key, child in list(pending.items()):
                if key not in guarded_at and child.guarded.is_set():
                    guarded_at[key] = now
                if key in guarded_at and now >= guarded_at[key] + child.delay:
                    if child.process.poll() is None:
                        child.process.send_signal(signal.SIGINT)
                    del pending[key]
            time.sleep(0.002)
        assert not pending, f"children that never imported gt_llm.startup: {sorted(pending)}"
        for (name, delay), child in children.items():
            code, lines = child.finish()
            where = f"{name}, SIGINT {delay} s after the guard: {lines[-12:]}"
            assert code == startup.INTERRUPTED_STATUS, where
            text = "\n".join(lines)
            assert "Traceback" not in text and "Fatal Python error" not in text, where
            assert lines == [startup.INTERRUPTED_MESSAGE], where
    finally:
        for child in children.values():
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait()


def test_the_guard_is_only_the_programs() -> None:
    # pytest is not the gt-llm program: importing gt_llm left SIGINT to Python (and pytest).
    assert not startup.started_as_program()
    assert not startup.in_startup()
    for argv, expected in [
        (["python", "-m", "gt_llm.cli", "werewolf"], True),
        (["python", "-X", "importtime", "-mgt_llm.cli"], True),
        (["python", "-W", "-m", "-m", "gt_llm.cli"], True),
        (["python", "-m", "pytest", "-m", "gt_llm.cli"], False),
        (["python", "-m", "gt_llm.backends.local_worker", "{}"], False),
        (["python", "-c", "import gt_llm", "-m", "gt_llm.cli"], False),
        (["python", "script.py", "-m", "gt_llm.cli"], False),
        (["python"], False),
    ]:
        assert startup._runs_program_module(argv) is expected, argv


def test_guard_and_end_restore_pythons_handler() -> None:
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert startup.guard_startup() is True
        assert startup.in_startup()
        assert startup.guard_startup() is False  # someone's handler (ours) is left alone
        startup.end_startup()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        startup.end_startup()  # nothing to undo
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_main_in_process_turns_an_early_ctrl_c_into_status_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gt_llm import cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["backends"]) == startup.INTERRUPTED_STATUS
    assert capsys.readouterr().err == f"{startup.INTERRUPTED_MESSAGE}\n"
