"""A secret never reaches the server's log: neither the window/logMessage lines the editor shows (each
step's line previews its output, the first names the file) nor what the server writes on stderr, where
--log-level DEBUG writes every message it sends (a diagnostic quoting the user's text included). A real
`taskdsl serve` over stdio; each assertion fails with its guard removed (the log filter, the masking of
log lines)."""

import json
import os
import subprocess
import sys
import threading

from taskdsl.lsp.run import RUN

SECRET = "Zq8-Secret.Value_42"


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream) -> dict | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def test_a_secret_a_run_prints_is_masked_in_log_messages_and_the_server_log(tmp_path):
    (tmp_path / "taskdsl.toml").write_text("", encoding="utf-8")
    # the secret in the file's name too: the request that names it (logged at DEBUG) and the run's first log line
    # ("running 'leak' (PATH)") carry it as they are, unlike the step's output, which the run masks itself
    path = tmp_path / f"{SECRET}.task.xml"
    path.write_text('<task type="script" name="leak"><command>printf \'%s\\n\' "$DB_PASSWORD"</command></task>\n',
                    encoding="utf-8")
    server = subprocess.Popen([sys.executable, "-m", "taskdsl", "serve", "--log-level", "DEBUG"], cwd=tmp_path,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env={**os.environ, "DB_PASSWORD": SECRET})
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(server.stderr.read()), daemon=True)
    reader.start()
    settings = {"model": "taskdsl/echo", "trace": {"dir": str(tmp_path / "runs")}}
    logged, published, answer = [], [], None
    try:
        server.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {"workspace": {"configuration": True}},
            "workspaceFolders": [{"uri": tmp_path.as_uri(), "name": "ws"}]}}))
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        # a document that names the secret: its diagnostic quotes it to the editor (the user's own text), and
        # the DEBUG log of that message must not
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": (tmp_path / "names.task.xml").as_uri(), "languageId": "taskdsl", "version": 1,
            "text": f'<task ref="{SECRET}"/>\n'}}}))
        server.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": {
            "command": "taskdsl.runTask", "arguments": [{"uri": path.as_uri(), "wait": True}]}}))
        server.stdin.flush()
        while answer is None or not any("names.task.xml" in text and '"diagnostics": [{' in text for text in published):
            message = read_message(server.stdout)
            assert message is not None, b"".join(errors).decode()[-2000:]
            if message.get("method") == "textDocument/publishDiagnostics":
                published.append(json.dumps(message))
            if message.get("method") == "window/logMessage":
                logged.append(message["params"]["message"])
            elif "method" in message and "id" in message:  # a request of the server's: configuration, progress
                result = None
                if message["method"] == "workspace/configuration":
                    result = [settings] * len(message["params"]["items"])
                elif message["method"] == "window/showMessageRequest":  # the run's consent: agree
                    result = {"title": RUN}
                server.stdin.write(frame({"jsonrpc": "2.0", "id": message["id"], "result": result}))
                server.stdin.flush()
            elif message.get("id") == 2:
                answer = message
        server.stdin.write(frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}))
        server.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
        server.stdin.flush()
        server.wait(timeout=60)
    finally:
        server.kill()
        reader.join(timeout=60)
    log = b"".join(errors).decode()
    assert answer["result"]["status"] == "COMPLETE", answer
    steps = [line for line in logged if "leak (script" in line]
    assert steps and all(line.endswith(": ***") for line in steps), logged  # the step's line previews the output
    assert all(SECRET not in line for line in logged)
    assert any(line.startswith("[run 1] running 'leak' (") and line.endswith("/***.task.xml)") for line in logged)
    assert "workspace/executeCommand" in log  # --log-level DEBUG writes the messages
    assert any(SECRET in text for text in published)  # the diagnostic the editor got quotes the reference
    assert "textDocument/publishDiagnostics" in log  # and the log wrote that message, masked:
    assert SECRET not in log and "***" in log
