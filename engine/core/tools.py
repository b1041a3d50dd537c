"""The request's OpenAI ``tools`` array: loading and validating it, naming the JSON path of a problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callscope.engine.core.files import parse_json, read_document


class ToolsError(ValueError):
    """An invalid tools document; the message names the JSON path (``$[1].function.name``)."""


def validate_tools(doc: Any) -> list[dict[str, Any]]:
    """Check ``doc`` is an OpenAI ``tools`` array (or ``{"tools": [...]}``) and return the array."""
    if isinstance(doc, dict) and "tools" in doc:
        doc = doc["tools"]
        root = "$.tools"
    else:
        root = "$"
    if not isinstance(doc, list):
        raise ToolsError(f"{root}: expected an array of tools, got {type(doc).__name__}")
    names: set[str] = set()
    for i, tool in enumerate(doc):
        here = f"{root}[{i}]"
        if not isinstance(tool, dict):
            raise ToolsError(f"{here}: expected an object, got {type(tool).__name__}")
        if tool.get("type", "function") != "function":
            raise ToolsError(f"{here}.type: expected \"function\", got {tool.get('type')!r}")
        fn = tool.get("function")
        if not isinstance(fn, dict):
            raise ToolsError(f"{here}.function: expected an object with name and parameters")
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ToolsError(f"{here}.function.name: expected a non-empty string")
        if name in names:
            raise ToolsError(f"{here}.function.name: duplicate tool name {name!r}")
        names.add(name)
        params = fn.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict):
            raise ToolsError(f"{here}.function.parameters: expected a JSON schema object")
        props = params.get("properties", {})
        if not isinstance(props, dict):
            raise ToolsError(f"{here}.function.parameters.properties: expected an object")
        for key, spec in props.items():
            if not isinstance(spec, dict):
                raise ToolsError(f"{here}.function.parameters.properties.{key}: expected a schema object")
        required = params.get("required", [])
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise ToolsError(f"{here}.function.parameters.required: expected an array of strings")
    return doc


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
