"""Reading a chat template from what a user has at hand: a template file, or a GGUF model that carries one.

``callscope template FILE|GGUF`` and the window's Template pane both take
either; the GGUF's ``tokenizer.chat_template`` is read from its metadata
(weights never load), and its BOS/EOS tokens come with it, because templates
write them (``{{ bos_token }}``) and the analysis must render what the model
would really see. A ``.jinja`` file or ``tokenizer_config.json`` has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from callscope.engine.core.errors import DecodeError
from callscope.engine.core.gguf import read_model_info
from callscope.engine.templates.chat import ChatTemplate, load_template_file


@dataclass(frozen=True, slots=True)
class TemplateFile:
    """A template read from a file, with the special tokens its renders need."""

    template: ChatTemplate
    bos_token: str = ""
    eos_token: str = ""


def read_template_or_model(path: str | Path) -> TemplateFile:
    """The template of ``path`` (a template file, or a GGUF's own); a :class:`DecodeError` says what is wrong."""
    text = str(path)
    if not is_gguf(text):
        return TemplateFile(load_template_file(text))
    info = read_model_info(text)
    if info.chat_template is None:
        raise DecodeError(f"{text}: the model has no tokenizer.chat_template")
    name = f"gguf:tokenizer.chat_template of {info.file_name}"
    return TemplateFile(ChatTemplate(name, info.chat_template, "model"), info.bos_token, info.eos_token)


def is_gguf(path: str) -> bool:
    """A ``.gguf`` name, or a file that starts with GGUF's magic (a model saved under another name)."""
    if path.lower().endswith(".gguf"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False  # the template reader says what is wrong with the path


__all__ = ["TemplateFile", "is_gguf", "read_template_or_model"]
