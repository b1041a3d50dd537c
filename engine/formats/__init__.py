"""Wire-format parsers, one module per format, looked up by format id."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from callscope.engine.formats.base import FormatParser

#: format id -> module (under engine.formats) that defines its parser class ``Parser``.
FORMAT_MODULES: dict[str, str] = {
    "hermes": "hermes",
    "qwen3_coder": "qwen3_coder",
    "llama3_json": "llama3_json",
    "mistral": "mistral",
    "generic": "generic",
    "emulated": "emulated",
    "deepseek_v31": "deepseek_v31",
    "gpt_oss": "gpt_oss",
}

FORMAT_IDS: tuple[str, ...] = tuple(FORMAT_MODULES)


class UnknownFormat(ValueError):
    """Raised for a format id that no parser implements; the message lists the known ones."""

    def __init__(self, format_id: str) -> None:
        super().__init__(f"unknown format {format_id!r}; known formats: {', '.join(FORMAT_IDS)}")
        self.format_id = format_id


def parser_class(format_id: str) -> type[FormatParser]:
    module_name = FORMAT_MODULES.get(format_id)
    if module_name is None:
        raise UnknownFormat(format_id)
    module = importlib.import_module(f"callscope.engine.formats.{module_name}")
    return module.Parser


def supports_thinking(format_id: str) -> bool:
    """Whether the format's parser can start inside a reasoning block (prompt ended with ``<think>``)."""
    return "thinking" in inspect.signature(parser_class(format_id)).parameters


def prompt_opens_reasoning(prompt: str) -> bool:
    """True when a rendered prompt leaves the model inside a ``<think>`` block (Qwen3, DeepSeek thinking mode)."""
    return prompt.rstrip().endswith("<think>")


def make_parser(format_id: str, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> FormatParser:
    """A fresh parser for ``format_id``; ``tools`` is the request's OpenAI ``tools`` array.

    ``thinking``: the prompt left the model inside a reasoning block (the chat
    template ended the prompt with ``<think>``), so the generation starts with
    reasoning and only a ``</think>`` closes it. Ignored by formats without reasoning.
    """
    cls = parser_class(format_id)
    if thinking and supports_thinking(format_id):
        return cls(tools, thinking=True)
    return cls(tools)


__all__ = ["FORMAT_IDS", "FormatParser", "UnknownFormat", "make_parser", "parser_class", "prompt_opens_reasoning", "supports_thinking"]
