"""The chat-template sandbox: a process of its own that compiles and renders untrusted templates, within limits.

A chat template comes from a ``.jinja`` file, a ``tokenizer_config.json`` or a
GGUF, and any of them may be hostile. Jinja's sandbox blocks escapes (no
unsafe attribute, no file, no import) but bounds neither time nor memory: two
nested ``range(100000)`` loops run for hours, doubling a string 64 times
takes gigabytes. So templates never run in callscope's own process: they run
here, in a worker started by :mod:`callscope.engine.templates.isolation`, that

- lives under an address-space limit (``RLIMIT_AS``): a template that grows
  too big gets a ``MemoryError``, not the machine's memory;
- interrupts itself when a render takes longer than it was given (an interval
  timer), and cannot use much more CPU than that even where the timer cannot
  reach (a long operation in C; ``RLIMIT_CPU`` ends the process), while the
  parent kills it if it does not answer in time;
- stops a render whose output passes a size limit;
- ends when its parent does (its requests pipe closes, or the parent's pid
  changes).

The environment is the one Hugging Face ``apply_chat_template`` and llama.cpp's
minja render with: ``trim_blocks``/``lstrip_blocks``, loop controls, a
``{% generation %}`` block, a ``tojson`` that does not HTML-escape (and takes
the generators ``map``/``selectattr`` return), and the
``raise_exception``/``strftime_now`` globals. Containers are mutable (Kimi's
templates append to their own lists): every render gets its own copy of the
request, since it arrives as JSON.

Protocol: length-prefixed JSON messages on stdin/stdout, one reply per request
(``compile`` a source under a key, ``render`` a compiled key with a context).
Nothing but jinja2 and the standard library is imported, so it starts fast.
"""

from __future__ import annotations

import json
import resource
import signal
import struct
import sys
import traceback
from collections import OrderedDict
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Any, ClassVar

import jinja2
from jinja2 import meta, nodes
from jinja2.ext import Extension
from jinja2.sandbox import SandboxedEnvironment, SecurityError

from callscope.engine.core.json_text import dumps
from callscope.engine.core.lifetime import die_with_parent

#: The file name Jinja gives code compiled from a string (how a traceback frame is known to be the template's).
TEMPLATE_FILE = "<template>"
#: Compiled templates kept (a GGUF's, the analysed file's, the built-ins a run picks).
_KEPT = 32
#: CPU seconds a render may use beyond its time limit before the kernel ends the worker.
_CPU_GRACE = 2

# the kinds of failure a reply names; the parent turns each into one line
SYNTAX, RAISED, SECURITY, ERROR, TIME, MEMORY, OUTPUT = "syntax", "raised", "security", "error", "time", "memory", "output"


# ================================================================ environment


class _Raised(Exception):
    """``raise_exception(msg)`` called by a template (its own validation message)."""


