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

import json
from typing import Any

from callscope.engine.core import rules
from callscope.engine.core.wire import CONTENT, REASONING, Violation, WireChunk
from callscope.engine.streams.assembly import Call, StreamBuilder, clip, is_json
from callscope.engine.streams.reader import ProtocolReader, good_index
from callscope.engine.streams.spec import NaiveCalls, ProtocolSpec, described, function_of, schema_of
from callscope.engine.streams.sse import SseEvent
from callscope.engine.streams.writer import ProtocolWriter, WrittenCall, sse

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


# ---------------------------------------------------------------- the declaration


def _recognise(event: SseEvent, data: Any) -> bool:
    """Any ``response.*`` event (by its SSE ``event:`` or its data's ``type``)."""
    kind = data.get("type") if isinstance(data, dict) else None
    return any(isinstance(n, str) and n.startswith("response.") for n in (event.event, kind))


def request_body(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-shaped body as a Responses request: ``input``, flat function tools, ``max_output_tokens``."""
    body = dict(body)
    messages = body.pop("messages", None)
    if messages and "input" not in body:
        body["input"] = messages
    if isinstance(body.get("tools"), list):
        body["tools"] = [
            {"type": "function", "name": f.get("name"), **described(f), "parameters": schema_of(f)}
            if (f := function_of(t)) is not None else t
            for t in body["tools"]
        ]
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        body["tool_choice"] = {"type": "function", "name": choice["function"].get("name")}
    if "max_tokens" in body and "max_output_tokens" not in body:
        body["max_output_tokens"] = body.pop("max_tokens")
    return body


def _has_input(body: dict[str, Any]) -> bool:
    return bool(body.get("messages")) or bool(body.get("input"))


def naive_read(obj: dict[str, Any], calls: NaiveCalls, content: dict[int, str]) -> None:
    """The naive client: a call per announced item, ``+=`` on its argument deltas, text deltas appended."""
    mine = calls.setdefault(0, {})
    kind = obj.get("type")
    if kind == "response.output_item.added" and obj["item"].get("type") == "function_call":
        item = obj["item"]
        mine[item["id"]] = {"id": item.get("call_id") or "", "name": item.get("name") or "",
                            "arguments": item.get("arguments") or ""}
    elif kind == "response.function_call_arguments.delta":
        mine[obj["item_id"]]["arguments"] += obj["delta"]
    elif kind == "response.output_text.delta":
        content[0] = content.get(0, "") + obj["delta"]


class ResponsesWriter(ProtocolWriter):
    """An OpenAI Responses server: typed events, each item announced, streamed, finished, then ``response.completed``.

    Text is a ``message`` item (its ``output_text`` part streamed by
    ``response.output_text.delta``), reasoning a ``reasoning`` item (its summary
    streamed), a call a ``function_call`` item (``call_id``, ``name``; its
    arguments streamed by ``response.function_call_arguments.delta``). An item
    is finished (``...done`` events) when the next one opens or the response ends.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seq = 0
        self._items: list[dict[str, Any]] = []  # every output item, as finished (or being written)
        self._open: dict[str, Any] | None = None  # the item being written: its kind, item and texts
        self._call_items: dict[int, dict[str, Any]] = {}  # call number -> its item state
        self._response_id = "resp_" + self.identity.completion_id.rsplit("-", 1)[-1]

    def _event(self, kind: str, **fields: Any) -> str:
        self._seq += 1
        return sse({"type": kind, "sequence_number": self._seq - 1, **fields}, kind)

    def _response(self, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        response: dict[str, Any] = {"id": self._response_id, "object": "response", "created_at": self.identity.created,
                                    "status": status, "model": self.model, "output": output,
                                    "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
        if status == "incomplete":
            response["incomplete_details"] = {"reason": "max_output_tokens"}
        return response

    def start(self) -> list[str]:
        return [self._event("response.created", response=self._response("in_progress", [])),
                self._event("response.in_progress", response=self._response("in_progress", []))]

    def _begin(self, kind: str, item: dict[str, Any]) -> list[str]:
        """Finish the open item, announce a new one at the next output position."""
        events = self._close()
        self._open = {"kind": kind, "item": item, "index": len(self._items), "text": []}
        self._items.append(item)
        return events + [self._event("response.output_item.added", output_index=self._open["index"],
                                     item={**item, "status": "in_progress"})]

    def _close(self) -> list[str]:
        open_, self._open = self._open, None
        if open_ is None:
            return []
        item, index, text = open_["item"], open_["index"], "".join(open_["text"])
        events: list[str] = []
        if open_["kind"] == "message":
            part = {"type": "output_text", "text": text, "annotations": []}
            events += [self._event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                                   text=text),
                       self._event("response.content_part.done", item_id=item["id"], output_index=index,
                                   content_index=0, part=part)]
            item["content"] = [part]
        elif open_["kind"] == "reasoning":
            part = {"type": "summary_text", "text": text}
            events += [self._event("response.reasoning_summary_text.done", item_id=item["id"], output_index=index,
                                   summary_index=0, text=text),
                       self._event("response.reasoning_summary_part.done", item_id=item["id"], output_index=index,
                                   summary_index=0, part=part)]
            item["summary"] = [part]
        else:
            item["arguments"] = text
            events.append(self._event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                                      arguments=text))
        item["status"] = "completed"
        return events + [self._event("response.output_item.done", output_index=index, item=item)]

    def _text_item(self, kind: str) -> list[str]:
        """The open message (or reasoning) item, opened if another kind of item is open."""
        if self._open is not None and self._open["kind"] == kind:
            return []
        number = len(self._items)
        if kind == "message":
            item = {"id": f"msg_{self._response_id[5:17]}_{number}", "type": "message", "role": "assistant",
                    "content": []}
            events = self._begin(kind, item)
            return events + [self._event("response.content_part.added", item_id=item["id"],
                                         output_index=self._open["index"], content_index=0,  # type: ignore[index]
                                         part={"type": "output_text", "text": "", "annotations": []})]
        item = {"id": f"rs_{self._response_id[5:17]}_{number}", "type": "reasoning", "summary": []}
        events = self._begin(kind, item)
        return events + [self._event("response.reasoning_summary_part.added", item_id=item["id"],
                                     output_index=self._open["index"], summary_index=0,  # type: ignore[index]
                                     part={"type": "summary_text", "text": ""})]

    def events(self, chunk: WireChunk, call: WrittenCall | None) -> list[str]:
        kind = chunk.kind
        if kind in (CONTENT, REASONING) and chunk.text:
            which = "message" if kind == CONTENT else "reasoning"
            events = self._text_item(which)
            assert self._open is not None
            self._open["text"].append(chunk.text)
            name = "response.output_text.delta" if kind == CONTENT else "response.reasoning_summary_text.delta"
            where = {"content_index": 0} if kind == CONTENT else {"summary_index": 0}
            return events + [self._event(name, item_id=self._open["item"]["id"], output_index=self._open["index"],
                                         **where, delta=chunk.text)]
        if call is None:
            return []
        events = []
        state = self._call_items.get(call.number)
        if state is None:
            item = {"id": f"fc_{self._response_id[5:17]}_{call.number}", "type": "function_call", "call_id": call.id,
                    "name": call.name, "arguments": ""}
            events += self._begin("call", item)
            state = self._call_items[call.number] = self._open  # type: ignore[assignment]
        if chunk.text:
            state["text"].append(chunk.text)
            events.append(self._event("response.function_call_arguments.delta", item_id=state["item"]["id"],
                                      output_index=state["index"], delta=chunk.text))
        return events

    def end(self) -> list[str]:
        events = self._close()
        status = "incomplete" if self.final_finish == "length" else "completed"
        kind = "response.incomplete" if status == "incomplete" else "response.completed"
        return events + [self._event(kind, response=self._response(status, self._items))]

    def message(self) -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        if self.reasoning:
            output.append({"id": f"rs_{self._response_id[5:17]}_0", "type": "reasoning",
                           "summary": [{"type": "summary_text", "text": "".join(self.reasoning)}], "status": "completed"})
        if self.content:
            output.append({"id": f"msg_{self._response_id[5:17]}_{len(output)}", "type": "message", "role": "assistant",
                           "status": "completed",
                           "content": [{"type": "output_text", "text": self.text, "annotations": []}]})
        output += [{"id": f"fc_{self._response_id[5:17]}_{c.number}", "type": "function_call", "call_id": c.id,
                    "name": c.name, "arguments": c.text, "status": "completed"} for c in self.calls]
        status = "incomplete" if self.final_finish == "length" else "completed"
        return self._response(status, output)


def chat_request(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request in the chat shape (``callscope serve --model`` renders that): ``instructions`` and
    ``input`` (a string or items: messages, ``function_call``, ``function_call_output``) as messages, flat function
    tools as the OpenAI array, ``tool_choice`` and ``max_output_tokens`` renamed."""
    chat = {k: v for k, v in body.items() if k not in ("input", "instructions", "tools", "tool_choice",
                                                       "max_output_tokens")}
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str) and body["instructions"]:
        messages.append({"role": "system", "content": body["instructions"]})
    given = body.get("input")
    items = [{"role": "user", "content": given}] if isinstance(given, str) else given if isinstance(given, list) else []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call":
            call = {"id": item.get("call_id") or item.get("id") or "", "type": "function",
                    "function": {"name": item.get("name") or "", "arguments": item.get("arguments") or ""}}
            if messages and messages[-1].get("role") == "assistant" and "tool_calls" in messages[-1]:
                messages[-1]["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": item.get("call_id") or "",
                             "content": output if isinstance(output, str) else json.dumps(output)})
        elif "role" in item:
            role = "system" if item["role"] == "developer" else item["role"]
            messages.append({"role": role, "content": item.get("content")})
    chat["messages"] = messages
    if isinstance(body.get("tools"), list):
        chat["tools"] = [{"type": "function", "function": {"name": t.get("name"), **described(t),
                                                           "parameters": schema_of(t)}}
                         if isinstance(t, dict) and t.get("type") == "function" else t for t in body["tools"]]
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        chat["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
    elif choice is not None:
        chat["tool_choice"] = choice
    if "max_output_tokens" in body:
        chat["max_tokens"] = body["max_output_tokens"]
    return chat


SPEC = ProtocolSpec(
    id=PROTOCOL,
    label=ResponsesReader.label,
    path=ResponsesReader.path,
    reader=ResponsesReader,
    end_events=ENDS,
    end_text="response.completed",
    recognise=_recognise,
    naive=naive_read,
    body=request_body,
    has_input=_has_input,
    writer=ResponsesWriter,
    chat_request=chat_request,
)
