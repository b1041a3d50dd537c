"""The real client libraries, pointed at the quirks library over HTTP on 127.0.0.1: what each one ends with.

Used by the differential test (``tests/system/test_differential.py``) and by
``scripts/make_quirks.py --record``, which stores the outcomes in the fixtures.

- Serving: :func:`serving` runs ``callscope serve --quirks`` (its server, in a thread) on 127.0.0.1: one URL, the
  request's ``model`` picks the quirk, as a client developer's own test suite would use it.
- Python libraries (``openai``, ``langchain-openai``, ``anthropic``, from the ``dev`` extra) run in this process.
- npm libraries run in one ``node`` process per library, every quirk in one batch: the drivers in
  ``tests/support/node/*.mjs``, installed with the lockfile's packages by ``make node-clients``
  (``scripts/node_clients.sh``) into ``~/.cache/callscope/node/<lockfile hash>/``.

An outcome is ``{"calls": [{"id", "name", "arguments", "invalid"?}]}`` or ``{"raises": "Type: message"}``:
``arguments`` is the text the client holds (JSON text for clients that keep parsed values); ``invalid`` marks a
call the library itself flags as unusable (LangChain's ``invalid_tool_calls``, the AI SDK's invalid tool calls).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callscope.engine.core.shipped import fixtures_dir
from callscope.engine.recordings.trace import Trace, read_trace

HERE = Path(__file__).resolve().parent
NODE_DIR = HERE / "node"
ROOT = HERE.parent.parent
Outcome = dict[str, Any]


@dataclass(frozen=True)
class QuirkStream:
    id: str
    protocol: str
    trace: Trace

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.trace.header.tools or []

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.trace.header.messages or [{"role": "user", "content": "hi"}]


def quirks(ids: list[str] | None = None) -> list[QuirkStream]:
    """The shipped quirks (all, or those named), in name order."""
    found = []
    for path in sorted((fixtures_dir() / "quirks").glob("*.jsonl")):
        trace = read_trace(path)
        quirk = trace.header.extra["quirk"]
        if ids is None or quirk["id"] in ids:
            found.append(QuirkStream(quirk["id"], quirk["protocol"], trace))
    return found


# ====================================================================== serving


@dataclass(frozen=True)
class Endpoint:
    root: str  # the server's base URL, without /v1 (each client appends what its SDK expects)
    model: str


@contextlib.contextmanager
def serving(streams: list[QuirkStream], folder: Path | None = None) -> Iterator[Callable[[str], Endpoint]]:
    """``callscope serve --quirks`` on 127.0.0.1 (the shipped quirks library, or ``folder``; the request's ``model``
    names the quirk); yields ``endpoint(quirk_id)``."""
    from callscope.engine.serve import RecordingReplier, quirks_source
    from tests.support.serve_helpers import ServeThread

    del streams  # every quirk of the folder is served; each client asks for its own by name
    with ServeThread(RecordingReplier(quirks_source(folder or fixtures_dir() / "quirks"))) as serve:
        yield lambda quirk_id: Endpoint(serve.url, quirk_id)


# ====================================================================== outcomes


def described(exc: BaseException) -> str:
    text = str(exc).split("\n")[0][:200]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def text_of(value: Any) -> str | None:
    """Arguments as the client holds them, as text (a non-string as JSON)."""
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _guarded(run: Callable[[QuirkStream, Endpoint], Outcome]) -> Callable[[QuirkStream, Endpoint], Outcome]:
    def wrapped(stream: QuirkStream, endpoint: Endpoint) -> Outcome:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return run(stream, endpoint)
        except Exception as exc:  # what the library raised is the outcome
            return {"raises": described(exc)}
    return wrapped


@_guarded
def openai_python(stream: QuirkStream, endpoint: Endpoint) -> Outcome:
    import openai

    client = openai.OpenAI(base_url=endpoint.root + "/v1", api_key="callscope-test", max_retries=0, timeout=10)
    if stream.protocol == "responses":
        tools = [{"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"],
                  "strict": False} for t in stream.tools]
        with client.responses.stream(model=endpoint.model, input=stream.messages[0]["content"], tools=tools) as s:
            for _ in s:
                pass
            response = s.get_final_response()
        return {"calls": [_string_call(item.call_id, item.name, item.arguments)
                          for item in response.output or [] if getattr(item, "type", None) == "function_call"]}
    with client.chat.completions.stream(model=endpoint.model, messages=stream.messages, tools=stream.tools) as s:
        for _ in s:
            pass
        completion = s.get_final_completion()
    message = completion.choices[0].message if completion.choices else None
    return {"calls": [_string_call(c.id, c.function.name, c.function.arguments)
                      for c in (message.tool_calls if message is not None and message.tool_calls else [])]}


def _string_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    """A call of a library that keeps arguments as the string sent: flagged when what it holds is no string."""
    found = {"id": call_id, "name": name, "arguments": text_of(arguments)}
    if arguments is not None and not isinstance(arguments, str):
        found["not_string"] = True
    return found


@_guarded
def langchain_python(stream: QuirkStream, endpoint: Endpoint) -> Outcome:
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model=endpoint.model, base_url=endpoint.root + "/v1", api_key="callscope-test",
                       max_retries=0, timeout=10).bind_tools(stream.tools)
    full = None
    for piece in model.stream(stream.messages):
        full = piece if full is None else full + piece
    calls = [{"id": c.get("id"), "name": c.get("name"), "arguments": text_of(c.get("args"))}
             for c in (full.tool_calls if full is not None else [])]
    invalid = [{"id": c.get("id"), "name": c.get("name"), "arguments": text_of(c.get("args")), "invalid": True}
               for c in (full.invalid_tool_calls if full is not None else [])]
    return {"calls": calls + invalid}


@_guarded
def anthropic_python(stream: QuirkStream, endpoint: Endpoint) -> Outcome:
    import anthropic

    client = anthropic.Anthropic(base_url=endpoint.root, api_key="callscope-test", max_retries=0, timeout=10)
    tools = [{"name": t["function"]["name"], "description": t["function"].get("description", ""),
              "input_schema": t["function"]["parameters"]} for t in stream.tools]
    with client.messages.stream(model=endpoint.model, max_tokens=256, messages=stream.messages, tools=tools) as s:
        for _ in s:
            pass
        message = s.get_final_message()
    return {"calls": [{"id": b.id, "name": b.name, "arguments": text_of(b.input)}
                      for b in message.content or [] if b.type == "tool_use"]}


#: profile id -> (protocols it reads, how it runs): a Python callable, or the name of a node driver.
PYTHON_CLIENTS: dict[str, tuple[tuple[str, ...], Callable[[QuirkStream, Endpoint], Outcome]]] = {
    "openai-python": (("chat", "responses"), openai_python),
    "langchain-python": (("chat",), langchain_python),
    "anthropic-python": (("anthropic",), anthropic_python),
}
NODE_CLIENTS: dict[str, tuple[str, ...]] = {
    "openai-node": ("chat", "responses"),
    "ai-sdk": ("chat",),
    "langchain-js": ("chat",),
    "anthropic-ts": ("anthropic",),
}


# ====================================================================== node


def node_cache() -> Path:
    """Where ``make node-clients`` installed the lockfile's packages (the same hash as scripts/node_clients.sh)."""
    digest = hashlib.sha256((NODE_DIR / "package-lock.json").read_bytes()).hexdigest()[:16]
    base = os.environ.get("CALLSCOPE_NODE_CACHE") or str(Path.home() / ".cache" / "callscope" / "node")
    return Path(base) / digest


