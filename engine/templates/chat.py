"""Chat templates: render messages + tools the way a model's runtime does, and tell which wire format they teach.

The templates people debug are real ones (a model's ``tokenizer.chat_template``,
a published ``.jinja`` file), so they are rendered the way Hugging Face
``apply_chat_template`` and llama.cpp's minja render them: a sandboxed Jinja
environment with ``trim_blocks``/``lstrip_blocks``, loop controls, a
``{% generation %}`` block, a ``tojson`` that does not HTML-escape (and takes
the generators ``map``/``selectattr`` return), and the
``raise_exception``/``strftime_now`` globals. Templates may build and mutate
their own lists and dicts (``ns.calls.append(...)``, as Kimi's do; the runtimes
allow it), so the sandbox is a mutable one, but every render gets its own deep
copy of the request: nothing a template does reaches the caller's data, and
nothing reaches the file system (no loader, no unsafe attributes).

The request is shaped as llama.cpp shapes it before rendering: every tool has a
``description`` and ``parameters`` (templates write ``tool.description`` without
checking), and a template written for the legacy ``functions`` variable gets
the tools' function objects under that name.

The wire format is detected from the template *source* by the markers it
contains, in llama.cpp's order (``common_chat_templates_apply_jinja``), and the
detection always says why it chose what it chose.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import jinja2
from jinja2 import meta, nodes
from jinja2.ext import Extension
from jinja2.sandbox import SandboxedEnvironment

from callscope.engine.core.errors import TemplateError
from callscope.engine.core.files import read_document
from callscope.engine.core.json_text import DOCUMENT_DEPTH, dumps, loads
from callscope.engine.core.shipped import resource
from callscope.engine.core.tools import normalize_tools
from callscope.engine.formats import FormatSpec, TemplateSign, all_specs, get_spec, live_view

BUILTIN_DIR = resource("templates")

#: Formats callscope ships a built-in (ChatML-framed) template for: those whose spec names one.
BUILTIN_FORMATS: Sequence[str] = live_view(lambda: tuple(spec.id for spec in all_specs() if spec.template is not None))

_DECLARED = re.compile(r"callscope-format:\s*([a-z0-9_]+)")


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
    """Like Hugging Face's: plain ``json.dumps`` (Jinja's own would HTML-escape ``<``, ``>``, ``&``, ``'``)."""
    return dumps(  # any depth: a deeply nested tools schema renders instead of raising RecursionError
        _plain(value), ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _plain(value: Any) -> Any:
    """``value`` with what ``json.dumps`` cannot take made plain: undefined is null, a generator a list.

    Filters such as ``map`` and ``selectattr`` return generators, and templates
    pipe them straight into ``tojson`` (``tools | map(attribute='function') | tojson``).
    Walked without recursion: a tools schema may nest deeply.
    """
    if not _needs_plain(value):
        return value
    root: list[Any] = [None]
    todo: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while todo:
        parent, slot, node = todo.pop()
        if isinstance(node, jinja2.Undefined):
            parent[slot] = None
        elif isinstance(node, dict):
            copy_: dict[Any, Any] = dict(node)
            parent[slot] = copy_
            todo.extend((copy_, k, v) for k, v in copy_.items() if _needs_plain(v))
        elif isinstance(node, (list, tuple)) or _is_iterator(node):
            items = list(node)
            parent[slot] = items
            todo.extend((items, i, v) for i, v in enumerate(items) if _needs_plain(v))
        else:
            parent[slot] = node
    return root[0]


def _is_iterator(value: Any) -> bool:
    return isinstance(value, (Iterator, range)) and not isinstance(value, (str, bytes))


def _needs_plain(value: Any) -> bool:
    """Whether ``value`` holds something json.dumps refuses (checked shallowly for scalars, deeply for containers)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return False
    if isinstance(value, jinja2.Undefined) or _is_iterator(value):
        return True
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
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
    """The sandbox: unsafe attributes refused, no loader (no file is reachable), containers mutable.

    Mutation is safe because :meth:`ChatTemplate.render` hands each render its own copy of the request.
    """
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


_ENV = make_environment()
_TEMPLATE_FILE = "<template>"  # the file name Jinja gives code compiled from a string


@functools.lru_cache(maxsize=64)
def _compile(source: str) -> tuple[jinja2.Template, frozenset[str]]:
    """The compiled template and the variables it reads from its context.

    Compiling is the slow part of rendering; capability probes and the
    template analysis render one template dozens of times.
    """
    return _ENV.from_string(source), frozenset(meta.find_undeclared_variables(_ENV.parse(source)))


# ==================================================================== template


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """A chat template's source and where it came from (shown to the user)."""

    name: str  # a file path, "gguf:tokenizer.chat_template", "built-in hermes"
    source: str
    origin: str  # file | model | built-in

    def compiled(self) -> jinja2.Template:
        return self._compiled()[0]

    def variables(self) -> frozenset[str]:
        """The names the template reads from its context (``messages``, ``tools``, ``enable_thinking``...)."""
        return self._compiled()[1]

    def _compiled(self) -> tuple[jinja2.Template, frozenset[str]]:
        try:
            return _compile(self.source)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(self.name, exc.lineno, f"syntax error: {exc.message}") from None

    def renderer(self, bos_token: str = "", eos_token: str = "") -> Callable[..., str]:
        """``render`` in the shape the template analysis takes (``callscope.engine.templates.renders.Renderer``)."""

        def render(
            messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, add_generation_prompt: bool, **extra: Any
        ) -> str:
            return self.render(messages, tools, add_generation_prompt, bos_token, eos_token, **extra)

        return render

    def render(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
        bos_token: str = "",
        eos_token: str = "",
        **extra: Any,
    ) -> str:
        """The prompt text; any failure becomes a :class:`TemplateError` naming this template and line.

        The template gets a deep copy of ``messages``, ``tools`` and ``extra`` (it may mutate
        them), tools shaped by :func:`tools_for_template`, and ``functions`` when it reads
        that variable instead of ``tools``.
        """
        template, variables = self._compiled()
        shaped = tools_for_template(tools)
        context = {
            "messages": copy.deepcopy(messages),
            "tools": shaped,
            "add_generation_prompt": add_generation_prompt,
            "bos_token": bos_token,
            "eos_token": eos_token,
            **copy.deepcopy(extra),
        }
        if "functions" in variables and "tools" not in variables and shaped:
            context["functions"] = [tool["function"] for tool in shaped]  # the legacy OpenAI ``functions`` shape
        try:
            return template.render(**context)
        except _Raised as exc:
            raise TemplateError(self.name, _template_line(exc), f"raise_exception: {exc}") from None
        except jinja2.TemplateError as exc:
            line = getattr(exc, "lineno", None) or _template_line(exc)
            raise TemplateError(self.name, line, f"{type(exc).__name__}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a template can make any Python operation fail
            raise TemplateError(self.name, _template_line(exc), f"{type(exc).__name__}: {exc}") from None


def tools_for_template(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """A copy of the request's tools as llama.cpp hands them to a template (None for no tools).

    Every tool is ``{"type": "function", "function": {name, description, parameters}}``
    (:func:`~callscope.engine.core.tools.normalize_tools` takes the other shapes people pass),
    with an empty ``description`` and an empty object schema where the request has
    none: templates write ``tool.description`` without checking it is defined.
    """
    if not tools:
        return None
    shaped = []
    for tool in normalize_tools(copy.deepcopy(tools)):
        fn = tool["function"]
        fn.setdefault("description", "")
        fn.setdefault("parameters", {"type": "object", "properties": {}})
        shaped.append(tool)
    return shaped


def _template_line(exc: BaseException) -> int | None:
    """The template line being rendered when ``exc`` was raised (Jinja rewrites traceback line numbers)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == _TEMPLATE_FILE:
            line = frame.lineno
    return line


def load_template_file(path: str | Path) -> ChatTemplate:
    name = str(path)

    def unreadable(message: str) -> TemplateError:
        # callscope.engine.core.files words every failure "<path>: <why>"; TemplateError puts the name in front itself
        return TemplateError(name, None, message.removeprefix(f"{name}: "))

    source = read_document(path, unreadable, "a chat template")
    source = _unwrap_json_template(source)
    template = ChatTemplate(name, source, "file")
    template.compiled()  # report syntax errors now, with the line
    return template


def _unwrap_json_template(source: str) -> str:
    """Accept a ``tokenizer_config.json`` (or ``{"chat_template": ...}``) as well as a bare template."""
    stripped = source.lstrip()
    if not stripped.startswith("{") or stripped.startswith(("{%", "{{", "{#")):
        return source
    try:
        doc = loads(source)
    except ValueError:
        return source
    value = doc.get("chat_template") if isinstance(doc, dict) else None
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # [{"name": "default", "template": ...}, {"name": "tool_use", ...}]
        by_name = {v.get("name"): v.get("template") for v in value if isinstance(v, dict)}
        chosen = by_name.get("tool_use") or by_name.get("default")
        if isinstance(chosen, str):
            return chosen
    return source


def builtin_template(format_id: str) -> ChatTemplate:
    """The ChatML-framed template callscope ships for ``format_id`` (works with SmolLM2's tokens)."""
    spec = _spec_or_none(format_id)
    template = spec.template if spec is not None else None
    if template is None:
        raise TemplateError(f"built-in {format_id}", None, f"no built-in template; known: {', '.join(BUILTIN_FORMATS)}")
    path = BUILTIN_DIR / template if isinstance(template, str) else Path(template)
    return ChatTemplate(f"built-in {format_id} ({path.name})", path.read_text(encoding="utf-8"), "built-in")


def _spec_or_none(format_id: str) -> FormatSpec | None:
    try:
        return get_spec(format_id)
    except ValueError:
        return None


# ============================================================ capabilities


@dataclass(frozen=True, slots=True)
class TemplateCaps:
    """What a template can express, probed by rendering (as minja's ``chat_template_caps`` does)."""

    supports_tools: bool
    supports_tool_calls: bool
    requires_object_arguments: bool
    supports_system_role: bool


_NEEDLE_ARGS = {"argument_needle": "print('Hello, World!')"}
#: The needle argument's key as a template writes an arguments object, in any wire format: a JSON or
#: Python key (not inside a JSON-encoded string), <parameter=KEY>, <arg_key>KEY</arg_key>,
#: <parameter name="KEY">, Gemma's bare KEY:, a pythonic call's KEY=.
_NEEDLE_KEY = re.compile(
    r"""(?<!\\)(?:"argument_needle"\s*:|'argument_needle'\s*:)|<parameter=argument_needle>"""
    r"""|>argument_needle<|name="argument_needle"|[{,]\s*argument_needle:|[(,]\s*argument_needle="""
)
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "some_tool",
        "description": "Some tool.",
        "parameters": {
            "type": "object",
            "properties": {"arg": {"type": "string", "description": "Some argument."}},
            "required": ["arg"],
        },
    },
}


def _probe(template: ChatTemplate, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    try:
        return template.render(messages, tools, add_generation_prompt=False)
    except TemplateError:
        return ""


def probe_caps(template: ChatTemplate) -> TemplateCaps:
    user = {"role": "user", "content": "Hey"}
    with_tools = _probe(template, [user], [_PROBE_TOOL])
    with_system = _probe(template, [{"role": "system", "content": "System Needle"}, user])

    def call_message(arguments: Any) -> list[dict[str, Any]]:
        call = {"id": "call_1___", "type": "function", "function": {"name": "ipython", "arguments": arguments}}
        return [user, {"role": "assistant", "content": "", "tool_calls": [call]}]

    def renders_args(text: str) -> bool:
        return _NEEDLE_KEY.search(text) is not None

    as_string = renders_args(_probe(template, call_message(json.dumps(_NEEDLE_ARGS)), [_PROBE_TOOL]))
    as_object = renders_args(_probe(template, call_message(_NEEDLE_ARGS), [_PROBE_TOOL]))
    return TemplateCaps(
        supports_tools="some_tool" in with_tools,
        supports_tool_calls=as_string or as_object,
        requires_object_arguments=as_object and not as_string,
        supports_system_role="System Needle" in with_system,
    )


def prepare_messages(messages: list[dict[str, Any]], caps: TemplateCaps) -> list[dict[str, Any]]:
    """Copies of ``messages`` shaped for the template: JSON-string call arguments become objects when required."""
    if not caps.requires_object_arguments:
        return messages
    shaped = []
    for message in messages:
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            shaped.append(message)
            continue
        new_calls = []
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                try:
                    fn = {**fn, "arguments": loads(fn["arguments"], DOCUMENT_DEPTH)}
                except ValueError:
                    pass
                call = {**call, "function": fn}
            new_calls.append(call)
        shaped.append({**message, "tool_calls": new_calls})
    return shaped


# ================================================================= detection


@dataclass(frozen=True, slots=True)
class FormatDetection:
    format_id: str
    reason: str


def detect_format(source: str, caps: TemplateCaps | None = None) -> FormatDetection:
    """Which wire format a template teaches, from its markers, in llama.cpp's order; with the reason.

    Every format's template signs are tried by priority (:class:`~callscope.engine.formats._kit.spec.TemplateSign`);
    the template is rendered to probe its tool support only if a sign asks.
    """
    declared = _DECLARED.search(source)
    if declared:
        return FormatDetection(declared.group(1), f"the template declares callscope-format: {declared.group(1)}")
    for format_id, sign in template_signs():
        if not all(marker in source for marker in sign.markers):
            continue
        if sign.renders_tools is not None:
            if caps is None:
                caps = probe_caps(ChatTemplate("<detect>", source, "file"))
            if caps.supports_tools != sign.renders_tools:
                continue
        return FormatDetection(format_id, sign.reason)
    fallback = format_without_tools()
    return FormatDetection(fallback, f"no format's template signs match; {fallback} assumed")


def template_signs() -> list[tuple[str, TemplateSign]]:
    """``(format id, sign)`` of every format, in detection order (priority, then registry order)."""
    signs = [(spec.id, sign) for spec in all_specs() for sign in spec.signs]
    return sorted(signs, key=lambda item: item[1].priority)


def format_without_tools() -> str:
    """The format for a template that does not render tools: the one whose sign says so (tools taught in the prompt)."""
    for format_id, sign in template_signs():
        if sign.renders_tools is False and not sign.markers:
            return format_id
    raise LookupError("no format declares itself for templates without tool support")
