"""`taskdsl serve --tcp/--ws`: the language server on a socket, for one client that holds a token.

A socket is open to every process of the machine (and to the network when a host is given),
and the server runs scripts when asked to run a task. So a connection must prove it holds the
token (TASKDSL_SERVER_TOKEN, or a random one printed on stderr at start) in the first message,
`initialize`, as `initializationOptions.token`. Nothing of a connection reaches the language
server before that: the first message is read and judged here; a connection without the token
gets an error answer and is closed, and the server keeps waiting for its client. The first
client that passes is served; when it leaves, the server stops (as pygls's own serving does).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import re
import secrets
import sys
import threading
from taskdsl.support import jsontext

log = logging.getLogger(__name__)

TOKEN_VARIABLE = "TASKDSL_SERVER_TOKEN"
FIRST_MESSAGE_TIMEOUT = 30.0  # seconds a connection may take to send `initialize`
TIMEOUT_VARIABLE = "TASKDSL_SERVER_FIRST_MESSAGE_TIMEOUT"  # another limit for it (seconds)


def first_message_timeout() -> float:
    "Seconds a connection may stay silent before it is closed: TASKDSL_SERVER_FIRST_MESSAGE_TIMEOUT, else 30."
    try:
        given = float(os.environ.get(TIMEOUT_VARIABLE, ""))
    except ValueError:
        return FIRST_MESSAGE_TIMEOUT
    return given if 0 < given <= 3600 else FIRST_MESSAGE_TIMEOUT
MAX_FIRST_MESSAGE = 1 << 20  # bytes: an `initialize` is a few kilobytes
_LENGTH = re.compile(rb"^Content-Length: (\d+)\r\n$", re.I)
REFUSAL = (f"taskdsl: this server needs a token: send it as initializationOptions.token (it was printed when "
           f"the server started, or set {TOKEN_VARIABLE} for both)")


def server_token() -> tuple[str, bool]:
    """(token, whether it was generated here)."""
    given = os.environ.get(TOKEN_VARIABLE, "")
    return (given, False) if given else (secrets.token_urlsafe(24), True)


def announce(transport: str, host: str, port: int, token: str, generated: bool) -> None:
    where = f"{transport}://{host}:{port}"
    if generated:
        print(f"taskdsl: serving on {where}; clients send initializationOptions.token = {token}", file=sys.stderr,
              flush=True)
    else:
        print(f"taskdsl: serving on {where}; clients send the token of {TOKEN_VARIABLE}", file=sys.stderr,
              flush=True)


def authorized(message: dict | None, token: str) -> bool:
    """Whether the first message is `initialize` carrying the token."""
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return False
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    given = options.get("token") if isinstance(options, dict) else None
    return isinstance(given, str) and hmac.compare_digest(given.encode(), token.encode())


def refusal(message: dict | None) -> bytes | None:
    "The JSON-RPC error answer to a refused request (None for a notification or garbage)."
    if not isinstance(message, dict) or "id" not in message:
        return None
    return json.dumps({"jsonrpc": "2.0", "id": message["id"],
                       "error": {"code": -32600, "message": REFUSAL}}).encode()


def _parse(body: bytes) -> dict | None:
    try:
        value = jsontext.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def _read_framed(reader: asyncio.StreamReader) -> tuple[bytes, dict | None] | None:
    """One Content-Length framed message: (its raw bytes, headers included; parsed body)."""
    raw, length = b"", None
    while True:
        line = await reader.readline()
        if not line or len(raw) > 8192:
            return None
        raw += line
        match = _LENGTH.fullmatch(line)
        if match:
            length = int(match.group(1))
        elif not line.strip():
            break
    if length is None or length > MAX_FIRST_MESSAGE:
        return None
    body = await reader.readexactly(length)
    return raw + body, _parse(body)


class _Replay:
    """A stream reader that gives back the bytes already read, then reads on."""

    def __init__(self, first: bytes, reader: asyncio.StreamReader):
        self.buffer, self.reader = first, reader

    async def readline(self) -> bytes:
        if self.buffer:
            end = self.buffer.find(b"\n")
            end = len(self.buffer) if end < 0 else end + 1
            line, self.buffer = self.buffer[:end], self.buffer[end:]
            return line
        return await self.reader.readline()

    async def readexactly(self, n: int) -> bytes:
        taken, self.buffer = self.buffer[:n], self.buffer[n:]
        return taken + (await self.reader.readexactly(n - len(taken)) if len(taken) < n else b"")


def serve_tcp(server, host: str, port: int) -> None:
    from pygls.io_ import run_async

    token, generated = server_token()
    server._stop_event = stop = threading.Event()
    state: dict = {"busy": False, "done": None}

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if state["busy"]:  # one client: the server's state is the editor's
            writer.close()
            return
        try:
            first = await asyncio.wait_for(_read_framed(reader), first_message_timeout())
        except (asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError):
            first = None
        if first is None or not authorized(first[1], token):
            log.warning("a connection without the server's token was closed")
            answer = refusal(first[1] if first else None)
            if answer is not None:
                writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer))
                await writer.drain()
            writer.close()
            return
        state["busy"] = True
        server.protocol.set_writer(writer)
        try:
            await run_async(stop_event=stop, reader=_Replay(first[0], reader), protocol=server.protocol,
                            logger=log, error_handler=server.report_server_error)
        except SystemExit:  # the client's `exit`
            pass
        finally:
            server.shutdown()
            state["done"].set()

    async def main() -> None:
        state["done"] = asyncio.Event()
        listening = await asyncio.start_server(connection, host, port)
        announce("tcp", host, listening.sockets[0].getsockname()[1], token, generated)
        async with listening:
            await state["done"].wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


class _FirstAgain:
    """A websocket whose first message (already read) is received again, then the others."""

    def __init__(self, first: bytes, websocket):
        self.first, self.websocket = first, websocket

    async def recv(self, decode: bool | None = None):
        if self.first is not None:
            first, self.first = self.first, None
            return first
        return await self.websocket.recv(decode=decode)

    def send(self, data):
        return self.websocket.send(data)

    def close(self):
        return self.websocket.close()


def serve_ws(server, host: str, port: int) -> None:
    from pygls.io_ import run_websocket
    from websockets.asyncio.server import serve
    from websockets.exceptions import ConnectionClosed

    token, generated = server_token()
    server._stop_event = stop = threading.Event()
    state = {"busy": False, "done": None}

    async def connection(websocket) -> None:
        if state["busy"]:
            await websocket.close()
            return
        try:
            first = await asyncio.wait_for(websocket.recv(decode=False), first_message_timeout())
        except (asyncio.TimeoutError, ConnectionClosed):
            await websocket.close()
            return
        message = _parse(first) if len(first) <= MAX_FIRST_MESSAGE else None
        if not authorized(message, token):
            log.warning("a connection without the server's token was closed")
            answer = refusal(message)
            if answer is not None:
                await websocket.send(answer)
            await websocket.close()
            return
        state["busy"] = True
        try:
            await run_websocket(websocket=_FirstAgain(first, websocket), stop_event=stop,
                                protocol=server.protocol, logger=log, error_handler=server.report_server_error)
        except SystemExit:  # the client's `exit`
            pass
        finally:
            server.shutdown()
            state["done"].set()

    async def main() -> None:
        state["done"] = asyncio.Event()
        async with serve(connection, host, port) as listening:
            bound = listening.sockets[0].getsockname() if listening.sockets else (host, port)
            announce("ws", host, bound[1], token, generated)
            await state["done"].wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
