"""A capture's chunk as the server sent it: the event's bytes in a hex dump beside its parsed form, linked both ways.

"Raw chunk JSON" for a capture is callscope's normalised chunk (its own id and
model, one kind per chunk); the Event bytes tab shows the SSE event the chunk
came from, byte for byte, and picking on either side marks the other.
"""

from __future__ import annotations

import json

import pytest

from callscope.engine.inspector.event_bytes import field_at, hex_dump, parse_event
from tests.support.gui_helpers import HEADLINE, make_window

pytestmark = pytest.mark.gui

#: A server's own ids and fields, which the normalised chunk does not keep; a multi-byte character in the content.
EVENTS = [
    {"id": "srv-42", "object": "chat.completion.chunk", "model": "their-model", "system_fingerprint": "fp_1",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Héllo ✓"}}]},
    {"id": "srv-42", "object": "chat.completion.chunk", "model": "their-model",
     "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                       "function": {"name": "get_weather", "arguments": ""}}]}}]},
    {"id": "srv-42", "object": "chat.completion.chunk", "model": "their-model",
     "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": \"Paris\"}"}}]}}]},
    {"id": "srv-42", "object": "chat.completion.chunk", "model": "their-model",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
]


def _dump(tmp_path):
    body = "".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in EVENTS) + "data: [DONE]\n\n"
    path = tmp_path / "server.sse"
    path.write_text(body, encoding="utf-8")
    return path


def test_the_parsed_form_knows_the_bytes_of_every_field():
    data = f"data: {json.dumps(EVENTS[0], ensure_ascii=False)}\n".encode()
    fields = parse_event(data)
    content = next(f for f in fields if f.path == "data.choices[0].delta.content")
    assert data[content.start:content.end] == '"content": "Héllo ✓"'.encode()
    assert fields[field_at(fields, data.index("✓".encode()) + 1)] is content  # a byte inside the ✓
    assert fields[field_at(fields, 0)].path == "data" and fields[0].end == len(data) - 1
    assert hex_dump(b"data: {}").startswith("0000  64 61 74 61 3a 20 7b 7d")


def test_a_capture_shows_each_chunk_s_event_bytes_linked_both_ways(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, _dump(tmp_path))
    pane = window.chunks_view
    window.tabs.setCurrentWidget(pane)
    assert pane.details.tabText(0) == "Event bytes" and pane.details.currentWidget() is pane.bytes
    assert "normalised" in pane.details.tabText(pane.details.indexOf(pane.raw))
    chunks = window.session.state.analysis.chunks
    content = next(i for i, c in enumerate(chunks) if c.kind == "content")
    pane.select_chunk(content)
    qtbot.waitUntil(lambda: pane.bytes.current is not None)
    sent = f"data: {json.dumps(EVENTS[0], ensure_ascii=False)}\n".encode()
    assert pane.bytes.current.data == sent  # the server's bytes, its own id and fingerprint included
    assert "fp_1" not in pane.raw.toPlainText() and '"role"' not in pane.raw.toPlainText()  # the normalised chunk
    assert pane.bytes.dump.toPlainText() == hex_dump(sent, pane.bytes.row_bytes)
    # the parsed form -> the bytes
    fields = pane.bytes.current.fields
    fingerprint = next(i for i, f in enumerate(fields) if f.path == "data.system_fingerprint")
    pane.bytes.pick_field(fingerprint)
    start, end = pane.bytes.highlighted
    assert sent[start:end] == b'"system_fingerprint": "fp_1"'
    marked = pane.bytes.highlighted_text()  # per dump row: its hex part, then its text part
    assert "".join(marked[1::2]) == '"system_fingerprint": "fp_1"'
    assert marked[0].replace("  ", " ").startswith("22 73 79")  # '"sy' in the hex column
    # the bytes -> the parsed form: a byte of the ✓ picks the content field
    check = sent.index("✓".encode())
    pane.bytes.pick_byte(check)
    assert fields[pane.bytes.selected_field()].path == "data.choices[0].delta.content"
    assert sent[slice(*pane.bytes.highlighted)] == '"content": "Héllo ✓"'.encode()
    # another chunk: another event
    header = next(i for i, c in enumerate(chunks) if c.kind == "header")
    pane.select_chunk(header)
    qtbot.waitUntil(lambda: pane.bytes.current is not None and b"get_weather" in pane.bytes.current.data)


def test_a_model_run_has_no_bytes_tab(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    pane = window.chunks_view
    assert pane.details.indexOf(pane.bytes) < 0 and pane.details.tabText(0) == "Raw chunk JSON"


def test_the_bytes_tab_shows_the_cursor_s_event_when_the_window_opens_on_a_capture(qtbot, tmp_path, monkeypatch):
    """Opened while another tab is in front, a capture shows the cursor's event once its tab is (it waited for a click)."""
    window = make_window(qtbot, tmp_path, monkeypatch)
    window.tabs.setCurrentWidget(window.ttfd_view)
    assert window.open_path(str(_dump(tmp_path)))
    window.session.flush()
    pane = window.chunks_view
    window.tabs.setCurrentWidget(pane)
    qtbot.waitUntil(lambda: pane.bytes.current is not None, timeout=5000)
    assert b'"finish_reason": "tool_calls"' in pane.bytes.current.data
