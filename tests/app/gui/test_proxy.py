"""The window's Proxy source: a recording proxy started from the window, or a session folder watched.

Real parts: the proxy server on the app's qasync loop, real clients (httpx and
the official openai SDK) on a thread of their own, the canned SSE server of
``tests/support/sse_server.py`` upstream, a real Qt session and the real main window
offscreen. Waits are on conditions (bounded), never sleeps.
"""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from callscope.dialogs.proxy import ATTACH, ProxyDialog, ProxyValues, config_from_values
from callscope.engine.analysis.analyzer import RUNNING
from callscope.engine.capture.proxy import ProxyConfig
from callscope.engine.capture.request import RequestError
from callscope.engine.inspector.proxy_turns import SessionReader, TurnList, TurnRow
from callscope.engine.recordings.replay import load_analyses
from callscope.live.proxy import ProxyController
from callscope.models.session import InspectorSession
from callscope.panes.proxy_view import ProxyView
from tests.support.gui_helpers import PARALLEL, make_window
from tests.support.protocol_streams import anthropic_stream, responses_stream
from tests.support.proxy_helpers import ProxyThread
from tests.support.sse_server import RULE_STREAMS, Scenario, clean_call, lines_of

pytestmark = pytest.mark.gui
CHAT = {"messages": [{"role": "user", "content": "weather?"}], "stream": True}


def paced(lines, pause: float = 0.15, after: int = 4):
    """The stream with a pause before each line past the first ``after``: it is seen growing."""
    return [(pause if i >= after and line else 0.0, line) for i, (_, line) in enumerate(lines)]


class Client:
    """A client request through the proxy on its own thread (the GUI thread runs the proxy)."""

    def __init__(self, call) -> None:
        self.result = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call) -> None:
        try:
            self.result = call()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            self.error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()


def post(url: str, path: str, body: dict) -> Client:
    def call():
        with httpx.Client(timeout=20) as client:
            return client.post(url + path, json=body).content
    return Client(call)


@pytest.fixture
def controller(qapp, qloop, tmp_path):
    ctl = ProxyController(InspectorSession(), loop=qloop)
    yield ctl
    ctl.shutdown()


def start(qtbot, ctl: ProxyController, upstream: str, record_dir=None, **kw) -> str:
    with qtbot.waitSignal(ctl.listening, timeout=10000):
        assert ctl.start(ProxyConfig(upstream, port=0, record_dir=record_dir, **kw))
    return ctl.server.url


@pytest.mark.usefixtures("legacy_profiles")  # the rules pinned are those of the profiles written for
def test_turns_appear_live_and_open_in_the_panes(qtbot, server, controller, tmp_path):
    upstream = server.play("gui-proxy", Scenario(paced(RULE_STREAMS["name-repeated"])))
    url = start(qtbot, controller, upstream, tmp_path)
    view = ProxyView(controller)
    qtbot.addWidget(view)
    growth: list[int] = []
    controller.session.grew.connect(lambda _t: growth.append(len(controller.session.current.steps)))
    client = post(url, "/v1/chat/completions", CHAT)
    qtbot.waitUntil(lambda: controller.showing_live, timeout=10000)  # the turn took the panes while streaming
    assert controller.session.current.finish_cause == RUNNING
    assert "in progress" in view.summaries()[0]
    qtbot.waitUntil(lambda: client.done() and controller.turns.get(1) and controller.turns.get(1).done,
                    timeout=15000)
    final = controller.session.current
    assert growth and min(growth) < len(final.steps)  # it grew in the panes before it ended
    assert final.finish_cause == "stop" and not controller.showing_live
    assert [v.rule for v in final.violations] == ["name-repeated", "client-mismatch", "client-mismatch"]
    assert final.calls[0].name == "get_weather" and not final.calls[0].reconstructs
    [line] = view.summaries()
    assert line.startswith("#1 POST /v1/chat/completions canned: chat · 1 call") and "name-repeated" in line
    # the recording replays to the report the window showed
    [replayed] = load_analyses(controller.turns.get(1).file)
    assert [v.to_json() for v in replayed.violations] == [v.to_json() for v in final.violations]
    assert replayed.calls[0].clients == final.calls[0].clients


