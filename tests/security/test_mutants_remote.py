"""`serve --tcp` judged exactly, in this process (so that mutation testing sees which test holds which
guard: the tests of test_security_server.py run the server as a separate process): the token, the
first message's framing and bounds, the refusal, one client, the first-message timeout (the mutants
of taskdsl.lsp.remote that the other tests let live, see docs/security.md "Mutation testing")."""

import asyncio
import json
import socket
import threading

import pytest

from taskdsl.lsp import remote

TOKEN = "a-long-shared-token-123"


def frame(message) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def initialize(token=None, id=1, method="initialize"):
    options = {"token": token} if token is not None else {}
    return {"jsonrpc": "2.0", "id": id, "method": method,
            "params": {"processId": None, "capabilities": {}, "initializationOptions": options}}


def test_the_token_comes_from_the_environment_or_is_generated_fresh(monkeypatch):
    monkeypatch.setenv("TASKDSL_SERVER_TOKEN", TOKEN)
    assert remote.server_token() == (TOKEN, False)
    monkeypatch.setenv("TASKDSL_SERVER_TOKEN", "")
    first, generated = remote.server_token()
    assert generated is True and len(first) == 32 and remote.server_token()[0] != first
    monkeypatch.delenv("TASKDSL_SERVER_TOKEN")
    assert remote.server_token()[1] is True


def test_the_announcement_shows_a_generated_token_and_never_a_chosen_one(capsys):
    remote.announce("tcp", "127.0.0.1", 4000, "generated-token", True)
    remote.announce("ws", "127.0.0.1", 4001, TOKEN, False)
    assert capsys.readouterr().err.splitlines() == [
        "taskdsl: serving on tcp://127.0.0.1:4000; clients send initializationOptions.token = generated-token",
        "taskdsl: serving on ws://127.0.0.1:4001; clients send the token of TASKDSL_SERVER_TOKEN",
    ]


def test_only_an_initialize_carrying_the_token_is_authorized():
    assert remote.authorized(initialize(TOKEN), TOKEN) is True
    for message in [initialize(), initialize("wrong"), initialize(TOKEN + "x"), initialize(TOKEN[:-1]),
                    initialize(TOKEN, method="workspace/executeCommand"), initialize(12345),
                    {"method": "initialize", "params": [TOKEN]},
                    {"method": "initialize", "params": {"initializationOptions": TOKEN}},
                    {"method": "initialize"}, None, []]:
        assert remote.authorized(message, TOKEN) is False, message


def test_a_refused_request_gets_an_invalid_request_error_a_notification_nothing():
    assert json.loads(remote.refusal(initialize(id=7))) == {
        "jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": remote.REFUSAL}}
    assert remote.refusal({"jsonrpc": "2.0", "method": "initialized"}) is None
    assert remote.refusal(None) is None
    assert remote.REFUSAL == ("taskdsl: this server needs a token: send it as initializationOptions.token (it was "
                              "printed when the server started, or set TASKDSL_SERVER_TOKEN for both)")


def framed(data: bytes):
    async def read():
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        return await remote._read_framed(reader)

    return asyncio.run(read())


def test_the_first_message_is_read_by_its_content_length_within_bounds():
    message = frame(initialize(TOKEN))
    assert framed(message + b"more") == (message, initialize(TOKEN))
    lower = message.replace(b"Content-Length", b"content-length")
    assert framed(b"Content-Type: application/vscode-jsonrpc\r\n" + lower) == (
        b"Content-Type: application/vscode-jsonrpc\r\n" + lower, initialize(TOKEN))
    assert framed(b"Content-Length: 5\r\n\r\n[1,2]") == (b"Content-Length: 5\r\n\r\n[1,2]", None)  # not an object
    assert framed(b"Content-Length: 3\r\n\r\n{{{") == (b"Content-Length: 3\r\n\r\n{{{", None)  # not JSON
    assert framed(b"\r\n{}") is None  # no length
    assert framed(b"") is None  # closed at once
    assert framed(b"Content-Length: 2\r\n") is None  # closed within the headers
    assert framed(b"X-Padding: " + b"x" * 9000 + b"\r\n" + message) is None  # headers past 8 KiB
    big = remote.MAX_FIRST_MESSAGE + 1
    assert framed(b"Content-Length: %d\r\n\r\n" % big + b" " * big) is None  # past 1 MiB: not even read
    at_limit = b"{" + b" " * (remote.MAX_FIRST_MESSAGE - 2) + b"}"
    assert framed(b"Content-Length: %d\r\n\r\n" % len(at_limit) + at_limit)[1] == {}


