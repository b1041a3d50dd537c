"""OpenAI Responses API streams (``/v1/responses``): typed ``response.*`` events, judged.

A function call is an output item: ``response.output_item.added`` announces it
(its ``id``, ``call_id``, ``name``), ``response.function_call_arguments.delta``
events carry its arguments by ``item_id``, ``...arguments.done`` and
``response.output_item.done`` repeat the whole arguments, and
``response.completed`` (or ``.incomplete``/``.failed``) ends the response,
with every output item again. The contract, each rule with its id:
``delta-unannounced`` (argument deltas for an item never announced),
``delta-after-done``, ``done-mismatch`` (a ``.done``, a finished item or the
completed response whose arguments differ from the concatenated deltas),
``header-incomplete`` (an item without ``call_id`` or ``name``),
``malformed-chunk``, ``finish-reason-mismatch`` (a completed response whose
call arguments do not parse), ``stream-error`` (an ``error`` event, a failed
response) and ``stream-truncated`` (no ``response.completed``).
"""

from __future__ import annotations

from typing import Any

from callscope.engine.core import rules
from callscope.engine.core.wire import Violation
from callscope.engine.streams.assembly import Call, StreamBuilder, clip, is_json
from callscope.engine.streams.reader import ProtocolReader, good_index
from callscope.engine.streams.sse import SseEvent

PROTOCOL = "responses"
ENDS = ("response.completed", "response.incomplete", "response.failed")


