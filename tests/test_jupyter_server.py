"""A reader's Jupyter runs the chapters on the project's kernel, as nbval does.

``make lab`` serves ``chapters/`` with JupyterLab, a front end on jupyter_server. This test
starts jupyter_server as ``make lab`` does — on 127.0.0.1, a free port, a token, the
environment a reader gets (no ``PDPKIT_PROGRESS``, no ``CI``, BLAS single-threaded) — and
checks, through the REST and websocket APIs the browser uses:

* the server's kernel list shows the project's kernel, on this environment's Python, and it
  is the kernel the chapters' metadata name;
* a notebook session on that kernel runs the first cells of a chapter and reproduces their
  stored outputs (text, LaTeX, streams);
* long runs show tqdm's notebook progress bar (a widget), not a text bar on stderr.

The server is shut down through its API, and killed (with its kernel) if it does not stop.
Everything is bounded by one deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from jupyter_client.jsonutil import json_default
from jupyter_client.session import Session
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

ROOT = pathlib.Path(__file__).resolve().parents[1]
KERNEL, KERNEL_DISPLAY = "pdpkit", "Python (pdpkit)"
CHAPTER = "per_instance_dp.ipynb"  # the first chapter: symbolic and numerical cells
N_CODE_CELLS = 7  # its first cells take about 5 s
DEADLINE = 60.0  # seconds for the whole test, server start to shutdown
WIDGET = "application/vnd.jupyter.widget-view+json"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reader_env(tmp: pathlib.Path) -> dict[str, str]:
    """What ``make lab`` gives the server, with Jupyter's user directories kept out."""
    drop = {"PDPKIT_PROGRESS", "CI", "PYTEST_CURRENT_TEST", "JUPYTER_PATH"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PYTEST_XDIST")}
    env.update(PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
        env[var] = str(tmp / sub)  # no user-level kernels or settings: only .venv's
    return env


class Server:
    def __init__(self, tmp: pathlib.Path, deadline: float):
        self.port, self.token, self.deadline = _free_port(), secrets.token_hex(24), deadline
        self.log_path = tmp / "server.log"
        self.log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={self.port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={ROOT / 'chapters'}",
             f"--MappingKernelManager.default_kernel_name={KERNEL}",
             *(["--allow-root"] if os.geteuid() == 0 else [])],  # as `make lab` (containers run as root)
            stdout=self.log, stderr=subprocess.STDOUT, env=_reader_env(tmp), start_new_session=True,
        )
        self.kernel_pids: list[int] = []

    def left(self) -> float:
        remaining = self.deadline - time.monotonic()
        assert remaining > 0, f"over the {DEADLINE:g} s budget\n{self.log_tail()}"
        return remaining

    def log_tail(self) -> str:
        self.log.flush()
        return "server log (tail):\n" + self.log_path.read_text(errors="replace")[-3000:]

    def api(self, method: str, path: str, body: dict | None = None):
        timeout = min(10.0, max(self.deadline - time.monotonic(), 1.0))
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def wait_ready(self) -> None:
        while True:
            assert self.proc.poll() is None, f"the server exited ({self.proc.returncode})\n{self.log_tail()}"
            with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):
                if self.api("GET", "/api/status") is not None:
                    return
            self.left()
            time.sleep(0.2)

    def stop(self) -> None:
        """Shut down through the API; else SIGTERM (the server stops its kernels), then SIGKILL."""
        with contextlib.suppress(Exception):
            self.api("POST", "/api/shutdown")
        for sig, wait in ((None, 10), (signal.SIGTERM, 5), (signal.SIGKILL, 10)):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        for pid in self.kernel_pids:  # kernels run in sessions of their own
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.log.close()


async def _execute(ws, session: Session, code: str, server: Server) -> tuple[dict, list[dict]]:
    """Run ``code`` over the kernel's websocket; its reply and its outputs, as in a notebook."""
    msg = session.msg("execute_request", {"code": code, "silent": False, "store_history": True,
                                          "user_expressions": {}, "allow_stdin": False,
                                          "stop_on_error": True})
    msg["channel"] = "shell"
    await ws.write_message(json.dumps(msg, default=json_default))
    msg_id = msg["header"]["msg_id"]
    reply, idle, outputs = None, False, []
    while reply is None or not idle:
        raw = await asyncio.wait_for(ws.read_message(), timeout=server.left())
        assert raw is not None, f"the kernel's websocket closed\n{server.log_tail()}"
        if isinstance(raw, bytes):  # messages with binary buffers (widget comms) only
            continue
        m = json.loads(raw)
        if m.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind = m["header"]["msg_type"]
        if m["channel"] == "shell" and kind == "execute_reply":
            reply = m["content"]
        elif m["channel"] == "iopub" and kind == "status":
            idle = m["content"]["execution_state"] == "idle"
        elif m["channel"] == "iopub" and kind in ("stream", "execute_result", "display_data", "error"):
            outputs.append({"output_type": kind, **m["content"]})
    return reply, outputs


