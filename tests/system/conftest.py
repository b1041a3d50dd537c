"""Fixtures the whole-process tests share (module-scoped: each module gets its own instance)."""

import pytest

from tests.support.llama_server import llama_server  # noqa: F401 - the fixture, for every module here


@pytest.fixture(scope="module")
def model():
    """The packaged model, loaded once per module (a test using it is marked ``model``: see requirements.py)."""
    from callscope.engine.decode.model import load_model

    return load_model()
