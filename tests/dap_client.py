"""A small Debug Adapter Protocol client for tests: drives `taskdsl debug` over its stdin/stdout."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading


class DapClient:
    def __init__(self, cwd: str | None = None, env: dict | None = None, command: list[str] | None = None):
        self.proc = subprocess.Popen(command or [sys.executable, "-m", "taskdsl", "debug"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.seq = 0
        self.messages: queue.Queue = queue.Queue()
        self.events: list[dict] = []
        self.pending: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.proc.stdin.flush()

    def _next(self, timeout: float = 60) -> dict:
        message = self.messages.get(timeout=timeout)
        if message is None:
            raise EOFError("the adapter closed its output: " + self.proc.stderr.read().decode())
        if message.get("type") == "event":
            self.events.append(message)
        return message

    def request(self, command: str, arguments: dict | None = None, *, ok: bool = True) -> dict:
        self.seq += 1
        seq = self.seq
        self.send({"seq": seq, "type": "request", "command": command, "arguments": arguments or {}})
        while True:
            message = self._next()
            if message.get("type") == "response" and message.get("request_seq") == seq:
                if ok:
                    assert message["success"], message
                return message
            if message.get("type") == "event":
                self.pending.append(message)

    def event(self, name: str) -> dict:
        for i, message in enumerate(self.pending):
            if message["event"] == name:
                return self.pending.pop(i)
        while True:
            message = self._next()
            if message.get("type") == "event":
                if message["event"] == name:
                    return message
                self.pending.append(message)

    def outputs(self, category: str) -> str:
        return "".join(e["body"]["output"] for e in self.events
                       if e["event"] == "output" and e["body"].get("category") == category)

    def start(self, launch: dict, breakpoints: dict[str, list[int]] | None = None) -> dict:
        """initialize, launch, breakpoints, configurationDone (VS Code's order); the launch response."""
        self.request("initialize", {"adapterID": "taskdsl", "linesStartAt1": True, "columnsStartAt1": True})
        self.event("initialized")
        self.seq += 1
        launch_seq = self.seq
        self.send({"seq": launch_seq, "type": "request", "command": "launch", "arguments": launch})
        response = None
        while response is None:
            message = self._next()
            if message.get("type") == "response" and message.get("request_seq") == launch_seq:
                response = message
            elif message.get("type") == "event":
                self.pending.append(message)
        if not response["success"]:
            return response
        self.placed = {path: self.request("setBreakpoints", {"source": {"path": path},
                                                             "breakpoints": [{"line": n} for n in lines]})["body"]
                       for path, lines in (breakpoints or {}).items()}
        self.request("configurationDone")
        return response

    def stack(self) -> list[dict]:
        return self.request("stackTrace", {"threadId": 1})["body"]["stackFrames"]

    def scopes(self, frame_id: int) -> dict[str, int]:
        found = self.request("scopes", {"frameId": frame_id})["body"]["scopes"]
        return {s["name"]: s["variablesReference"] for s in found}

    def variables(self, reference: int) -> dict[str, dict]:
        found = self.request("variables", {"variablesReference": reference})["body"]["variables"]
        return {v["name"]: v for v in found}

    def close(self) -> int:
        if self.proc.poll() is None:
            try:
                self.request("disconnect", {"terminateDebuggee": True})
            except (EOFError, BrokenPipeError, OSError, queue.Empty):
                pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
