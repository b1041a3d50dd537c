"""Every demo preset crossed with every forceable format, on the packaged model.

The default ``write-file`` demo once failed in six formats: its 2,600-3,000
character ``content`` became one ``{2599,2999}`` repetition, over llama.cpp's
limit, and the window said only "llama.cpp rejected the forced-call grammar".
Each pair here builds the demo's grammar, has llama.cpp compile it, and runs
until the call's header has streamed (then stops: a few tokens each, one model
load), so no format x preset pair can fail unseen again.
"""

from __future__ import annotations

import threading

import pytest

from callscope.engine.core.errors import GrammarError
from callscope.engine.decode.demos import DEMOS
from callscope.engine.decode.grammar import compile_grammar, forceable_formats
from callscope.engine.decode.loop import SamplerSettings
from callscope.engine.decode.model import load_model
from callscope.engine.decode.session import LiveRun, RunSettings

pytestmark = pytest.mark.model

#: Enough for a content line (the quick demo allows 40 characters) and the call's opening markers.
_HEADER_TOKENS = 160


@pytest.fixture(scope="module")
def model():
    return load_model(n_ctx=2048)


@pytest.mark.parametrize("demo_name", list(DEMOS))
@pytest.mark.parametrize("format_id", forceable_formats())
def test_each_demo_streams_its_call_header_in_each_format(model, demo_name, format_id):
    demo = DEMOS[demo_name]
    tools = demo.tools()
    settings = RunSettings(
        messages=demo.messages(),
        tools=tools,
        format_id=format_id,
        max_tokens=_HEADER_TOKENS,
        sampler=SamplerSettings(repeat_penalty=demo.repeat_penalty),
        **demo.run_options(tools),
    )
    live = LiveRun(model, settings)  # builds and compiles the grammar: a rejected one raises here
    stop = threading.Event()

    def on_token(_step, analyzer):
        if any(c.kind == "header" for c in analyzer.chunks):
            stop.set()

    result = live.run(stop, on_token)
    headers = [c for c in result.analysis.chunks if c.kind == "header"]
    assert headers, f"{demo_name} x {format_id}: no call header in {result.stats.tokens} tokens"
    assert headers[0].name in {t["function"]["name"] for t in tools}


def test_llama_cpp_s_own_reason_is_in_the_error(model):
    """llama.cpp prints why it rejects a grammar on stderr only; the error carries that line."""
    with pytest.raises(GrammarError, match="number of repetitions exceeds sane defaults") as raised:
        compile_grammar("root ::= [a-z]{5000}", model.llama)
    assert "\n" not in str(raised.value) and "see the parse error above" not in str(raised.value)
