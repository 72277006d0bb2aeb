"""A headless Chromium driven over the DevTools protocol (stdlib only), for page tests.

Chromium is started with ``--remote-debugging-pipe``: commands go in on file
descriptor 3 and answers come out on 4, NUL-separated JSON. That is enough to
open a page from disk, wait until its scripts marked it rendered, evaluate
expressions, click at an element's position (real mouse events) and take a
screenshot — no Playwright, no WebSocket library.

Used by the browser tests (``tests/games/test_views.py``) and by
``benchmarks/views.py``. :func:`find_chromium` says why a test is skipped.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)


def find_chromium() -> str | None:
    """The Chromium executable (``$GT_LLM_CHROMIUM``, ``chromium``, ``chromium-browser``)."""
    env = os.environ.get("GT_LLM_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    """Chromium died, timed out or reported a protocol error."""


class Browser:
    """One headless Chromium with one page (a tab) attached.

    Use as a context manager; ``open(path)`` loads a file and waits for the
    page's ``data-ready`` mark.
    """

    def __init__(self, executable: str, *, width: int = 1280, height: int = 900) -> None:
        self.profile = tempfile.mkdtemp(prefix="gt-llm-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # bash (dash takes one-digit fds only) puts the pipe on fds 3 and 4 (a preexec_fn would force a plain
        # fork, which multithreaded libraries loaded by the tests warn about).
        wire = f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w}'
        args = [*FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]
        self.proc = subprocess.Popen(
            [shutil.which("bash") or "/bin/bash", "-c", wire, executable, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_child_r, from_child_w),
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        # Where each frame's scripts run: an out-of-process frame (a sandboxed srcdoc frame on
        # Chromium with IsolateSandboxedIframes) is its own target, attached here as a child of
        # this page only; an in-process frame is a default execution context of the page.
        self._frame_sessions: dict[str, str] = {}
        self._frame_contexts: dict[str, int] = {}
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable", session=True)
        self.call("Runtime.enable", session=True)
        self.call(
            "Target.setAutoAttach",
            session=True,
            autoAttach=True,
            waitForDebuggerOnStart=False,
            flatten=True,
        )
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    # -- protocol ------------------------------------------------------------

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("chromium: no answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise BrowserError("chromium: the browser closed the pipe")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, *, session: bool | str = False, timeout: float = 30, **params: Any):
        """Sends one command and returns its result (events seen meanwhile are kept).

        ``session=True`` sends it to the page, a session id to that target (a frame).
        """
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session if session is True else session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            answer = self._read(timeout)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"chromium {method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)
            self._track(answer)

    def _track(self, event: dict[str, Any]) -> None:
        """Keeps the page's frame targets and frame execution contexts up to date."""
        method, params = event.get("method"), event.get("params", {})
        if event.get("sessionId") != self.session:
            return  # only this page's own children and contexts
        if method == "Target.attachedToTarget":
            info = params["targetInfo"]
            if info["type"] == "iframe":  # an out-of-process frame: its target id is its frame id
                self._frame_sessions[info["targetId"]] = params["sessionId"]
        elif method == "Target.detachedFromTarget":
            gone = params.get("sessionId")
            self._frame_sessions = {f: s for f, s in self._frame_sessions.items() if s != gone}
        elif method == "Runtime.executionContextCreated":
            context = params["context"]
            aux = context.get("auxData", {})
            if aux.get("isDefault") and aux.get("frameId"):
                self._frame_contexts[aux["frameId"]] = context["id"]
        elif method == "Runtime.executionContextDestroyed":
            gone = params.get("executionContextId")
            self._frame_contexts = {f: c for f, c in self._frame_contexts.items() if c != gone}
        elif method == "Runtime.executionContextsCleared":
            self._frame_contexts.clear()

    # -- page ----------------------------------------------------------------

    def open(self, path: str | os.PathLike[str], *, fragment: str = "", timeout: float = 30):
        """Loads a file and waits until the page set ``data-ready``; returns the wall time (s)."""
        url = Path(path).resolve().as_uri() + (f"#{fragment}" if fragment else "")
        # From a blank page: a new fragment on the same file would not reload it.
        self.call("Page.navigate", session=True, url="about:blank")
        start = time.perf_counter()
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + timeout
        while not self.eval("document.body && document.body.dataset.ready === '1'"):
            if time.monotonic() > deadline:
                raise BrowserError(f"chromium: {path} did not finish rendering")
            time.sleep(0.01)
        return time.perf_counter() - start

    def eval(
        self, expression: str, *, session: bool | str = True, context: int | None = None
    ) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable), or in a
        frame's target (``session``) or execution context (``context``)."""
        where = {} if context is None else {"contextId": context}
        r = self.call(
            "Runtime.evaluate",
            session=session,
            expression=expression,
            returnByValue=True,
            awaitPromise=True,
            **where,
        )
        if "exceptionDetails" in r:
            raise BrowserError(f"chromium: {expression[:60]!r} threw {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 10) -> Any:
        """Polls an expression until it is truthy (e.g. after a ``toggle`` event, which
        the browser dispatches as a later task) and returns its value."""
        deadline = time.monotonic() + timeout
        while not (value := self.eval(expression)):
            if time.monotonic() > deadline:
                raise BrowserError(f"chromium: {expression[:80]!r} stayed false")
            time.sleep(0.02)
        return value

    def frame_eval(self, expression: str, *, timeout: float = 10) -> Any:
        """The value of an expression in the page's first ``<iframe>`` once it is rendered
        (its ``data-ready`` mark is set).

        The frame is found from the ``<iframe>`` element itself, never from the browser's
        list of targets, which also holds other pages' frames (a new-tab page's, an
        extension's). Its scripts run either in its own target (out of process, as Chromium
        puts a sandboxed frame) or in a context of the page (in process, older Chromium);
        both are looked up again on each try, since the frame moves when its document commits.
        """
        deadline = time.monotonic() + timeout
        why, error = "the page has no frame", ""
        while True:
            where, ready = None, False
            try:
                where = self._frame_target()
                if where is not None:
                    why = "the frame did not finish rendering"
                    ready = self.eval(
                        "document.body && document.body.dataset.ready === '1'", **where
                    )
            except BrowserError as e:  # a document or the frame's process was just replaced
                error = f" (last try: {e})"
            if ready and where is not None:
                return self.eval(expression, **where)
            if time.monotonic() > deadline:
                raise BrowserError(f"chromium: {why}{error}")
            time.sleep(0.02)

    def _frame_target(self) -> dict[str, Any] | None:
        """Where the page's first ``<iframe>`` runs scripts (``eval`` keywords), or None yet."""
        element = self.call(
            "Runtime.evaluate", session=True, expression="document.querySelector('iframe')"
        )["result"]
        if "objectId" not in element:
            return None
        try:
            frame = self.call("DOM.describeNode", session=True, objectId=element["objectId"])[
                "node"
            ].get("frameId")
        finally:
            self.call("Runtime.releaseObject", session=True, objectId=element["objectId"])
        if frame in self._frame_sessions:
            return {"session": self._frame_sessions[frame]}
        if frame in self._frame_contexts:
            return {"context": self._frame_contexts[frame]}
        return None

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the centre of the element."""
        box = self.eval(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        if box is None:
            raise BrowserError(f"chromium: no element {selector!r} to click")
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                session=True,
                type=kind,
                x=x,
                y=y,
                button="left",
                clickCount=1,
            )

    def screenshot(self, path: str | os.PathLike[str]) -> Path:
        """A PNG of the viewport (scrolled to the top)."""
        self.eval("window.scrollTo(0, 0)")
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
