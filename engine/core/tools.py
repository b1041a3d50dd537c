"""The request's tools: every shape people pass, normalised in one place to the OpenAI ``tools`` array.

Shapes accepted (each element may be either of the first two):

* the OpenAI ``tools`` array: ``[{"type": "function", "function": {"name", "description", "parameters"}}]``;
* bare function objects: ``[{"name", "description", "parameters"}]`` (the legacy ``functions``
  request field; vLLM's and SGLang's tests pass tools this way);
* a single tool or function object instead of an array;
* any of these under ``"tools"`` or ``"functions"`` in an object (a request body).

Everything downstream (templates, grammars, parsers, traces, the capture request)
sees the OpenAI array only. :func:`normalize_tools` converts without judging;
:func:`validate_tools` converts and checks, naming the JSON path of a problem
in the shape the user wrote (``$[1].name`` for a bare function, ``$[1].function.name``
for an OpenAI tool).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callscope.engine.core.files import parse_json, read_document


class ToolsError(ValueError):
    """An invalid tools document; the message names the JSON path (``$[1].function.name``)."""


def _unwrap(doc: Any) -> tuple[Any, str]:
    """``(the tools list or single object, its JSON path)``: ``{"tools": ...}`` / ``{"functions": ...}`` opened."""
    if isinstance(doc, dict):
        for key in ("tools", "functions"):
            if key in doc and not _is_tool(doc):
                return doc[key], f"$.{key}"
    return doc, "$"


def _is_tool(value: Any) -> bool:
    """One tool or one function object (not a wrapper holding several)."""
    return isinstance(value, dict) and (isinstance(value.get("function"), dict) or isinstance(value.get("name"), str))


def _function_of(tool: Any) -> tuple[Any, str]:
    """``(the function object, its path suffix)`` of one element: ``.function`` for a tool, ``""`` for a bare one."""
    if isinstance(tool, dict) and ("function" in tool or "name" not in tool):
        return tool.get("function"), ".function"  # an OpenAI tool (one without its function is named so)
    return tool, ""


def _as_list(doc: Any) -> Any:
    return [doc] if _is_tool(doc) else doc


def normalize_tools(doc: Any) -> list[dict[str, Any]]:
    """Any accepted shape as the OpenAI ``tools`` array, without checking it (templates take what they get).

    Elements that are neither a tool nor a function object are kept as they are;
    anything that is not a list of tools becomes ``[]``.
    """
    doc, _ = _unwrap(doc)
    doc = _as_list(doc)
    if not isinstance(doc, list):
        return []
    out = []
    for tool in doc:
        if isinstance(tool, dict) and "function" not in tool and isinstance(tool.get("name"), str):
            tool = {"type": "function", "function": tool}
        out.append(tool)
    return out


def validate_tools(doc: Any) -> list[dict[str, Any]]:
    """Check ``doc`` is tools in an accepted shape and return them as the OpenAI ``tools`` array."""
    doc, root = _unwrap(doc)
    if _is_tool(doc):
        items = [(root, doc)]  # a single tool: its path has no index
    elif isinstance(doc, list):
        items = [(f"{root}[{i}]", tool) for i, tool in enumerate(doc)]
    else:
        raise ToolsError(f"{root}: expected an array of tools, got {type(doc).__name__}")
    names: set[str] = set()
    for here, tool in items:
        if not isinstance(tool, dict):
            raise ToolsError(f"{here}: expected an object, got {type(tool).__name__}")
        fn, suffix = _function_of(tool)
        if suffix and tool.get("type", "function") != "function":
            raise ToolsError(f"{here}.type: expected \"function\", got {tool.get('type')!r}")
        at = here + suffix
        if not isinstance(fn, dict):
            raise ToolsError(f"{at}: expected an object with name and parameters")
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ToolsError(f"{at}.name: expected a non-empty string")
        if name in names:
            raise ToolsError(f"{at}.name: duplicate tool name {name!r}")
        names.add(name)
        _check_parameters(fn.get("parameters", {"type": "object", "properties": {}}), f"{at}.parameters")
    return normalize_tools([tool for _, tool in items])


def _check_parameters(params: Any, at: str) -> None:
    if not isinstance(params, dict):
        raise ToolsError(f"{at}: expected a JSON schema object")
    props = params.get("properties", {})
    if not isinstance(props, dict):
        raise ToolsError(f"{at}.properties: expected an object")
    for key, spec in props.items():
        if not isinstance(spec, dict):
            raise ToolsError(f"{at}.properties.{key}: expected a schema object")
    required = params.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ToolsError(f"{at}.required: expected an array of strings")


def parse_tools(text: str, origin: str = "tools") -> list[dict[str, Any]]:
    doc = parse_json(text, origin, ToolsError)
    try:
        return validate_tools(doc)
    except ToolsError as exc:
        raise ToolsError(f"{origin}: {exc}") from None


def load_tools(path: str | Path) -> list[dict[str, Any]]:
    return parse_tools(read_document(path, ToolsError, "a JSON tools file"), str(path))


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]