def _raise_exception(message: Any = "") -> None:
    raise _Raised(str(message))


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _tojson(
    value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False
) -> str:
    """Like Hugging Face's: plain ``json.dumps`` (Jinja's own would HTML-escape ``<``, ``>``, ``&``, ``'``).

    A dict that contains itself raises ``ValueError: Circular reference detected``, as ``json.dumps`` does.
    """
    return dumps(  # any depth: a deeply nested tools schema renders instead of raising RecursionError
        _plain(value), ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _plain(value: Any) -> Any:
    """``value`` with what ``json.dumps`` cannot take made plain: undefined is null, a generator a list.

    Filters such as ``map`` and ``selectattr`` return generators, and templates
    pipe them straight into ``tojson`` (``tools | map(attribute='function') | tojson``).
    Walked without recursion (a tools schema may nest deeply), and each container is
    copied once: a container met again (shared, or containing itself) gets the same
    copy, so a cycle stays a cycle for ``json.dumps`` to refuse instead of a walk
    that never ends.
    """
    if not _needs_plain(value):
        return value
    root: list[Any] = [None]
    copies: dict[int, Any] = {}
    todo: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while todo:
        parent, slot, node = todo.pop()
        if isinstance(node, jinja2.Undefined):
            parent[slot] = None
        elif isinstance(node, (dict, list, tuple)) and id(node) in copies:
            parent[slot] = copies[id(node)]
        elif isinstance(node, dict):
            copy_: dict[Any, Any] = dict(node)
            parent[slot] = copies[id(node)] = copy_
            todo.extend((copy_, k, v) for k, v in copy_.items() if _needs_plain(v))
        elif isinstance(node, (list, tuple)) or _is_iterator(node):
            items = list(node)
            parent[slot] = items
            if not _is_iterator(node):
                copies[id(node)] = items
            todo.extend((items, i, v) for i, v in enumerate(items) if _needs_plain(v))
        else:
            parent[slot] = node
    return root[0]


def _is_iterator(value: Any) -> bool:
    return isinstance(value, (Iterator, range)) and not isinstance(value, (str, bytes))


def _needs_plain(value: Any) -> bool:
    """Whether ``value`` holds something json.dumps refuses (each container looked into once, cycles included)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return False
    if isinstance(value, jinja2.Undefined) or _is_iterator(value):
        return True
    seen: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list, tuple)):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
        elif isinstance(node, jinja2.Undefined) or _is_iterator(node):
            return True
    return False


class GenerationBlock(Extension):
    """``{% generation %}...{% endgeneration %}``: HF marks assistant spans with it; rendering is unchanged."""

    tags: ClassVar[set[str]] = {"generation"}

    def parse(self, parser: Any) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller: Any) -> str:
        return caller()


def make_environment() -> SandboxedEnvironment:
    """The sandbox: unsafe attributes refused, no loader (no file is reachable), containers mutable."""
    env = SandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        extensions=["jinja2.ext.loopcontrols", GenerationBlock],
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


# ================================================================ compiling and rendering


class _OutOfTime(BaseException):
    """The render's time is up (raised by the interval timer; a template cannot catch it)."""


class _TooLong(Exception):
    """The render's output passed its size limit."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _OutOfTime


def _template_line(exc: BaseException, template: jinja2.Template | None = None) -> int | None:
    """The template line being run when ``exc`` was raised.

    Jinja rewrites the traceback of an ``Exception`` to the template's own lines; the timer's
    :class:`_OutOfTime` is not one, so its lines are the generated code's, mapped back through ``template``.
    """
    line = getattr(exc, "lineno", None) if isinstance(exc, jinja2.TemplateError) else None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == TEMPLATE_FILE and frame.lineno is not None:
            line = template.get_corresponding_lineno(frame.lineno) if template is not None else frame.lineno
    return line


def _failure(kind: str, exc: BaseException | None, message: str,
             template: jinja2.Template | None = None) -> dict[str, Any]:
    return {"error": kind, "line": _template_line(exc, template) if exc is not None else None, "message": message}


class Worker:
    """The compiled templates by key, and the request handlers."""

    def __init__(self) -> None:
        self.env = make_environment()
        self.templates: OrderedDict[str, jinja2.Template] = OrderedDict()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        seconds = request["seconds"]
        _cpu_limit(seconds)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            if request["op"] == "compile":
                return self.compile(request["key"], request["source"])
            return self.render(request["key"], request["context"], request["max_output"])
        except _OutOfTime as exc:
            return _failure(TIME, exc, f"{seconds:g} s", self.templates.get(request["key"]))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def compile(self, key: str, source: str) -> dict[str, Any]:
        """The variables the template reads; or why it does not compile."""
        try:
            parsed = self.env.parse(source)
            variables = sorted(meta.find_undeclared_variables(parsed))
            self.templates[key] = self.env.from_string(parsed)
        except jinja2.TemplateSyntaxError as exc:
            return {"error": SYNTAX, "line": exc.lineno, "message": f"syntax error: {exc.message}"}
        except RecursionError:
            return {"error": SYNTAX, "line": None, "message": "syntax error: the template nests too deeply to compile"}
        except MemoryError:
            return _failure(MEMORY, None, "compiling")
        except Exception as exc:  # noqa: BLE001 - a hostile source can break the compiler anywhere
            return {"error": SYNTAX, "line": None, "message": f"cannot compile: {type(exc).__name__}: {exc}"}
        while len(self.templates) > _KEPT:
            self.templates.popitem(last=False)
        return {"variables": variables}

    def render(self, key: str, context: dict[str, Any], max_output: int) -> dict[str, Any]:
        """The rendered text; or the failure, with the template line it happened on."""
        template = self.templates.get(key)
        if template is None:
            return {"error": "unknown"}
        self.templates.move_to_end(key)
        try:
            return {"text": _generate(template, context, max_output)}
        except MemoryError as exc:
            return _failure(MEMORY, exc, "")
        except _TooLong as exc:
            return _failure(OUTPUT, exc, str(max_output))
        except _Raised as exc:
            return _failure(RAISED, exc, f"raise_exception: {exc}")
        except SecurityError as exc:
            return _failure(SECURITY, exc, f"SecurityError: {exc}")
        except Exception as exc:  # noqa: BLE001 - a template can make any Python operation fail
            return _failure(ERROR, exc, f"{type(exc).__name__}: {exc}")


def _generate(template: jinja2.Template, context: dict[str, Any], max_output: int) -> str:
    """The output, counted as it comes (and joined every few thousand pieces: a million tiny strings weigh far
    more than their characters, so the output limit would come after the memory limit)."""
    done: list[str] = []
    pieces: list[str] = []
    size = 0
    for piece in template.generate(**context):
        size += len(piece)
        if size > max_output:
            raise _TooLong
        pieces.append(piece)
        if len(pieces) >= 4096:
            done.append("".join(pieces))
            pieces.clear()
    return "".join(done) + "".join(pieces)


def _cpu_limit(seconds: float) -> None:
    """Where the timer cannot interrupt (a long operation in C), the kernel ends the worker past its CPU time."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(used + seconds) + _CPU_GRACE
    if hard == resource.RLIM_INFINITY or soft <= hard:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


# ================================================================ the worker's loop


def read_message(stream: IO[bytes]) -> Any:
    """One length-prefixed JSON message (None at the end of the stream)."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    (size,) = struct.unpack("<I", head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return json.loads(data.decode("utf-8", "surrogatepass"))


def encode_message(message: Any) -> bytes:
    data = json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return struct.pack("<I", len(data)) + data


def serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """Answer requests until the parent closes the pipe; end after a limit was hit (the parent starts a fresh one)."""
    worker = Worker()
    replies.write(encode_message({"ready": True}))
    replies.flush()
    while True:
        request = read_message(requests)
        if request is None:
            return
        try:
            reply = worker.handle(request)
        except _OutOfTime:  # the timer fired just as the render ended
            reply = _failure(TIME, None, f"{request.get('seconds', 0):g} s")
        try:
            data = encode_message(reply)
        except MemoryError:
            data = encode_message(_failure(MEMORY, None, ""))
        replies.write(data)
        replies.flush()
        if reply.get("error") in (TIME, MEMORY):
            return  # interrupted anywhere, or short of memory: start clean


def main(argv: list[str]) -> None:
    """``python -m callscope.engine.templates.sandbox PARENT_PID MEMORY_BYTES``."""
    parent, memory = int(argv[0]), int(argv[1])
    die_with_parent(parent, any_thread=True)
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing a template does may write into the replies
    serve(requests, replies)


if __name__ == "__main__":
    main(sys.argv[1:])