def test_responses_and_anthropic_turns_show_in_the_window(qtbot, server, controller, tmp_path):
    upstream = server.play("gui-proxy-protocols", Scenario(lines_of(*responses_stream())))
    url = start(qtbot, controller, upstream, tmp_path)
    first = post(url, "/v1/responses", {"input": "weather?", "stream": True})
    qtbot.waitUntil(lambda: first.done() and len(controller.turns) == 1 and controller.turns.get(1).done,
                    timeout=15000)
    responses = controller.session.current
    assert responses.source.extra["protocol"] == "responses" and responses.violations == []
    assert [(c.name, c.streamed_arguments, c.reconstructs) for c in responses.calls] == [
        ("get_weather", '{"city": "Paris", "days": 3}', True)]
    server.play("gui-proxy-protocols", Scenario(lines_of(*anthropic_stream(stop_reason="end_turn"))))
    second = post(url, "/v1/messages", {"messages": CHAT["messages"], "max_tokens": 50, "stream": True})
    qtbot.waitUntil(lambda: second.done() and controller.turns.get(2) is not None and controller.turns.get(2).done,
                    timeout=15000)
    anthropic = controller.session.current  # the newest turn was followed
    assert anthropic.source.extra["protocol"] == "anthropic"
    assert "finish-reason-mismatch" in {v.rule for v in anthropic.violations}
    # an earlier turn opens again, from memory, as it was judged
    assert controller.open_turn(1)
    assert controller.session.current.source.extra["protocol"] == "responses"


@pytest.mark.usefixtures("legacy_profiles")  # the rules pinned are those of the profiles written for
def test_the_official_sdk_through_the_window_proxy_sees_what_it_sees_directly(qtbot, server, controller):
    import openai

    upstream = server.play("gui-proxy-sdk", Scenario(lines_of(*clean_call(), 'data: {"id": "x", "object": '
                                                             '"chat.completion.chunk", "created": 1, "model": "m", '
                                                             '"choices": [{"index": 0, "delta": {}, '
                                                             '"finish_reason": "tool_calls"}]}', "data: [DONE]")))
    url = start(qtbot, controller, upstream)

    def chunks(base: str):
        def call():
            sdk = openai.OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
            stream = sdk.chat.completions.create(model="m", messages=CHAT["messages"], stream=True)
            return [c.model_dump() for c in stream]
        return Client(call)

    direct, proxied = chunks(upstream), chunks(url)
    qtbot.waitUntil(lambda: direct.done() and proxied.done() and controller.turns.get(1) is not None
                    and controller.turns.get(1).done, timeout=20000)
    assert direct.error is None and proxied.error is None
    assert proxied.result == direct.result and len(direct.result) == 4
    final = controller.session.current
    # that stream names no role: the clients that need one are what role-missing is about
    assert [v.rule for v in final.violations] == ["role-missing"] and final.calls[0].reconstructs


