"""Fixtures the whole-process tests share (each module still gets its own instance: they are module-scoped)."""

from tests.support.llama_server import llama_server  # noqa: F401 - the fixture, for every module here
