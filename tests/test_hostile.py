"""Hostile input through `taskdsl check`, in a subprocess with a timeout: each gets a clear
diagnostic (or a clean result), never a traceback, a hang, a file read or a connection."""

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

TIMEOUT = 60

# Runs the command line in-process and reports its peak memory on the last stderr line.
# VmHWM is the peak of this process's own address space; ru_maxrss is not: Linux carries the
# parent's high-water mark across fork+exec, so it would report pytest's size.
MEASURED = (
    "import sys\n"
    "from taskdsl.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
    "print('MAXRSS_KB', hwm, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def check(*paths, cwd=None) -> subprocess.CompletedProcess:
    completed = subprocess.run([sys.executable, "-c", MEASURED, "check", *map(str, paths)],
                               capture_output=True, text=True, timeout=TIMEOUT, cwd=cwd)
    assert "Traceback" not in completed.stderr, completed.stderr
    assert completed.returncode in (0, 1), completed.stderr
    return completed


def peak_mb(completed) -> float:
    line = completed.stderr.strip().splitlines()[-1]
    assert line.startswith("MAXRSS_KB ")
    return int(line.split()[1]) / 1024


def lines_of(completed) -> list[str]:
    return completed.stdout.splitlines()


def test_billion_laughs(tmp_path):
    entities = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol%s;" % ("" if i == 1 else i - 1)) * 10}">' for i in range(1, 10)]
    text = f'<?xml version="1.0"?>\n<!DOCTYPE task [\n{chr(10).join(entities)}\n]>\n<task><description>&lol9;</description></task>\n'
    path = tmp_path / "laughs.task.xml"
    path.write_text(text)
    completed = check(path)
    assert completed.returncode == 1
    assert lines_of(completed)[0] == (f"{path}:2:1: error TD001 DOCTYPE declarations are not allowed in templates: "
                                      "remove it (entities and DTDs are never loaded)")
    assert "lollol" not in completed.stdout
    assert peak_mb(completed) < 200


def test_undeclared_entity_is_not_expanded(tmp_path):
    path = tmp_path / "entity.task.xml"
    path.write_text("<task><description>&lol9;</description></task>\n")
    completed = check(path)
    assert completed.returncode == 1
    [line] = lines_of(completed)
    assert line.startswith(f"{path}:1:") and " error TD001 " in line and "&lol9;" in line


def _fifo_opened_by_reader(fifo: str, stop: threading.Event, seen: list) -> None:
    """Opening a FIFO for writing without blocking fails (ENXIO) until someone opens it to read."""
    while not stop.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.005)
            continue
        seen.append(True)
        os.close(fd)
        return


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_external_entities_are_never_read(tmp_path):
    fifo = str(tmp_path / "watched")
    os.mkfifo(fifo)
    files = []
    for number, target in enumerate(["file:///etc/passwd", f"file://{fifo}", fifo]):
        path = tmp_path / f"xxe{number}.task.xml"
        path.write_text(f'<!DOCTYPE task [<!ENTITY xxe SYSTEM "{target}">]>\n'
                        "<task><description>&xxe;</description></task>\n")
        files.append(path)
    parameter = tmp_path / "xxe_param.task.xml"
    parameter.write_text(f'<!DOCTYPE task [<!ENTITY % p SYSTEM "{fifo}"> %p;]>\n<task><description>x</description></task>\n')
    files.append(parameter)
    stop, seen = threading.Event(), []
    watcher = threading.Thread(target=_fifo_opened_by_reader, args=(fifo, stop, seen), daemon=True)
    watcher.start()
    try:
        completed = check(*files)
    finally:
        stop.set()
        watcher.join(5)
    assert seen == [], "the checker opened the external entity's file"
    assert "root:" not in completed.stdout + completed.stderr
    for path in files:
        assert f"{path}:1:1: error TD001 DOCTYPE declarations are not allowed" in completed.stdout


class RecordingListener:
    """A socket on 127.0.0.1 that records every connection made to it (by the peer's port)."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(8)
        self.server.settimeout(0.05)
        self.port = self.server.getsockname()[1]
        self.peers: list[int] = []
        self.accepted = threading.Condition()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self):
        while not self.stop.is_set():
            try:
                connection, peer = self.server.accept()
            except OSError:
                continue
            connection.close()
            with self.accepted:
                self.peers.append(peer[1])
                self.accepted.notify_all()

    def connections_before_now(self) -> int:
        """How many connections were made before this call: one of our own is made now and,
        once it is accepted, every earlier one (queued before it) has been counted."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as sentinel:
            mine = sentinel.getsockname()[1]
        with self.accepted:
            assert self.accepted.wait_for(lambda: mine in self.peers, timeout=30), "the listener stopped accepting"
            return self.peers.index(mine)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(5)
        self.server.close()


