"""What a live run reports while it works, for a status line: the steps that take seconds before any output.

Loading weights, hashing the model file for a recording and evaluating the
prompt can each take seconds, and before the first token nothing else shows
that anything is happening. :func:`~callscope.engine.decode.model.load_model`,
:class:`~callscope.engine.decode.session.LiveRun` and :class:`~callscope.engine.decode.loop.Generation`
call these hooks; the base class ignores them all, so the engine never checks
for ``None`` and a caller overrides only what it shows. Every hook runs on the
thread that owns the model; :meth:`DecodeProgress.token` runs once per token
on the decode hot path, so an override must stay cheap (throttle any output).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callscope.engine.core.gguf import ModelInfo


class DecodeProgress:
    """Hooks for the slow steps of a live run; each default does nothing."""

    def checking_backend(self) -> None:
        """This llama.cpp build is probed once (a child process decodes one token) before its first load."""

    def loading_model(self, info: ModelInfo) -> None:
        """The model's metadata is read; its weights are about to load (the slow part)."""

    def model_loaded(self, info: ModelInfo, load_ms: float) -> None:
        """The weights are loaded (``load_ms`` is what the load took)."""

    def hashing_model(self, info: ModelInfo) -> None:
        """A recording needs the model file's sha256; reading a large file takes a while (once per file)."""

    def evaluating_prompt(self, prompt_tokens: int) -> None:
        """Generation starts: ``prompt_tokens`` are evaluated before the first token (time to first token)."""

    def token(self, tokens: int, ms: float) -> None:
        """``tokens`` tokens are generated so far, the last at ``ms`` since the request started."""


#: The shared do-nothing instance used when the caller gives no progress.
NO_PROGRESS = DecodeProgress()