class ResponsesReader(ProtocolReader):
    protocol = PROTOCOL
    label = "OpenAI Responses"
    path = "/v1/responses"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._items: dict[str, Call] = {}
        self.end_event: str | None = None
        self.incomplete_reason: str | None = None

    def chunk(self, step: int, ms: float | None, silence: float, event: SseEvent, obj: dict[str, Any]) -> None:
        builder = self.primary
        kind = self.typed(builder, step, event, obj)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, builder, step, ms, silence, obj)
        elif kind == "error":
            message = obj.get("message") or obj.get("error") or obj
            builder.violate(rules.STREAM_ERROR, step, f"server sent an error event: {clip(str(message))}")

    # ------------------------------------------------------------ events

    def _response(self, builder: StreamBuilder, step: int, ms: float | None, silence: float,
                  obj: dict[str, Any]) -> None:
        response = obj.get("response")
        if not isinstance(response, dict):
            self.wrong_type(builder, step, "response", response, "an object")
            return
        self.take_identity(response.get("id"), response.get("created_at"), response.get("model"))
        kind = obj["type"]
        if kind not in ENDS:
            return
        self.end_event = kind
        status = response.get("status")
        reason = status if isinstance(status, str) and status else kind.removeprefix("response.")
        details = response.get("incomplete_details")
        if isinstance(details, dict) and isinstance(details.get("reason"), str):
            self.incomplete_reason = details["reason"]
        builder.finish_reason_at(step, ms, reason)
        if kind == "response.failed":
            error = response.get("error")
            message = error.get("message", error) if isinstance(error, dict) else error
            builder.violate(rules.STREAM_ERROR, step, f"the response failed: {clip(str(message))}")
        output = response.get("output")
        if isinstance(output, list):
            for item in output:
                if isinstance(item, dict) and item.get("type") == "function_call":
                    self._compare_done(builder, step, item, f"{kind}'s output")

    def _added(self, builder: StreamBuilder, step: int, ms: float | None, silence: float,
               obj: dict[str, Any]) -> None:
        item = obj.get("item")
        if not isinstance(item, dict):
            self.wrong_type(builder, step, "item", item, "an object")
            return
        if item.get("type") == "message":
            builder.role(step, ms)
            return
        if item.get("type") != "function_call":
            return
        index = obj.get("output_index")
        if not good_index(index):
            self.wrong_type(builder, step, "output_index", index, "an output position 0, 1, 2...")
            index = len(builder.calls)
        item_id = item.get("id") if isinstance(item.get("id"), str) else None
        call_id = item.get("call_id") if isinstance(item.get("call_id"), str) and item.get("call_id") else None
        name = item.get("name") if isinstance(item.get("name"), str) and item.get("name") else None
        arguments = item.get("arguments") if isinstance(item.get("arguments"), str) else ""
        call = builder.open_call(step, ms, silence, index, call_id, name, arguments)
        self._items[item_id or f"#{index}"] = call
        missing = [what for what, ok in (("id", item_id is not None), ("call_id", call_id is not None),
                                         ("name", name is not None)) if not ok]
        if missing:
            builder.once(call, rules.HEADER_INCOMPLETE, step,
                         f"function_call item at output {index} announced without {', '.join(missing)}")

    def _item(self, builder: StreamBuilder, step: int, ms: float | None, obj: dict[str, Any]) -> Call | None:
        """The call an arguments event names by ``item_id``; an unannounced one is opened (and flagged)."""
        item_id = obj.get("item_id")
        call = self._items.get(item_id) if isinstance(item_id, str) else None
        if call is None:
            index = obj.get("output_index")
            call = self._items.get(f"#{index}")
        if call is not None:
            return call
        index = obj.get("output_index")
        index = index if good_index(index) else len(builder.calls)
        builder.violate(rules.DELTA_UNANNOUNCED, step,
                        f"{obj.get('type')} for item {item_id!r}, which no response.output_item.added announced; "
                        "clients have nowhere to put it", index)
        call = builder.open_call(step, ms, 0.0, index, None, None)
        call.reported.add(rules.DELTA_UNANNOUNCED)
        self._items[item_id if isinstance(item_id, str) else f"#{index}"] = call
        return call

    def _delta(self, builder: StreamBuilder, step: int, ms: float | None, silence: float,
               obj: dict[str, Any]) -> None:
        delta = obj.get("delta")
        if not isinstance(delta, str):
            self.wrong_type(builder, step, "function_call_arguments.delta", delta, "a string")
            return
        call = self._item(builder, step, ms, obj)
        if call is None:
            return
        if call.done:
            call.corrupted = True
            builder.once(call, rules.DELTA_AFTER_DONE, step,
                         f"an arguments delta for call {call.slot} after its .done; the arguments were final")
        builder.fragment(step, ms, silence, call, delta)

    def _args_done(self, builder: StreamBuilder, step: int, ms: float | None, silence: float,
                   obj: dict[str, Any]) -> None:
        call = self._item(builder, step, ms, obj)
        if call is None:
            return
        self._compare_done(builder, step, {"arguments": obj.get("arguments"), "name": obj.get("name")},
                           "function_call_arguments.done", call)
        call.done = True

    def _item_done(self, builder: StreamBuilder, step: int, ms: float | None, silence: float,
                   obj: dict[str, Any]) -> None:
        item = obj.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            call = self._compare_done(builder, step, item, "response.output_item.done")
            if call is not None:
                call.done = True

    def _compare_done(self, builder: StreamBuilder, step: int, item: dict[str, Any], where: str,
                      call: Call | None = None) -> Call | None:
        """A finished item's arguments (and name) against what the deltas built: ``done-mismatch`` if they differ."""
        if call is None:
            call = self._items.get(item.get("id")) if isinstance(item.get("id"), str) else None
        if call is None:
            return None
        arguments = item.get("arguments")
        if isinstance(arguments, str) and arguments != call.arguments():
            builder.once(call, rules.DONE_MISMATCH, step,
                         f"{where} has arguments {clip(arguments, 40)} but the deltas built "
                         f"{clip(call.arguments(), 40)}: clients that read deltas and clients that read the done "
                         "event now disagree")
        name = item.get("name")
        if isinstance(name, str) and name and call.name is not None and name != call.name:
            builder.once(call, rules.DONE_MISMATCH, step, f"{where} names the call {name!r}, announced as {call.name!r}")
        return call

    def _text(self, builder: StreamBuilder, step: int, ms: float | None, silence: float,
              obj: dict[str, Any]) -> None:
        delta = obj.get("delta")
        if isinstance(delta, str) and delta:
            builder.content(step, ms, delta)

    def _reasoning(self, builder: StreamBuilder, step: int, ms: float | None, silence: float,
                   obj: dict[str, Any]) -> None:
        delta = obj.get("delta")
        if isinstance(delta, str) and delta:
            builder.reasoning(step, ms, delta)

    # ------------------------------------------------------------ the end

    def finished_properly(self) -> bool:
        return self.end_event is not None

    def missing_end(self) -> list[str]:
        return [] if self.end_event else ["response.completed"]

    def truncated(self, builder: StreamBuilder) -> bool:
        return self.end_event is None

    def finish_cause(self, builder: StreamBuilder) -> str:
        return "length" if self.incomplete_reason == "max_output_tokens" else "stop"

    def end(self, builder: StreamBuilder, choice: int, truncated: bool) -> list[Violation]:
        if self.end_event != "response.completed":
            return []
        cut = [c for c in builder.calls if not c.corrupted and not is_json(c.arguments())]
        if not cut:
            return []
        return [Violation(rules.FINISH_REASON_MISMATCH, builder.finish_step.step,
                          f"the response completed, but the arguments of call {cut[0].slot} do not parse (cut off?): "
                          "that response is incomplete", cut[0].index)]


_HANDLERS = {
    "response.created": ResponsesReader._response,
    "response.in_progress": ResponsesReader._response,
    "response.queued": ResponsesReader._response,
    "response.completed": ResponsesReader._response,
    "response.incomplete": ResponsesReader._response,
    "response.failed": ResponsesReader._response,
    "response.output_item.added": ResponsesReader._added,
    "response.output_item.done": ResponsesReader._item_done,
    "response.function_call_arguments.delta": ResponsesReader._delta,
    "response.function_call_arguments.done": ResponsesReader._args_done,
    "response.output_text.delta": ResponsesReader._text,
    "response.reasoning_summary_text.delta": ResponsesReader._reasoning,
    "response.reasoning_text.delta": ResponsesReader._reasoning,
}