def test_no_network_for_dtds_schema_hints_or_xinclude(tmp_path):
    with RecordingListener() as listener:
        url = f"http://127.0.0.1:{listener.port}"
        templates = {
            "dtd.task.xml": f'<!DOCTYPE task SYSTEM "{url}/task.dtd">\n<task><description>x</description></task>\n',
            "public.task.xml": f'<!DOCTYPE task PUBLIC "-//x//EN" "{url}/p.dtd">\n<task><description>x</description></task>\n',
            "hint.task.xml": ('<task xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
                              f'xsi:noNamespaceSchemaLocation="{url}/task.xsd"><description>x</description></task>\n'),
            "hint2.task.xml": ('<task xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
                               f'xsi:schemaLocation="urn:x {url}/x.xsd"><description>x</description></task>\n'),
            "xinclude.task.xml": ('<task xmlns:xi="http://www.w3.org/2001/XInclude"><description>x</description>'
                                  f'<xi:include href="{url}/part.xml"/></task>\n'),
            "stylesheet.task.xml": f'<?xml-stylesheet href="{url}/s.xsl"?>\n<task><description>x</description></task>\n',
        }
        for name, text in templates.items():
            (tmp_path / name).write_text(text)
        completed = check(*sorted(tmp_path.iterdir()))
        assert listener.connections_before_now() == 0
    out = completed.stdout
    assert f"{tmp_path / 'dtd.task.xml'}:1:1: error TD001 DOCTYPE" in out
    assert f"{tmp_path / 'xinclude.task.xml'}:1:" in out and "TD101 <xi:include> is not allowed in <task>" in out


def test_deep_nesting(tmp_path):
    depth = 100_000
    path = tmp_path / "deep.task.xml"
    path.write_text("<task>" * depth + "</task>" * depth + "\n")
    completed = check(path)
    assert completed.returncode == 1
    [line] = lines_of(completed)
    assert line == f"{path}:1:1202: error TD001 elements are nested more than 200 deep: templates this deep are refused"


def test_fifty_megabytes_finish_with_bounded_memory(tmp_path):
    path = tmp_path / "huge.task.xml"
    step = "<task><description>step</description></task>\n"
    with path.open("w") as handle:
        handle.write('<task type="sequential">\n<description>huge</description>\n<steps>\n')
        for _ in range(50_000_000 // len(step)):
            handle.write(step)
        handle.write("</steps>\n</task>\n")
    completed = check(path)
    assert completed.returncode == 1
    assert lines_of(completed) == [f"{path}:1:1: error TD001 the file is 50.0 MB: templates larger than 5 MB are not read"]
    assert peak_mb(completed) < 500


def test_invalid_utf8(tmp_path):
    path = tmp_path / "bytes.task.xml"
    # a lone continuation byte, an overlong '/', an encoded surrogate
    path.write_bytes(b"<task>\n  <description>a\x80b \xc0\xaf \xed\xa0\x80</description>\n</task>\n")
    completed = check(path)
    assert completed.returncode == 1
    assert lines_of(completed)[0] == (f"{path}:2:17: error TD001 not valid UTF-8 at byte 23 (0x80): templates are UTF-8; "
                                      "the undecodable bytes are shown as U+FFFD")


def test_nul_bytes(tmp_path):
    path = tmp_path / "nul.task.xml"
    path.write_bytes(b"<task>\n  <description>a\x00b</description>\n</task>\n")
    completed = check(path)
    assert lines_of(completed) == [f"{path}:1:1: error TD001 binary file (a NUL byte at byte 23): this is not a template"]


def test_control_characters(tmp_path):
    path = tmp_path / "control.task.xml"
    path.write_bytes(b"<task>\n  <description>a\x01b</description>\n</task>\n")
    completed = check(path)
    [line] = lines_of(completed)
    assert line.startswith(f"{path}:2:") and " error TD001 " in line


def test_one_megabyte_single_line(tmp_path):
    path = tmp_path / "line.task.xml"
    words = "word " * 200_000
    prefix = f"<task><description>{words}</description>"
    path.write_text(prefix + "<modle>m</modle></task>")
    completed = check(path)
    assert completed.returncode == 1
    [line] = lines_of(completed)
    assert line.startswith(f"{path}:1:{len(prefix) + 2}: error TD101 <modle> is not allowed in <task> (did you mean <model>?)")
    assert peak_mb(completed) < 500


def test_an_empty_file_and_a_text_file(tmp_path):
    empty = tmp_path / "empty.task.xml"
    empty.write_text("")
    prose = tmp_path / "prose.task.xml"
    prose.write_text("just some words\n")
    completed = check(empty, prose)
    assert completed.returncode == 1
    out = lines_of(completed)
    assert out[0] == f"{empty}:1:1: error TD001 the file holds no element: a template needs one root element such as <task>"
    assert out[1].startswith(f"{prose}:1:1: error TD001 ")
