"""Loading a GGUF model with llama-cpp-python, timed, owned by one thread.

The file is checked and its metadata read first (:mod:`callscope.engine.core.gguf`,
pure Python, no weights), so a bad path fails with one clear line before
llama.cpp prints pages of logs; :func:`load_model` then hands the file to
llama-cpp-python and times the load.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from typing import Any

from callscope.engine.core.errors import ModelBusy, ModelLoadFailed
from callscope.engine.core.gguf import ModelInfo, read_model_info
from callscope.engine.decode.progress import NO_PROGRESS, DecodeProgress

#: Context window used unless the caller asks otherwise (capped by the model's training context).
DEFAULT_N_CTX = 4096


_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str) -> str:
    """sha256 of the model file (recorded in trace headers); cached per (path, size, mtime)."""
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _SHA_CACHE[key] = digest.hexdigest()
    return _SHA_CACHE[key]


# ===================================================================== loading


class LoadedModel:
    """A llama-cpp-python ``Llama`` plus what callscope knows about it.

    A ``Llama`` is not thread-safe: the first thread that generates with it
    becomes its owner, and any other thread that tries gets :class:`ModelBusy`
    (hand over with :meth:`release` when no generation is running).
    """

    def __init__(self, llama: Any, info: ModelInfo, load_ms: float, n_ctx: int) -> None:
        self.llama = llama
        self.info = info
        self.load_ms = load_ms
        self.n_ctx = n_ctx
        self._owner: int | None = None
        self._busy = False
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Called by the decode loop before it touches the ``Llama``."""
        me = threading.get_ident()
        with self._lock:
            if self._owner is not None and self._owner != me:
                raise ModelBusy("the model belongs to another thread; one thread owns a Llama")
            if self._busy:
                raise ModelBusy("the model is already generating")
            self._owner = me
            self._busy = True

    def done(self) -> None:
        with self._lock:
            self._busy = False

    def release(self) -> None:
        """Give up ownership so another thread may generate (only between generations)."""
        with self._lock:
            if self._busy:
                raise ModelBusy("cannot hand over the model while it is generating")
            self._owner = None

    def to_json(self) -> dict[str, Any]:
        return {**self.info.to_json(), "load_ms": round(self.load_ms, 1), "n_ctx": self.n_ctx}


def default_threads() -> int:
    """Threads for decoding *and* prompt evaluation: half the cores (llama-cpp-python's decode default).

    llama-cpp-python would evaluate the prompt on every core. ggml's threads
    wait for each other at every operation, so when another process holds a
    core (a shared machine, the window's own thread) a thread per core stalls:
    153 prompt tokens of the packaged model took 3.9-8.7 s on two threads and
    1.3-2.6 s on one on the same loaded two-core machine, measured side by side.
    Prompt evaluation is most of the demo's time to first delta.
    """
    return max(1, (os.cpu_count() or 2) // 2)


def load_model(
    path: str | os.PathLike[str] | None = None,
    n_ctx: int | None = None,
    n_threads: int | None = None,
    seed: int = 0,
    progress: DecodeProgress | None = None,
) -> LoadedModel:
    """Check, then load a GGUF with llama-cpp-python (quietly) and time it.

    ``progress`` hears of the load once the metadata is read and when the weights are in (a
    large model takes seconds, silently otherwise)."""
    progress = NO_PROGRESS if progress is None else progress
    info = read_model_info(path)
    if n_ctx is None:
        n_ctx = min(DEFAULT_N_CTX, info.context_length or DEFAULT_N_CTX)
    if n_ctx < 16:
        raise ModelLoadFailed(info.path, f"a context of {n_ctx} tokens is too small")
    if info.context_length and n_ctx > info.context_length:
        raise ModelLoadFailed(
            info.path, f"a context of {n_ctx} tokens exceeds the {info.context_length} the model was trained for"
        )
    from callscope.engine.decode.probe import backend_known, ensure_backend

    if not backend_known():
        progress.checking_backend()
    ensure_backend(info.path)  # a build that would crash this process is refused first, in a child
    progress.loading_model(info)
    try:
        from llama_cpp import Llama
    except ImportError as exc:  # pragma: no cover - dependency missing
        raise ModelLoadFailed(info.path, f"llama-cpp-python is not installed ({exc})") from None
    if n_threads is None:
        n_threads = default_threads()
    start = time.monotonic()
    try:
        llama = Llama(
            model_path=info.path,
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_threads_batch=n_threads,  # see default_threads: one per core spins against the machine's other work
            seed=seed,
            verbose=False,
        )
    except (ValueError, RuntimeError, OSError, MemoryError) as exc:
        raise ModelLoadFailed(info.path, f"llama.cpp could not load it ({exc})") from None
    load_ms = (time.monotonic() - start) * 1000.0
    progress.model_loaded(info, load_ms)
    # llama.cpp pads the context (to 256), but llama-cpp-python sizes its token buffer by the request: use the smaller.
    usable = min(llama.n_ctx(), len(llama.input_ids))
    return LoadedModel(llama, info, load_ms, usable)
