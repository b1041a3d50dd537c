"""Typed errors of the live decode path, each with a one-line message a CLI or GUI can show as is.

Every error the user can cause (a bad model path, a broken template, an
unknown tool, a prompt that does not fit) is a :class:`DecodeError`, so callers
catch one type and show ``str(exc)``; anything else is a bug. The family lives
in ``core`` because the packages that raise it sit side by side:
:mod:`callscope.engine.templates` (templates) below :mod:`callscope.engine.decode`
(models, messages, grammars), and :mod:`callscope.engine.core.gguf` (model files).
"""

from __future__ import annotations


class DecodeError(Exception):
    """Base class: a problem with the inputs of a live run (one-line message)."""


# ------------------------------------------------------------------ model


class ModelError(DecodeError):
    """The model file cannot be used."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"model {path}: {reason}")
        self.path = path
        self.reason = reason


class ModelNotFound(ModelError):
    """No file at the path (or the packaged default model is not installed)."""


class ModelUnreadable(ModelError):
    """The path exists but cannot be read (a directory, no permission, an I/O error)."""


class NotGGUF(ModelError):
    """The file is not a GGUF model (wrong magic, unsupported version, corrupt metadata)."""


class ModelLoadFailed(ModelError):
    """llama.cpp refused the file (unsupported architecture, truncated tensors, out of memory)."""


class BackendBroken(DecodeError):
    """The installed llama.cpp build cannot decode on this machine (its probe crashed); says how to rebuild."""


# --------------------------------------------------------------- prompting


class TemplateError(DecodeError):
    """A chat template failed to parse or render; names the template and, when known, the line."""

    def __init__(self, template: str, line: int | None, message: str) -> None:
        where = f"{template}:{line}" if line is not None else template
        super().__init__(f"chat template {where}: {message}")
        self.template = template
        self.line = line
        self.detail = message


class HostileTemplate(TemplateError):
    """A chat template stopped for what it did: it ran past its time or memory limit, its output past its size
    limit, or the sandbox refused an operation. The whole analysis or render stops, not one variant of it."""


class MessagesError(DecodeError):
    """An invalid messages document; the message names the JSON path of the problem."""


class ToolChoiceError(DecodeError):
    """``--force-tool`` names a tool the request does not offer, or there are no tools to force."""


class GrammarError(DecodeError):
    """The forced-call grammar cannot be built or llama.cpp rejected it."""


class PromptTooLong(DecodeError):
    """The rendered prompt does not fit in the model's context window."""

    def __init__(self, prompt_tokens: int, n_ctx: int) -> None:
        super().__init__(
            f"the prompt is {prompt_tokens} tokens but the context holds {n_ctx}; "
            "shorten the messages/tools or raise --ctx"
        )
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx


class ModelBusy(DecodeError):
    """The model is owned by another thread or already generating (a Llama is not thread-safe)."""