@pytest.mark.usefixtures("legacy_profiles")  # the rules pinned are those of the profiles written for
def test_a_session_folder_is_watched_as_the_cli_proxy_writes_it(qtbot, server, controller, tmp_path):
    upstream = server.play("gui-proxy-folder", Scenario(paced(RULE_STREAMS["name-repeated"], pause=0.2)))
    with ProxyThread(upstream, tmp_path) as proxy:  # the CLI's proxy, in another thread
        client = post(proxy.url, "/v1/chat/completions", CHAT)
        proxy.wait(lambda c: c.lines.get(1), "the first lines of turn 1")
        [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
        with qtbot.waitSignal(controller.listening, timeout=5000):
            assert controller.attach(folder)
        qtbot.waitUntil(lambda: controller.turns.get(1) is not None, timeout=5000)
        assert not controller.turns.get(1).done  # listed while still streaming (its trace appeared)
        proxy.wait_turns(1)
        qtbot.waitUntil(lambda: controller.turns.get(1).done and controller.session.current.finish_cause == "stop",
                        timeout=10000)
        assert client.error is None
    final = controller.session.current
    assert [v.rule for v in final.violations] == ["name-repeated", "client-mismatch", "client-mismatch"]
    assert "name-repeated" in controller.turns.get(1).summary
    with pytest.raises(ValueError, match="not a proxy session folder"):
        ProxyController(InspectorSession()).attach(tmp_path / "nowhere")


def test_the_turn_list_reads_a_folder_incrementally(tmp_path):
    reader = SessionReader(tmp_path)
    assert reader.poll() == []
    (tmp_path / "turn-0001.jsonl").write_text("{}\n")
    [started] = reader.poll()
    assert started.number == 1 and not started.done and started.openable
    record = {"turn": 1, "stream": True, "file": "turn-0001.jsonl", "violations": ["id-repeated"], "summary": "#1 x"}
    with open(tmp_path / "turns.jsonl", "w") as out:
        out.write(json.dumps(record) + "\n" + '{"turn": 2, "stream": fal')  # the second line still being written
    [ended] = reader.poll()
    assert ended.done and ended.failed and ended.file == tmp_path / "turn-0001.jsonl"
    with open(tmp_path / "turns.jsonl", "a") as out:
        out.write('se, "summary": "#2 GET /v1/models"}\n')
    [listed] = reader.poll()
    assert listed.number == 2 and not listed.openable
    turns = TurnList()
    for n in (1, 3, 2):
        turns.put(TurnRow(n, f"#{n}"))
    assert [r.number for r in turns.rows] == [1, 2, 3] and turns.get(3).summary == "#3"


def test_dialog_values_become_a_proxy_config(qtbot, tmp_path):
    dialog = ProxyDialog()
    qtbot.addWidget(dialog)
    dialog.listen.setText("127.0.0.1:0")
    dialog.upstream.setText("http://127.0.0.1:9/v1")
    dialog.record_dir.setText(str(tmp_path))
    dialog.clients.setText("naive")
    config = config_from_values(dialog.values())
    assert (config.host, config.port, config.record_dir, config.clients) == ("127.0.0.1", 0, tmp_path, ("naive",))
    with pytest.raises(RequestError, match="client profiles"):
        config_from_values(ProxyValues(clients="curl"))
    with pytest.raises(ValueError):
        config_from_values(ProxyValues(upstream="ftp://nowhere"))
    dialog.attach_mode.setChecked(True)
    assert dialog.values().mode == ATTACH and not dialog.listen.isEnabled()


def test_the_window_starts_a_proxy_and_lists_its_turns(qtbot, server, tmp_path, monkeypatch, qloop):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    upstream = server.play("gui-proxy-window", Scenario(lines_of(*clean_call(), "data: [DONE]")))
    source = window.proxy
    assert source.action.text().startswith("Pro&xy")
    assert source.start(ProxyValues(listen="127.0.0.1:0", upstream=upstream, record_dir=str(tmp_path)))
    qtbot.waitUntil(lambda: source.controller.server is not None and bool(source.controller.status), timeout=10000)
    assert source.dock.isVisible() or not window.isVisible()
    client = post(source.controller.server.url, "/v1/chat/completions", CHAT)
    qtbot.waitUntil(lambda: client.done() and bool(source.view.summaries())
                    and source.controller.turns.get(1).done, timeout=15000)
    assert window.session.current.calls[0].name == "get_weather"
    assert "proxy turn 1" in window.source_bar.name.text() or window.session.current.name == "turn-0001"
    assert not source.start(ProxyValues(listen="nonsense:port", upstream=upstream))  # one line, in a dialog
