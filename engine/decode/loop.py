"""The token loop: one llama-cpp-python generation, token by token, with honest timing.

Per token it yields the time since the request started (monotonic clock, read
once the token's bytes are known), the token id and the bytes the token added.
The bytes come from detokenizing the *whole* generated prefix (llama.cpp's
``llama_detokenize``, ``unparse_special`` so control markers such as
``[TOOL_CALLS]`` appear) and taking what is new: a token may end in the middle
of a UTF-8 character, so pieces are bytes and are never decoded one by one.
Prompt processing (time to first token) is reported on its own.

llama-cpp-python has no cancel call; :class:`Generation` checks a stop flag
between tokens, so a cancel takes effect before the next decode starts. The
prompt is evaluated here, :data:`PREFILL_BATCH` tokens at a time with the flag
checked between batches (``Llama.generate`` would evaluate a long prompt in one
uninterruptible call), so Stop during prompt evaluation waits for one batch,
not the whole prompt; ``generate`` then finds the prompt in its cache and
decodes from its last token. One thread owns the ``Llama``
(:meth:`LoadedModel.acquire`); nothing else touches it during a generation.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from callscope.engine.core.causes import CANCELLED, ERROR, LENGTH, STOP
from callscope.engine.core.errors import PromptTooLong
from callscope.engine.decode.model import LoadedModel
from callscope.engine.decode.progress import NO_PROGRESS, DecodeProgress

#: Prompt tokens evaluated between two looks at the stop flag (a cancel waits for at most one batch).
PREFILL_BATCH = 64


@dataclass(frozen=True, slots=True)
class SamplerSettings:
    """Sampling parameters of ``Llama.generate`` (recorded in trace headers)."""

    temperature: float = 0.7
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    seed: int = 1  # the demo seed: SmolLM2 calls both sample tools with it

    def generate_kwargs(self) -> dict[str, Any]:
        return {
            "temp": self.temperature,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "min_p": self.min_p,
            "repeat_penalty": self.repeat_penalty,
        }

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class TokenStep:
    """One generated token: its number (from 1), id, the bytes it added, and when they were available."""

    index: int
    token: int
    data: bytes
    ms: float


@dataclass(slots=True)
class GenerationStats:
    prompt_tokens: int = 0
    tokens: int = 0
    ttft_ms: float | None = None  # prompt processing + first token
    end_ms: float | None = None
    cause: str | None = None
    error: str | None = None
    token_ids: list[int] = field(default_factory=list)
    #: The token budget after the context took its share (less than asked when the prompt left no room).
    max_tokens: int | None = None
    context_limited: bool = False

    @property
    def decode_tokens_per_s(self) -> float | None:
        """Steady decode rate: tokens after the first over the time after the first."""
        if self.tokens < 2 or self.ttft_ms is None or self.end_ms is None or self.end_ms <= self.ttft_ms:
            return None
        return (self.tokens - 1) * 1000.0 / (self.end_ms - self.ttft_ms)

    def to_json(self) -> dict[str, Any]:
        rate = self.decode_tokens_per_s
        return {
            "prompt_tokens": self.prompt_tokens,
            "tokens": self.tokens,
            "ttft_ms": None if self.ttft_ms is None else round(self.ttft_ms, 1),
            "end_ms": None if self.end_ms is None else round(self.end_ms, 1),
            "tokens_per_s": None if rate is None else round(rate, 1),
            "cause": self.cause,
            "error": self.error,
        }


class _PrefixDetokenizer:
    """Detokenizes the whole generated prefix each step (in C) and returns the new bytes.

    For byte-level vocabularies that equals the token's own piece; for
    SentencePiece ones the first token loses its leading space exactly as a
    whole-text decode does. If a vocabulary ever rewrites earlier text, the
    token's own piece is used so the byte stream stays append-only.
    """

    def __init__(self, llama: Any, capacity: int) -> None:
        import llama_cpp

        self._llama_cpp = llama_cpp
        self._vocab = llama._model.vocab
        self._tokens = (llama_cpp.llama_token * max(capacity, 1))()
        self._n = 0
        self._buf_size = 4096
        self._buf = ctypes.create_string_buffer(self._buf_size)
        self._piece = ctypes.create_string_buffer(256)
        self._text = b""

    def push(self, token: int) -> bytes:
        self._tokens[self._n] = token
        self._n += 1
        text = self._detokenize()
        if text.startswith(self._text):
            added = text[len(self._text) :]
            self._text = text
        else:  # pragma: no cover - only vocabularies with whole-text space cleanup
            added = self._token_piece(token)
            self._text += added
        return added

    def _detokenize(self) -> bytes:
        lc = self._llama_cpp
        while True:
            n = lc.llama_detokenize(self._vocab, self._tokens, self._n, self._buf, self._buf_size, False, True)
            if n >= 0:
                return ctypes.string_at(self._buf, n)
            self._buf_size = max(-n, self._buf_size * 2)
            self._buf = ctypes.create_string_buffer(self._buf_size)

    def _token_piece(self, token: int) -> bytes:  # pragma: no cover - see push()
        n = self._llama_cpp.llama_token_to_piece(self._vocab, token, self._piece, len(self._piece), 0, True)
        if n < 0:
            self._piece = ctypes.create_string_buffer(-n)
            n = self._llama_cpp.llama_token_to_piece(self._vocab, token, self._piece, len(self._piece), 0, True)
        return self._piece.raw[:n]


class Generation:
    """Iterate to generate: yields :class:`TokenStep`; afterwards ``stats`` says how and why it ended.

    ``start`` is the request's start on :func:`time.monotonic` (defaults to
    when iteration begins), so templating/tokenizing can count if the caller
    wants. A llama.cpp failure mid-generation ends it with cause ``error``
    (message in ``stats.error``) instead of raising: the tokens so far remain
    valid and are analysed. ``progress`` hears when the prompt evaluation
    starts and of every token (a status line; see :mod:`~callscope.engine.decode.progress`).
    """

    def __init__(
        self,
        model: LoadedModel,
        prompt_tokens: list[int],
        max_tokens: int = 256,
        sampler: SamplerSettings | None = None,
        grammar: Any = None,
        stop: threading.Event | None = None,
        start: float | None = None,
        progress: DecodeProgress | None = None,
    ) -> None:
        if len(prompt_tokens) >= model.n_ctx:
            raise PromptTooLong(len(prompt_tokens), model.n_ctx)
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        self.model = model
        self.prompt_tokens = list(prompt_tokens)
        self.sampler = sampler or SamplerSettings()
        self.grammar = grammar
        self.stop = stop or threading.Event()
        self.start = start
        self.progress = NO_PROGRESS if progress is None else progress
        room = model.n_ctx - len(prompt_tokens)
        self.max_tokens = min(max_tokens, room)
        self.context_limited = max_tokens > room
        self.stats = GenerationStats(
            prompt_tokens=len(prompt_tokens), max_tokens=self.max_tokens, context_limited=self.context_limited
        )

    def __iter__(self) -> Iterator[TokenStep]:
        model = self.model
        model.acquire()
        try:
            yield from self._run()
        finally:
            model.done()

    def _run(self) -> Iterator[TokenStep]:
        import llama_cpp

        llama = model_llama = self.model.llama
        vocab = model_llama._model.vocab
        is_eog = llama_cpp.llama_vocab_is_eog
        stats = self.stats
        start = self.start if self.start is not None else time.monotonic()
        clock = time.monotonic
        detok = _PrefixDetokenizer(llama, self.max_tokens)
        if self.stop.is_set():
            stats.cause, stats.end_ms = CANCELLED, (clock() - start) * 1000.0
            return
        llama.reset()  # full prefill every run: honest time to first token, reproducible sampling
        llama.set_seed(self.sampler.seed)
        progress = self.progress
        progress.evaluating_prompt(len(self.prompt_tokens))
        on_token = progress.token
        try:
            if not self._prefill(llama):
                stats.cause, stats.end_ms = CANCELLED, round((clock() - start) * 1000.0, 3)
                return
        except (RuntimeError, ValueError, OSError, MemoryError, IndexError) as exc:
            stats.cause, stats.error = ERROR, f"{type(exc).__name__}: {exc}"
            stats.end_ms = round((clock() - start) * 1000.0, 3)
            return
        tokens = llama.generate(self.prompt_tokens, grammar=self.grammar, **self.sampler.generate_kwargs())
        cause = LENGTH
        try:
            while True:
                try:
                    token = next(tokens)
                except StopIteration:
                    cause = STOP
                    break
                if is_eog(vocab, token):
                    cause = STOP
                    break
                data = detok.push(token)
                ms = round((clock() - start) * 1000.0, 3)
                stats.tokens += 1
                stats.token_ids.append(token)
                if stats.ttft_ms is None:
                    stats.ttft_ms = ms
                stats.end_ms = ms
                on_token(stats.tokens, ms)
                yield TokenStep(stats.tokens, token, data, ms)
                if stats.tokens >= self.max_tokens:
                    cause = LENGTH
                    break
                if self.stop.is_set():
                    cause = CANCELLED
                    break
        except (RuntimeError, ValueError, OSError, MemoryError, IndexError) as exc:
            cause = ERROR
            stats.error = f"{type(exc).__name__}: {exc}"
        finally:
            tokens.close()
        stats.cause = cause
        stats.end_ms = round((clock() - start) * 1000.0, 3)


    def _prefill(self, llama: Any) -> bool:
        """Evaluate all but the prompt's last token in batches, the stop flag checked between them.

        False when stopped. ``generate`` then re-evaluates only the last token (its
        logits are what the first sample needs) and samples from there.
        """
        head = self.prompt_tokens[:-1]
        for at in range(0, len(head), PREFILL_BATCH):
            if self.stop.is_set():
                return False
            llama.eval(head[at : at + PREFILL_BATCH])
        return not self.stop.is_set()


def tokenize_prompt(model: LoadedModel, prompt: str) -> list[int]:
    """Prompt text -> tokens, parsing special tokens; BOS added only if the model wants it and the text lacks it."""
    info = model.info
    add_bos = info.add_bos if info.add_bos is not None else True
    if info.bos_token and prompt.startswith(info.bos_token):
        add_bos = False
    return model.llama.tokenize(prompt.encode("utf-8"), add_bos=add_bos, special=True)
