"""The proxy as a process under abuse: ``kill -9`` leaves no orphan, and its output lines cannot be forged.

The real ``callscope proxy`` command on 127.0.0.1 (an upstream that is not there: every exchange is a 502).
After a ``kill -9`` its verdict worker and the ``resource_tracker`` must end too; a model name full of newlines
and escape codes is one escaped line on stdout, in text and in ``--json``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

NOWHERE = "http://127.0.0.1:9"
HOSTILE = "evil\n#99 POST /forged line\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"
CALLSCOPE = Path(sys.executable).with_name("callscope")


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rpartition(")")[2].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                kids.append(int(entry.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_after_kill_9_of_the_proxy_its_worker_and_resource_tracker_end_too():
    proxy = subprocess.Popen([str(CALLSCOPE), "proxy", "--upstream", NOWHERE, "--listen", "127.0.0.1:0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening on" in proxy.stderr.readline()
        deadline = time.monotonic() + 20
        while len(_children(proxy.pid)) < 2 and time.monotonic() < deadline:  # the worker and the resource_tracker
            time.sleep(0.05)
        kids = _children(proxy.pid)
        assert len(kids) >= 2, kids
    finally:
        proxy.kill()
        proxy.wait(10)
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [k for k in kids if _alive(k)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "orphans outlived the proxy"


def test_the_proxy_cli_prints_one_escaped_line_per_turn(tmp_path):
    for extra in ([], ["--json"]):
        proxy = subprocess.Popen([str(CALLSCOPE), "proxy", "--upstream", NOWHERE, "--listen", "127.0.0.1:0", *extra],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            port = re.search(rb"127\.0\.0\.1:(\d+)", proxy.stderr.readline()).group(1).decode()
            httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={"model": HOSTILE, "messages": []})
            line = proxy.stdout.readline()
        finally:
            proxy.send_signal(signal.SIGTERM)
            proxy.wait(20)
        rest = proxy.stdout.read()
        assert rest == b"", rest  # one line for the one turn: nothing forged after it
        for raw in (b"\x1b", b"\x07", b"\xc2\x9b", "\u202e".encode()):
            assert raw not in line, line
        if extra:
            assert json.loads(line)["model"] == HOSTILE  # the JSON line means the same, written safely
        else:
            assert line.startswith(b"#1 POST /v1/chat/completions evil\\n#99 POST /forged line\\x1b]0;"), line