def test_what_was_read_is_given_back_to_the_server_then_the_rest():
    async def replay():
        reader = asyncio.StreamReader()
        reader.feed_data(b"world\nand more")
        reader.feed_eof()
        again = remote._Replay(b"head: 1\r\n\r\nhello ", reader)
        return [await again.readline(), await again.readline(), await again.readexactly(3),
                await again.readline(), await again.readexactly(4), await again.readexactly(4)]

    assert asyncio.run(replay()) == [b"head: 1\r\n", b"\r\n", b"hel", b"lo ", b"worl", b"d\nan"]


@pytest.fixture
def tcp_server(monkeypatch):
    """serve_tcp on a free loopback port in a thread of this process, with a fresh server."""
    from taskdsl.lsp.server import TaskdslServer

    monkeypatch.setenv("TASKDSL_SERVER_TOKEN", TOKEN)
    monkeypatch.setattr(remote, "FIRST_MESSAGE_TIMEOUT", 1.0)
    ports = []
    announced = threading.Event()

    def announce(transport, host, port, token, generated):
        ports.append(port)
        announced.set()

    monkeypatch.setattr(remote, "announce", announce)
    server = TaskdslServer()
    thread = serving(remote.serve_tcp, server)
    thread.start()
    assert announced.wait(30)
    yield ports[0], thread


def serving(serve, server):
    """serve(server, …) as a thread's target: the client's `exit` ends it with SystemExit, as it ends the process."""
    def target():
        try:
            serve(server, "127.0.0.1", 0)
        except SystemExit:
            pass

    return threading.Thread(target=target, daemon=True)


def received_until_closed(client: socket.socket, stop: bytes | None = None) -> bytes:
    received = b""
    try:
        while chunk := client.recv(65536):
            received += chunk
            if stop and stop in received:
                break
    except (socket.timeout, ConnectionResetError):
        pass
    return received


