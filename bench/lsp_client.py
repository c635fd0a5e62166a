"""A minimal LSP client over a subprocess's stdio, for benchmarks and soak scripts.

It answers the server's requests the way a plain editor would (configuration, progress tokens,
capability registration) so nothing waits on it, and records every notification it receives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue

SERVER_CMD = [sys.executable, "-m", "taskdsl", "serve"]


class LspClient:
    def __init__(self, cmd=SERVER_CMD, settings: dict | None = None, cwd: str | None = None, stderr=None):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr if stderr is not None else subprocess.DEVNULL, cwd=cwd, env=env)
        self.settings = settings or {}
        self.next_id = 0
        self.responses: dict[int, Queue] = {}
        self.notifications: Queue = Queue()
        self.lock = threading.Lock()
        threading.Thread(target=self._read_loop, daemon=True).start()

    # -- wire ----------------------------------------------------------------------------------

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        with self.lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read_loop(self) -> None:
        stream = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                key, _, value = line.decode().partition(":")
                headers[key.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            message = json.loads(body)
            message["_received"] = time.perf_counter()
            if "method" in message and "id" in message:
                self._answer(message)
            elif "method" in message:
                self.notifications.put(message)
            else:
                self.responses.setdefault(message["id"], Queue()).put(message)

    def _answer(self, request: dict) -> None:
        method = request["method"]
        if method == "workspace/configuration":
            result = [self.settings for _ in request["params"]["items"]]
        elif method == "window/showMessageRequest":
            actions = request["params"].get("actions") or []
            result = actions[0] if actions else None
        else:  # workDoneProgress/create, registerCapability, showDocument, …
            result = None if method != "window/showDocument" else {"success": True}
        self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    # -- API -----------------------------------------------------------------------------------

    def request(self, method: str, params, timeout: float = 60.0):
        self.next_id += 1
        request_id = self.next_id
        self.responses.setdefault(request_id, Queue())
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        message = self.responses[request_id].get(timeout=timeout)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return message.get("result")

    def notify(self, method: str, params) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, root: Path, encodings=("utf-16",)) -> dict:
        capabilities = {
            "general": {"positionEncodings": list(encodings)},
            "workspace": {"configuration": True, "workspaceFolders": True},
            "textDocument": {
                "synchronization": {"didSave": True},
                "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
                "completion": {"completionItem": {"snippetSupport": False}},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
            },
            "window": {"workDoneProgress": True},
        }
        result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(),
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            "capabilities": capabilities,
        })
        self.notify("initialized", {})
        return result

    def wait_diagnostics(self, uri: str, version: int | None = None, timeout: float = 60.0) -> dict:
        """The next publishDiagnostics for uri (and version, when given); others are dropped."""
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for {uri}")
            try:
                message = self.notifications.get(timeout=remaining)
            except Empty:
                continue
            if message["method"] != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            if params["uri"] == uri and (version is None or params.get("version") in (None, version)):
                params["_received"] = message["_received"]
                return params

    def cpu_seconds(self) -> float:
        """The server process's CPU time so far (user + system, Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def settle(self, timeout: float = 60.0, window: float = 1.0) -> float:
        """Wait until the server is idle (under 5 % of a core over ``window`` seconds): its start-up
        work — the background import of litellm that its first diagnostics start — is over, so what
        is measured next is what a request costs, not a share of the CPU with that import. Returns
        the seconds waited."""
        started = time.perf_counter()
        last = self.cpu_seconds()
        while time.perf_counter() - started < timeout:
            time.sleep(window)
            now = self.cpu_seconds()
            if now - last < 0.05 * window:
                break
            last = now
        return time.perf_counter() - started

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "taskxml", "version": version, "text": text}})

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()