def _comparable(outputs: list[dict]) -> dict:
    """What nbval compares: the streams (merged) and each result's text, LaTeX and HTML."""
    text = lambda v: "".join(v) if isinstance(v, list) else v  # stored as lists of lines
    streams: dict[str, str] = {}
    results = []
    for o in outputs:
        if o["output_type"] == "stream":
            streams[o["name"]] = streams.get(o["name"], "") + text(o["text"])
        elif o["output_type"] in ("execute_result", "display_data"):
            data = o.get("data", {})
            results.append({k: text(data[k]) for k in ("text/plain", "text/latex", "text/html") if k in data})
        else:
            results.append({"error": f"{o.get('ename')}: {o.get('evalue')}"})
    return {"streams": streams, "results": results}


async def _run_in_lab(server: Server, cells: list[dict], kernel: str) -> dict:
    sess = server.api("POST", "/api/sessions", {"path": CHAPTER, "name": CHAPTER, "type": "notebook",
                                                 "kernel": {"name": kernel}})
    kid = sess["kernel"]["id"]
    assert sess["kernel"]["name"] == KERNEL
    session = Session(username="test", key=b"")
    url = f"ws://127.0.0.1:{server.port}/api/kernels/{kid}/channels?session_id={session.session}"
    ws = await asyncio.wait_for(
        websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {server.token}"})),
        timeout=server.left())
    found: dict = {}
    try:
        _, out = await _execute(ws, session, "import os, sys\nprint(os.getpid(), sys.prefix)", server)
        pid, prefix = _comparable(out)["streams"]["stdout"].split(maxsplit=1)
        server.kernel_pids.append(int(pid))
        found["prefix"] = prefix.strip()
        found["cells"] = []
        for cell in cells:
            reply, out = await _execute(ws, session, "".join(cell["source"]), server)
            found["cells"].append((reply["status"], _comparable(out)))
        _, out = await _execute(ws, session, (
            "import pdpkit\nfrom pdpkit._progress import progress, progress_enabled\n"
            "print(progress_enabled(), pdpkit.__file__)\n"
            "for _ in progress(range(3), desc='work'):\n    pass"), server)
        found["progress"] = out
    finally:
        ws.close()
        with contextlib.suppress(Exception):
            server.api("DELETE", f"/api/sessions/{sess['id']}")
    return found


def test_a_reader_s_jupyter_lists_the_project_kernel_and_runs_a_chapter_as_stored(tmp_path):
    t0 = time.monotonic()
    nb = json.loads((ROOT / "chapters" / CHAPTER).read_text())
    kernel = nb["metadata"]["kernelspec"]["name"]
    assert kernel == KERNEL, f"{CHAPTER} names the kernel {kernel!r}, not the project's {KERNEL!r}"
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"][:N_CODE_CELLS]

    server = Server(tmp_path, deadline=t0 + DEADLINE)
    try:
        server.wait_ready()
        listed = server.api("GET", "/api/kernelspecs")
        specs = listed["kernelspecs"]
        assert KERNEL in specs, f"the server lists {sorted(specs)}, not {KERNEL!r} (run `make install`)"
        assert listed["default"] == KERNEL
        spec = specs[KERNEL]["spec"]
        assert spec["display_name"] == KERNEL_DISPLAY
        assert pathlib.Path(spec["argv"][0]).parent == pathlib.Path(sys.executable).parent, \
            f"the {KERNEL!r} kernel runs {spec['argv'][0]}, not this environment's Python"

        found = asyncio.run(_run_in_lab(server, cells, kernel))
    finally:
        server.stop()

    assert found["prefix"] == sys.prefix
    for k, (cell, (status, got)) in enumerate(zip(cells, found["cells"], strict=True), start=1):
        assert status == "ok", f"code cell {k} of {CHAPTER} failed in the server's kernel: {got}"
        assert got == _comparable(cell["outputs"]), f"code cell {k} of {CHAPTER} differs from its stored output"
    progress = _comparable(found["progress"])
    enabled, module = progress["streams"].pop("stdout").strip().split(maxsplit=1)
    assert enabled == "True", "no progress bar for a reader (PDPKIT_PROGRESS unset, no CI)"
    assert pathlib.Path(module).is_relative_to(ROOT), f"the kernel imports pdpkit from {module}"
    assert not progress["streams"], f"a text progress bar or warning on stderr: {progress['streams']}"
    assert any(WIDGET in o.get("data", {}) for o in found["progress"]), "tqdm drew no notebook widget"
    assert time.monotonic() - t0 < DEADLINE
