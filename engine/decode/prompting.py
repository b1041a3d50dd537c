"""Choosing the chat template and the wire format for a request, and rendering the prompt.

One function, :func:`plan_prompt`, used by ``callscope prompt`` (no weights),
``callscope run`` and the GUI, so all of them pick the same template for the
same inputs and explain the choice the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from callscope.engine.core.errors import DecodeError
from callscope.engine.core.gguf import ModelInfo
from callscope.engine.formats import FORMAT_IDS, UnknownFormat
from callscope.engine.templates.chat import (
    ChatTemplate,
    FormatDetection,
    TemplateCaps,
    builtin_template,
    format_without_tools,
    prepare_messages,
    probe_caps,
)
from callscope.engine.templates.isolation import within_render_budget

AUTO = "auto"


class FormatChoiceError(DecodeError):
    """``--format`` names no known wire format."""


@dataclass(frozen=True, slots=True)
class PromptPlan:
    """The rendered prompt and every choice behind it."""

    template: ChatTemplate
    template_reason: str
    format_id: str
    format_reason: str
    prompt: str
    caps: TemplateCaps

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format_id,
            "format_reason": self.format_reason,
            "template": self.template.name,
            "template_origin": self.template.origin,
            "template_reason": self.template_reason,
        }


def check_format_choice(format_id: str) -> str:
    if format_id != AUTO and format_id not in FORMAT_IDS:
        raise FormatChoiceError(f"{UnknownFormat(format_id)} (or auto)")
    return format_id


@within_render_budget
def choose_template(
    format_id: str = AUTO, template: ChatTemplate | None = None, model: ModelInfo | None = None
) -> tuple[ChatTemplate, str, FormatDetection, TemplateCaps]:
    """``(template, why this template, format + why, caps)`` for the request."""
    check_format_choice(format_id)
    if template is not None:
        caps = probe_caps(template)
        det = _auto(template, caps, model) if format_id == AUTO else _chosen(format_id)
        return template, "given with --template", det, caps
    if model is not None and model.chat_template is not None:
        own = ChatTemplate(f"gguf:tokenizer.chat_template of {model.file_name}", model.chat_template, "model")
        caps = probe_caps(own)
        if caps.supports_tools:
            det = _auto(own, caps, model)
            if format_id in (AUTO, det.format_id):
                return (
                    own,
                    "the model's own template (it renders tools)",
                    det if format_id == AUTO else _chosen(format_id),
                    caps,
                )
            chosen = builtin_template(format_id)
            reason = (
                f"the model's template speaks {det.format_id}; built-in {format_id} template for --format {format_id}"
            )
            return chosen, reason, _chosen(format_id), probe_caps(chosen)
        fmt = format_without_tools() if format_id == AUTO else format_id
        chosen = builtin_template(fmt)
        det = (
            FormatDetection(
                fmt, f"the model's template has no tool support, so tools are taught in the prompt (callscope: {fmt})"
            )
            if format_id == AUTO
            else _chosen(format_id)
        )
        return (
            chosen,
            "the model's template has no tool support: built-in ChatML template for the format",
            det,
            probe_caps(chosen),
        )
    fmt = format_without_tools() if format_id == AUTO else format_id
    chosen = builtin_template(fmt)
    det = (
        FormatDetection(fmt, f"no chat template given: tools are taught in the prompt (callscope: {fmt})")
        if format_id == AUTO
        else _chosen(format_id)
    )
    why = (
        "the model has no chat template: built-in ChatML template" if model is not None else "built-in ChatML template"
    )
    return chosen, why, det, probe_caps(chosen)


def _auto(template: ChatTemplate, caps: TemplateCaps, model: ModelInfo | None) -> FormatDetection:
    """``--format auto`` for a template: the one detection (:func:`~callscope.engine.templates.format_choice.choose_format`)."""
    from callscope.engine.templates.format_choice import choose_format  # the analysis only when a template is given

    bos, eos = (model.bos_token, model.eos_token) if model is not None else ("", "")
    return choose_format(template, caps, bos_token=bos, eos_token=eos).detection


def _chosen(format_id: str) -> FormatDetection:
    return FormatDetection(format_id, "chosen with --format")


@within_render_budget  # the probes, the format choice and the prompt share one time limit
def plan_prompt(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    format_id: str = AUTO,
    template: ChatTemplate | None = None,
    model: ModelInfo | None = None,
    add_generation_prompt: bool = True,
) -> PromptPlan:
    """Pick template and format, then render ``messages`` + ``tools`` with the model's special tokens."""
    chosen, why, det, caps = choose_template(format_id, template, model)
    prompt = chosen.render(
        prepare_messages(messages, caps),
        tools,
        add_generation_prompt=add_generation_prompt,
        bos_token=model.bos_token if model else "",
        eos_token=model.eos_token if model else "",
    )
    return PromptPlan(chosen, why, det.format_id, det.reason, prompt, caps)
