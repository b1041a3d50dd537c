"""Adding a client profile touches nothing else: a test-only profile registered from the test suite.

``tests/support/plugin_profile.py`` is one module (assembler + ``ClientProfile``) for a
client that keeps the first id and name per index. Registered, it is a ``--client``
choice for ``callscope clients`` (and capture, replay and the proxy), its verdict joins
each call's ``clients`` in the report, and it says what it ends with on the quirks;
unregistered, it is unknown again. Nothing outside the test suite is edited for it.
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main as cli_main
from callscope.engine.analysis.report import report_json
from callscope.engine.streams.clients import (
    PROFILES,
    default_profiles,
    parse_profiles,
    register_profile,
    unregister_profile,
)
from callscope.engine.streams.conformance import analyze_capture_lines
from tests.support import plugin_profile
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, chunk, lines_of

FIRST = plugin_profile.PROFILE_ID


@pytest.fixture
def first_wins():
    profile = register_profile(plugin_profile.PROFILE)
    try:
        yield profile
    finally:
        unregister_profile(FIRST)


def test_registration_is_scoped_and_checked(first_wins):
    assert PROFILES[FIRST] is first_wins and parse_profiles(f"{FIRST},naive") == (FIRST, "naive")
    assert FIRST not in default_profiles()  # default=False: only when asked for
    with pytest.raises(ValueError, match="already registered"):
        register_profile(plugin_profile.PROFILE)
    with pytest.raises(ValueError, match="built-in profiles cannot be removed"):
        unregister_profile("naive")


def test_unregistered_it_is_unknown():
    assert FIRST not in PROFILES
    with pytest.raises(ValueError, match="unknown client profile"):
        parse_profiles(FIRST)


def test_callscope_clients_shows_what_it_ends_with_on_the_quirks(first_wins, capsys):
    code = cli_main(["clients", "name_repeated", "name_fragmented", "--client", f"{FIRST},naive", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and set(out["profiles"]) == {FIRST, "naive"}
    by_stream = {s["name"]: s["clients"] for s in out["streams"]}
    assert by_stream["name_repeated"][FIRST]["outcome"] == "ok"  # the repeated name is not appended
    assert by_stream["name_repeated"]["naive"]["outcome"] == "wrong"
    assert by_stream["name_fragmented"][FIRST]["outcome"] == "wrong"  # it keeps the first piece only
    assert "get_wea" in by_stream["name_fragmented"][FIRST]["detail"]


def test_its_verdict_joins_each_call_in_a_capture(first_wins):
    header = chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                    "function": {"name": "get_weather", "arguments": ""}}]})
    again = chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                   "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]})
    analysis = analyze_capture_lines(lines_of(ROLE, header, again, FINISH_TOOLS, DONE), clients=(FIRST, "naive"))
    [call] = report_json([analysis])["runs"][0]["calls"]
    verdicts = {c["profile"]: c for c in call["clients"]}
    assert verdicts[FIRST]["matches"] and verdicts[FIRST]["name"] == "get_weather"
    assert not verdicts["naive"]["matches"] and verdicts["naive"]["name"] == "get_weatherget_weather"