def node_ready() -> str | None:
    """None when node and the npm packages are there, else why not (a test skips, or fails in CI)."""
    if shutil.which("node") is None:
        return "node is not installed (make node-clients installs Debian's nodejs)"
    if not (node_cache() / ".installed").exists():
        return f"the npm client libraries are not installed in {node_cache()} (run make node-clients)"
    return None


def run_node(profile: str, jobs: list[dict[str, Any]]) -> list[Outcome]:
    """One node process for ``profile`` running every job; the drivers are copied beside the packages."""
    drivers = node_cache() / "drivers"
    drivers.mkdir(exist_ok=True)
    for script in NODE_DIR.glob("*.mjs"):
        target = drivers / script.name
        if not target.exists() or target.read_bytes() != script.read_bytes():
            shutil.copyfile(script, target)
    done = subprocess.run(["node", str(drivers / f"{profile}.mjs")], input=json.dumps(jobs), capture_output=True,
                          text=True, timeout=60 + 20 * len(jobs), cwd=drivers)
    if done.returncode != 0:
        raise RuntimeError(f"{profile} driver failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    return json.loads(done.stdout)


# ====================================================================== everything


def real_outcomes(streams: list[QuirkStream], profiles: list[str] | None = None,
                  folder: Path | None = None) -> dict[str, dict[str, Outcome]]:
    """``{quirk: {profile: outcome}}`` for every real client that reads the quirk's protocol (``folder``: where the
    quirks are, when not the shipped library)."""
    results: dict[str, dict[str, Outcome]] = {s.id: {} for s in streams}
    wanted = profiles or [*PYTHON_CLIENTS, *NODE_CLIENTS]
    with serving(streams, folder) as endpoint:
        for profile, (protocols, run) in PYTHON_CLIENTS.items():
            if profile in wanted:
                for stream in streams:
                    if stream.protocol in protocols:
                        results[stream.id][profile] = run(stream, endpoint(stream.id))
        for profile, protocols in NODE_CLIENTS.items():
            if profile not in wanted:
                continue
            mine = [s for s in streams if s.protocol in protocols]
            jobs = [{"quirk": s.id, "root": endpoint(s.id).root, "model": endpoint(s.id).model,
                     "protocol": s.protocol, "tools": s.tools, "messages": s.messages} for s in mine]
            for stream, outcome in zip(mine, run_node(profile, jobs)):
                results[stream.id][profile] = outcome
    return results


def record_outcomes(ids: list[str]) -> dict[str, dict[str, Any]]:
    """For scripts/make_quirks.py --record: every real client on every quirk named, ids the library made up
    shown as ``<generated>`` (so the stored outcomes are the same every run), and the versions measured."""
    problem = node_ready()
    if problem is not None:
        raise SystemExit(problem)
    streams = quirks(ids)
    results = real_outcomes(streams)
    versions = measured_versions()
    recorded: dict[str, dict[str, Any]] = {}
    for stream in streams:
        sent = wire_ids(stream)
        outcomes = {profile: stable(outcome, sent) if profile in MAKES_UP_IDS else outcome
                    for profile, outcome in results[stream.id].items()}
        recorded[stream.id] = {"outcomes": outcomes, "measured_with": {p: versions[p] for p in outcomes}}
    return recorded


#: The libraries that give a call without an id one of their own (random each run).
MAKES_UP_IDS = ("openai-node", "ai-sdk")


def stable(outcome: Outcome, sent: set[str]) -> Outcome:
    if "calls" not in outcome:
        return outcome
    calls = [{**c, "id": c["id"] if c["id"] is None or c["id"] in sent else GENERATED_ID_TEXT}
             for c in outcome["calls"]]
    return {"calls": calls}


#: The packages each real client is (Python distribution names, or npm package names in the lockfile).
PACKAGES: dict[str, tuple[str, ...]] = {
    "openai-python": ("openai",), "langchain-python": ("langchain-openai", "langchain-core"),
    "anthropic-python": ("anthropic",), "openai-node": ("openai",), "ai-sdk": ("ai", "@ai-sdk/openai-compatible"),
    "langchain-js": ("@langchain/openai", "@langchain/core"), "anthropic-ts": ("@anthropic-ai/sdk",),
}


def measured_versions() -> dict[str, str]:
    """``profile -> "package version, ..."`` as installed for this run."""
    from importlib.metadata import version

    lock = json.loads((NODE_DIR / "package-lock.json").read_text())["packages"]
    found = {}
    for profile, packages in PACKAGES.items():
        if profile in PYTHON_CLIENTS:
            found[profile] = ", ".join(f"{p} {version(p)}" for p in packages)
        else:
            found[profile] = ", ".join(f"{p} {lock[f'node_modules/{p}']['version']}" for p in packages)
    return found


# ====================================================================== what the profiles predict


def stream_events(stream: QuirkStream) -> list[tuple[int, Any, Any]]:
    """The quirk's dispatched events with their decoded JSON, as the capture analyzer hands them to profiles."""
    from callscope.engine.core.json_text import loads
    from callscope.engine.streams.clients import NOT_JSON
    from callscope.engine.streams.sse import EVENTS, read_events

    found = []
    for step, event in enumerate((e for e in read_events(((r.ms, r.line) for r in stream.trace.lines), EVENTS)
                                  if e.data), 1):
        try:
            obj = loads(event.data) if not event.data.startswith("[DONE]") else None
        except ValueError:
            obj = NOT_JSON
        found.append((step, event, obj))
    return found


def tool_names(stream: QuirkStream) -> frozenset[str]:
    return frozenset(t["function"]["name"] for t in stream.tools)


def predicted(stream: QuirkStream, profile: str) -> Outcome:
    """What the profile says the library ends with, in the outcome shape (the primary choice's calls)."""
    from callscope.engine.streams.clients import run_profiles

    (run,) = run_profiles(stream.protocol, stream_events(stream), (profile,), tool_names(stream))
    return outcome_of(run)


def outcome_of(run: Any) -> Outcome:
    if run.error is not None:
        return {"raises": run.error}
    if not run.calls:
        return {"calls": []}
    calls = run.calls[min(run.calls)]
    return {"calls": [{"id": c.id, "name": c.name, "arguments": c.arguments,
                       **({"invalid": True} if c.invalid else {}), **({"not_string": True} if c.not_string else {})}
                      for c in calls]}


def _json_or_text(value: Any) -> Any:
    if not isinstance(value, str):
        return ("text", value)
    try:
        return ("json", json.loads(value))
    except ValueError:
        return ("text", value)


def differences(predicted_outcome: Outcome, real: Outcome, wire_ids: set[str]) -> list[str]:
    """How a prediction differs from what the real library ended with (empty: it matches)."""
    if "raises" in real or "raises" in predicted_outcome:
        if ("raises" in real) != ("raises" in predicted_outcome):
            return [f"predicted {predicted_outcome}, the library ended with {real}"]
        return []
    mine, theirs = predicted_outcome["calls"], real["calls"]
    if len(mine) != len(theirs):
        return [f"predicted {len(mine)} calls {mine}, the library ended with {len(theirs)}: {theirs}"]
    problems = []
    for number, (a, b) in enumerate(zip(mine, theirs)):
        generated = a["id"] == GENERATED_ID_TEXT and b["id"] and b["id"] not in wire_ids
        if not generated and a["id"] != b["id"]:
            problems.append(f"call {number}: id {a['id']!r} vs {b['id']!r}")
        if a["name"] != b["name"]:
            problems.append(f"call {number}: name {a['name']!r} vs {b['name']!r}")
        if _json_or_text(a["arguments"]) != _json_or_text(b["arguments"]):
            problems.append(f"call {number}: arguments {a['arguments']!r} vs {b['arguments']!r}")
        for flag in ("invalid", "not_string"):
            if bool(a.get(flag)) != bool(b.get(flag)):
                problems.append(f"call {number}: {flag} {bool(a.get(flag))} vs {bool(b.get(flag))}")
    return problems


def wire_ids(stream: QuirkStream) -> set[str]:
    """Every id string the stream sent (a generated id is one that is none of these)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("id", "call_id") and isinstance(item, str):
                    found.add(item)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for _, _, obj in stream_events(stream):
        walk(obj)
    return found


GENERATED_ID_TEXT = "<generated>"
