"""`taskdsl serve --tcp/--ws`: loopback by default, and nothing but a client holding the token is
served. Real server processes, real TCP and WebSocket clients."""

import asyncio
import json
import os
import re
import socket
import subprocess
import sys

import pytest

from evaluator_helpers import write

REFUSAL = "taskdsl: this server needs a token: send it as initializationOptions.token"


def start(transport, env=None):
    process = subprocess.Popen([sys.executable, "-m", "taskdsl", "serve", f"--{transport}", "0"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, **(env or {})}, text=True)
    line = process.stderr.readline()
    match = re.match(rf"taskdsl: serving on {transport}://127\.0\.0\.1:(\d+); clients send (.*)$", line)
    assert match, line
    port = int(match.group(1))
    token = match.group(2).removeprefix("initializationOptions.token = ")
    return process, port, token


@pytest.fixture
def servers():
    started = []
    yield lambda *a, **k: started.append(start(*a, **k)) or started[-1]
    for process, _, _ in started:
        process.kill()
        process.wait()
        process.stderr.close()


def frame(message):
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def initialize(token=None, id=1):
    options = {"token": token} if token is not None else {}
    return {"jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": options}}


def exchange(port, *messages):
    "Send messages on a new connection; everything the server sends until it closes (or 20 s)."
    with socket.create_connection(("127.0.0.1", port), timeout=20) as client:
        for message in messages:
            client.sendall(frame(message))
        received = b""
        try:
            while chunk := client.recv(65536):
                received += chunk
                if b'"capabilities"' in received:
                    break  # an initialize result: the connection stays open for the client
        except socket.timeout:
            pass
    return received.decode()


def listening_addresses(pid, port):
    "The local addresses the process listens on at port, from /proc/<pid>/net/tcp (state 0A = LISTEN)."
    with open(f"/proc/{pid}/net/tcp") as f:
        rows = [line.split() for line in f.readlines()[1:]]
    found = []
    for row in rows:
        address, hex_port = row[1].split(":")
        if int(hex_port, 16) == port and row[3] == "0A":
            found.append(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


def test_tcp_listens_on_loopback_only(servers):
    process, port, _ = servers("tcp")
    assert listening_addresses(process.pid, port) == ["127.0.0.1"]


def test_a_raw_client_without_the_token_is_answered_with_an_error_and_closed(servers, tmp_path):
    marker = tmp_path / "ran"
    path = write(tmp_path, "t.task.xml", f'<task type="script" name="s"><command>touch {marker}</command></task>')
    _, port, token = servers("tcp")
    run = {"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand",
           "params": {"command": "taskdsl.runTask", "arguments": [{"uri": f"file://{path}"}]}}
    received = exchange(port, initialize(), run)
    assert REFUSAL in received and '"id": 1' in received and '"capabilities"' not in received
    assert exchange(port, run).count(REFUSAL) == 1  # no initialize first: refused the same way
    assert exchange(port, initialize("wrong" + token)).count(REFUSAL) == 1
    assert not marker.exists()
    # the server still waits for its client, which is served
    received = exchange(port, initialize(token))
    assert '"capabilities"' in received and REFUSAL not in received


def test_the_token_can_come_from_the_environment(servers):
    _, port, shown = servers("tcp", env={"TASKDSL_SERVER_TOKEN": "a-long-shared-token-123"})
    assert shown == "the token of TASKDSL_SERVER_TOKEN"  # never printed when the user chose it
    assert '"capabilities"' in exchange(port, initialize("a-long-shared-token-123"))


def test_ws_works_from_a_plain_install_and_needs_the_token(servers):
    from websockets.asyncio.client import connect

    _, port, token = servers("ws")

    async def talk(message):
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            await ws.send(json.dumps(message))
            answer = json.loads(await ws.recv())
            return answer

    refused = asyncio.run(talk(initialize()))
    assert refused["error"]["message"].startswith(REFUSAL)
    accepted = asyncio.run(talk(initialize(token)))
    assert "capabilities" in accepted["result"]


def test_the_client_ends_the_session_and_the_server_with_it_cleanly(servers):
    process, port, token = servers("tcp")
    with socket.create_connection(("127.0.0.1", port), timeout=20) as client:
        client.sendall(frame(initialize(token)))
        received = b""
        while b'"capabilities"' not in received:
            received += client.recv(65536)
        client.sendall(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        client.sendall(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        while b'"id": 2' not in received:
            received += client.recv(65536)
        client.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert process.wait(20) == 0
    assert "Traceback" not in process.stderr.read()


def test_an_empty_token_variable_means_a_generated_token_not_an_empty_one(servers):
    _, port, shown = servers("tcp", env={"TASKDSL_SERVER_TOKEN": ""})
    assert len(shown) >= 24  # generated and printed
    assert exchange(port, initialize("")).count(REFUSAL) == 1  # the empty token opens nothing


def test_a_second_client_is_closed_while_the_first_is_served(servers):
    _, port, token = servers("tcp")
    with socket.create_connection(("127.0.0.1", port), timeout=20) as first:
        first.sendall(frame(initialize(token)))
        received = b""
        while b'"capabilities"' not in received:
            received += first.recv(65536)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as second:
            try:
                second.sendall(frame(initialize(token)))
                answered = second.recv(65536)
            except ConnectionResetError:  # closed before (or while) it wrote
                answered = b""
            assert answered == b""  # closed at once, nothing answered


def test_a_client_that_sends_nothing_is_dropped_and_the_next_one_is_served(servers):
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from taskdsl.lsp.remote import TIMEOUT_VARIABLE

    _, port, token = servers("tcp", env={TIMEOUT_VARIABLE: "1"})
    with socket.create_connection(("127.0.0.1", port), timeout=15) as silent:
        assert silent.recv(65536) == b""  # closed by the server (without the limit: a socket timeout here)
    assert '"capabilities"' in exchange(port, initialize(token))

    _, port, token = servers("ws", env={TIMEOUT_VARIABLE: "1"})

    async def silent_then_served():
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            try:
                await asyncio.wait_for(ws.recv(), 15)
                closed = False
            except ConnectionClosed:
                closed = True
        async with connect(f"ws://127.0.0.1:{port}") as ws:
            await ws.send(json.dumps(initialize(token)))
            return closed, json.loads(await ws.recv())

    closed, answer = asyncio.run(silent_then_served())
    assert closed and "capabilities" in answer["result"]
