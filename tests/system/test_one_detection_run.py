"""``run --format auto`` picks the parser the one detection picks, for every shipped and test template.

The window's Run pane (and the Template pane's Run live) builds the same
:class:`~callscope.engine.decode.session.LiveRun`, so this covers them too; the
run is prepared with the packaged model's special tokens (no token generated).
"""

from __future__ import annotations

import json

import pytest

from callscope.engine.decode.model import load_model
from callscope.engine.decode.session import LiveRun, RunSettings
from callscope.engine.templates.chat import load_template_file
from callscope.engine.templates.format_choice import choose_format
from tests.engine.templates.test_one_detection import TEMPLATES, _id
from tests.support.paths import ROOT

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("forget_derived")]


@pytest.fixture(scope="module")
def model():
    return load_model()


def test_run_picks_the_same_parser_for_every_template(model):
    tools = json.loads((ROOT / "resources" / "tools" / "weather.json").read_text(encoding="utf-8"))
    differ = {}
    for path in TEMPLATES:
        template = load_template_file(path)
        settings = RunSettings(messages=[{"role": "user", "content": "Weather in Paris?"}], tools=tools,
                               template=template, max_tokens=1)
        live = LiveRun(model, settings)
        chosen = choose_format(template, bos_token=model.info.bos_token, eos_token=model.info.eos_token).format_id
        if live.plan.format_id != chosen:
            differ[_id(path)] = (live.plan.format_id, chosen)
    assert not differ, differ
