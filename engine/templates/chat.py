"""Chat templates: render messages + tools the way a model's runtime does, and tell which wire format they teach.

The templates people debug are real ones (a model's ``tokenizer.chat_template``,
a published ``.jinja`` file), so they are rendered the way Hugging Face
``apply_chat_template`` and llama.cpp's minja render them, in a sandboxed Jinja
environment (:mod:`callscope.engine.templates.sandbox`). A template is untrusted
input: it is compiled and rendered in a process of its own, within a time, a
memory and an output limit (:mod:`callscope.engine.templates.isolation`), and the
request reaches it as JSON, so nothing a template does reaches the caller's data,
its memory or the file system.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from callscope.engine.core.errors import TemplateError
from callscope.engine.core.files import read_document
from callscope.engine.core.json_text import DOCUMENT_DEPTH, dumps, loads
from callscope.engine.core.shipped import resource
from callscope.engine.core.tools import normalize_tools
from callscope.engine.formats import FormatSpec, TemplateSign, all_specs, get_spec, live_view
from callscope.engine.templates.isolation import compile_source, render_source, within_render_budget

BUILTIN_DIR = resource("templates")

#: Formats callscope ships a built-in (ChatML-framed) template for: those whose spec names one.
BUILTIN_FORMATS: Sequence[str] = live_view(lambda: tuple(spec.id for spec in all_specs() if spec.template is not None))

_DECLARED = re.compile(r"callscope-format:\s*([a-z0-9_]+)")


# ==================================================================== template


@functools.lru_cache(maxsize=64)
def _variables(name: str, source: str) -> frozenset[str]:
    """The variables a template reads (compiled in the sandbox, once per source: probes render one dozens of times)."""
    return compile_source(name, source)


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """A chat template's source and where it came from (shown to the user)."""

    name: str  # a file path, "gguf:tokenizer.chat_template", "built-in hermes"
    source: str
    origin: str  # file | model | built-in

    def check(self) -> None:
        """Compile it now: a syntax error is a :class:`TemplateError` with its line."""
        self.variables()

    def variables(self) -> frozenset[str]:
        """The names the template reads from its context (``messages``, ``tools``, ``enable_thinking``...)."""
        return _variables(self.name, self.source)

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

        Rendered in the sandbox process, within the render budget
        (:mod:`callscope.engine.templates.isolation`): a template that runs past its limits, or
        that the sandbox refuses, is a :class:`~callscope.engine.core.errors.HostileTemplate`
        that ends the whole operation. The template gets ``messages``, ``tools`` and ``extra`` as
        JSON (its own copy: it may mutate them), tools shaped by :func:`tools_for_template`, and
        ``functions`` when it reads that variable instead of ``tools``.
        """
        variables = self.variables()
        shaped = tools_for_template(tools)
        context = {
            "messages": messages,
            "tools": shaped,
            "add_generation_prompt": add_generation_prompt,
            "bos_token": bos_token,
            "eos_token": eos_token,
            **extra,
        }
        if "functions" in variables and "tools" not in variables and shaped:
            functions = [tool["function"] for tool in shaped]  # the legacy OpenAI ``functions`` shape
            context["functions"] = dumps(functions, indent=2) if _added_to_text(self.source) else functions
        for name, value in _runtime_context().items():  # what llama.cpp puts in every template's context
            if name in variables and name not in context:
                context[name] = value
        return render_source(self.name, self.source, context)


_ADDED = re.compile(r"(?:[+~]\s*functions\b)|(?:\bfunctions\s*[+~])")


def _added_to_text(source: str) -> bool:
    """Whether a template adds ``functions`` to a string (FireFunction v2: ``system_prompt + "\\n" + functions``).

    Such a template gets the functions as indented JSON text, as llama.cpp's runtime gives a
    list added to a string; one that loops over them gets the list.
    """
    return _ADDED.search(source) is not None


def _runtime_context() -> dict[str, str]:
    """The ``datetime`` llama.cpp gives every template (FireFunction adds ``Today is`` it to a string).

    Not ``date_string``: templates that read it (Llama 3.1) have their own default, kept so a
    prompt renders the same every day.
    """
    return {"datetime": datetime.now().strftime("%b %d %Y")}


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


def load_template_file(path: str | Path) -> ChatTemplate:
    name = str(path)

    def unreadable(message: str) -> TemplateError:
        # callscope.engine.core.files words every failure "<path>: <why>"; TemplateError puts the name in front itself
        return TemplateError(name, None, message.removeprefix(f"{name}: "))

    source = read_document(path, unreadable, "a chat template")
    source = _unwrap_json_template(source)
    template = ChatTemplate(name, source, "file")
    template.check()  # report syntax errors now, with the line
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


@within_render_budget
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