def test_one_client_with_the_token_is_served_others_are_refused_or_closed(tcp_server):
    port, thread = tcp_server
    with socket.create_connection(("127.0.0.1", port), timeout=20) as stranger:
        stranger.sendall(frame(initialize("wrong")))
        answer = received_until_closed(stranger)
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert answer.startswith(b"Content-Length: %d\r\n\r\n" % len(answer.split(b"\r\n\r\n", 1)[1]))
    assert body == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": remote.REFUSAL}}
    with socket.create_connection(("127.0.0.1", port), timeout=20) as silent:
        assert received_until_closed(silent) == b""  # nothing sent: closed after the first-message timeout
    with socket.create_connection(("127.0.0.1", port), timeout=20) as garbage:
        garbage.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert received_until_closed(garbage) == b""  # not framed: closed without an answer
    with socket.create_connection(("127.0.0.1", port), timeout=20) as client:
        client.sendall(frame(initialize(TOKEN)))
        assert b'"capabilities"' in received_until_closed(client, stop=b'"capabilities"')
        with socket.create_connection(("127.0.0.1", port), timeout=20) as second:
            second.sendall(frame(initialize(TOKEN)))
            assert received_until_closed(second) == b""  # one client at a time
        client.sendall(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        assert b'"id": 2' in received_until_closed(client, stop=b'"id": 2')
        client.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        thread.join(30)
    assert not thread.is_alive()  # the client left: the server stopped


def test_ws_serves_one_client_with_the_token_and_refuses_others(monkeypatch):
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from taskdsl.lsp.server import TaskdslServer

    monkeypatch.setenv("TASKDSL_SERVER_TOKEN", TOKEN)
    ports, announced = [], threading.Event()
    monkeypatch.setattr(remote, "announce", lambda transport, host, port, token, generated: (
        ports.append((transport, port)), announced.set()))
    thread = serving(remote.serve_ws, TaskdslServer())
    thread.start()
    assert announced.wait(30)
    transport, port = ports[0]
    assert transport == "ws"

    async def session():
        async with connect(f"ws://127.0.0.1:{port}") as stranger:
            await stranger.send(json.dumps(initialize("wrong")))
            refused = json.loads(await stranger.recv())
            try:
                await stranger.recv()
                closed = False
            except ConnectionClosed:
                closed = True
        async with connect(f"ws://127.0.0.1:{port}") as client:
            await client.send(json.dumps(initialize(TOKEN)))
            accepted = json.loads(await client.recv())
            async with connect(f"ws://127.0.0.1:{port}") as second:
                try:
                    await second.send(json.dumps(initialize(TOKEN)))
                    await second.recv()
                    second_closed = False
                except ConnectionClosed:
                    second_closed = True
            await client.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            shutdown = json.loads(await client.recv())
            await client.send(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
        return refused, closed, accepted, second_closed, shutdown

    refused, closed, accepted, second_closed, shutdown = asyncio.run(session())
    assert refused == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": remote.REFUSAL}}
    assert closed and second_closed
    assert accepted["id"] == 1 and "capabilities" in accepted["result"]
    assert shutdown["id"] == 2
    thread.join(30)
    assert not thread.is_alive()


@pytest.fixture
def ws_server(monkeypatch):
    """serve_ws on a loopback port in a thread of this process, with a fresh server: (port, thread, what it
    announced)."""
    from taskdsl.lsp.server import TaskdslServer

    monkeypatch.setenv("TASKDSL_SERVER_TOKEN", TOKEN)
    monkeypatch.setattr(remote, "FIRST_MESSAGE_TIMEOUT", 1.0)
    announced, ready = [], threading.Event()
    monkeypatch.setattr(remote, "announce", lambda *args: (announced.append(args), ready.set()))
    port = free_port()
    thread = threading.Thread(target=lambda: serve_quietly(remote.serve_ws, TaskdslServer(), port), daemon=True)
    thread.start()
    assert ready.wait(30)
    yield port, thread, announced


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_quietly(serve, server, port):
    try:
        serve(server, "127.0.0.1", port)
    except SystemExit:
        pass


def test_ws_listens_on_the_port_given_and_announces_it_with_the_token_source(ws_server):
    port, _, announced = ws_server
    assert announced == [("ws", "127.0.0.1", port, TOKEN, False)]


def test_ws_closes_a_silent_connection_after_the_first_message_timeout(ws_server):
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    port, _, _ = ws_server

    async def silent():
        async with connect(f"ws://127.0.0.1:{port}") as client:
            try:
                await asyncio.wait_for(client.recv(), 20)
            except ConnectionClosed:
                return "closed"
            except asyncio.TimeoutError:
                return "still open after 20 s"

    assert asyncio.run(silent()) == "closed"


def test_ws_serves_a_first_message_of_exactly_the_size_limit_and_logs_each_refusal(ws_server, caplog):
    from websockets.asyncio.client import connect

    port, thread, _ = ws_server
    body = json.dumps(initialize(TOKEN)).encode()
    padded = body[:-1] + b" " * (remote.MAX_FIRST_MESSAGE - len(body)) + b"}"
    assert len(padded) == remote.MAX_FIRST_MESSAGE

    async def session():
        async with connect(f"ws://127.0.0.1:{port}") as stranger:
            await stranger.send(json.dumps(initialize("wrong")))
            refused = json.loads(await stranger.recv())
        async with connect(f"ws://127.0.0.1:{port}", max_size=None) as client:
            await client.send(padded)
            accepted = json.loads(await client.recv())
            await client.send("this is not JSON")  # after initialize: the server says so to the client
            shown = json.loads(await asyncio.wait_for(client.recv(), 20))
        return refused, accepted, shown

    refused, accepted, shown = asyncio.run(session())
    assert refused["error"]["message"] == remote.REFUSAL
    assert accepted["id"] == 1 and "capabilities" in accepted["result"]
    assert shown["method"] == "window/showMessage" and shown["params"]["type"] == 1
    assert ("taskdsl.lsp.remote", 30, "a connection without the server's token was closed") in caplog.record_tuples
    thread.join(30)
    assert not thread.is_alive()  # the client left without `exit`: the server stopped


def test_tcp_stops_when_its_client_leaves_without_exit(tcp_server):
    port, thread = tcp_server
    with socket.create_connection(("127.0.0.1", port), timeout=20) as client:
        client.sendall(frame(initialize(TOKEN)))
        assert b'"capabilities"' in received_until_closed(client, stop=b'"capabilities"')
        client.sendall(b"Content-Length: 16\r\n\r\nthis is not JSON")
        assert b'"window/showMessage"' in received_until_closed(client, stop=b'"window/showMessage"')
    thread.join(30)
    assert not thread.is_alive()


@pytest.mark.parametrize("given, seconds", [
    (None, 30.0), ("", 30.0), ("abc", 30.0), ("5", 5.0), ("0.5", 0.5), ("3600", 3600.0), ("3600.5", 30.0),
    ("0", 30.0), ("-1", 30.0),
])
def test_the_first_message_timeout_is_the_variable_between_0_and_an_hour_else_30_seconds(monkeypatch, given, seconds):
    if given is None:
        monkeypatch.delenv("TASKDSL_SERVER_FIRST_MESSAGE_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("TASKDSL_SERVER_FIRST_MESSAGE_TIMEOUT", given)
    assert remote.first_message_timeout() == seconds


def test_the_first_message_may_have_8_kib_of_headers_before_its_last_line():
    """The headers read so far may reach 8,192 bytes; past that the next line is not read."""
    body = json.dumps(initialize(TOKEN)).encode()
    length = b"Content-Length: %d\r\n" % len(body)
    for size, accepted in [(8192, True), (8193, False)]:
        padding = b"X-Padding: " + b"x" * (size - len(length) - len(b"X-Padding: \r\n")) + b"\r\n"
        assert len(padding + length) == size
        message = padding + length + b"\r\n" + body
        assert framed(message) == ((message, initialize(TOKEN)) if accepted else None), size


def test_the_replay_gives_a_leading_empty_line_alone_and_reads_the_rest_of_a_partial_body():
    async def replay():
        reader = asyncio.StreamReader()
        reader.feed_data(b"cdef")
        reader.feed_eof()
        again = remote._Replay(b"\nab", reader)
        return [await again.readline(), await again.readexactly(4), await again.readexactly(2)]

    assert asyncio.run(replay()) == [b"\n", b"abcd", b"ef"]


def test_tcp_listens_on_the_port_given_announces_it_and_closes_a_silent_connection(monkeypatch, caplog):
    from taskdsl.lsp.server import TaskdslServer

    monkeypatch.setenv("TASKDSL_SERVER_TOKEN", TOKEN)
    monkeypatch.setattr(remote, "FIRST_MESSAGE_TIMEOUT", 1.0)
    announced, ready = [], threading.Event()
    monkeypatch.setattr(remote, "announce", lambda *args: (announced.append(args), ready.set()))
    port = free_port()
    thread = threading.Thread(target=lambda: serve_quietly(remote.serve_tcp, TaskdslServer(), port), daemon=True)
    thread.start()
    assert ready.wait(30)
    assert announced == [("tcp", "127.0.0.1", port, TOKEN, False)]
    for send in [b"", b"Content-Length: 10\r\n"]:  # nothing; headers never ended
        with socket.create_connection(("127.0.0.1", port), timeout=20) as silent:
            silent.sendall(send)
            assert silent.recv(100) == b""  # closed by the server (a socket.timeout here: left open)
    assert caplog.record_tuples.count(
        ("taskdsl.lsp.remote", 30, "a connection without the server's token was closed")) == 2
    with socket.create_connection(("127.0.0.1", port), timeout=20) as client:
        client.sendall(frame(initialize(TOKEN)))
        assert b'"capabilities"' in received_until_closed(client, stop=b'"capabilities"')
    thread.join(30)
    assert not thread.is_alive()
