"""Chat Completions streams (``/v1/chat/completions``): ``chat.completion.chunk`` events, judged.

What the stream meant is assembled per choice and per tool-call ``index``:
the first delta of an index opens the call (its ``id``, ``type``,
``function.name``), later ``function.arguments`` fragments are concatenated; a
name split over chunks is joined (and flagged: clients that overwrite the name
keep its last piece), and an id or name re-sent on a later chunk is taken once
(and flagged: clients that concatenate every string field, as openai-python's
stream helper does, build it twice). The contract, each rule with its id
(:mod:`callscope.engine.core.rules`):

- shape: ``choices``/``delta``/``tool_calls``/``function`` of the wrong JSON
  type, a negative or huge index, an unknown ``finish_reason``, an ``object``
  other than ``chat.completion.chunk`` (``malformed-chunk``); arguments that are
  not a string (``arguments-not-string``);
- choices: an index other than 0 unless ``n`` asked for more
  (``choice-index-unexpected``); each choice is assembled on its own;
- tool calls: no ``index`` (``index-missing``); indices not 0, 1, 2... in order
  of first appearance (``index-not-sequential``); a first delta without ``id``,
  ``type`` or ``name`` (``header-incomplete``); ``id-repeated``, ``id-changed``,
  ``name-repeated`` (a chunk repeating a name already sent), ``name-fragmented``
  (a name sent in pieces), ``field-null`` (an explicit null on a later fragment), ``index-reused``,
  ``duplicated-arguments``; the legacy ``delta.function_call`` (recognised, shown
  as the call when no ``tool_calls`` came, judged: ``legacy-function-call``);
- the end: ``finish_reason`` against what arrived (``finish-reason-mismatch``:
  ``tool_calls`` on arguments that were cut off, calls ending in ``stop``...);
  no finish or no ``[DONE]`` (``stream-truncated``); an error object
  (``stream-error``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from callscope.engine.analysis.analyzer import StepTime
from callscope.engine.core import rules
from callscope.engine.core.json_text import dumps
from callscope.engine.core.wire import CONTENT, FINISH, REASONING, Violation, WireChunk
from callscope.engine.streams.assembly import Call, StreamBuilder, clip, is_json
from callscope.engine.streams.reader import ProtocolReader, good_index, json_type
from callscope.engine.streams.spec import NOT_JSON, NaiveCalls, ProtocolSpec
from callscope.engine.streams.sse import SseEvent
from callscope.engine.streams.writer import ProtocolWriter, WrittenCall, sse

PROTOCOL = "chat"
CHUNK_OBJECT = "chat.completion.chunk"
FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter", "function_call")


@dataclass(slots=True)
class _Choice:
    """Per-choice state beyond the builder: calls by wire index, the legacy function_call."""

    builder: StreamBuilder
    by_index: dict[int, Call] = field(default_factory=dict)
    role_step: int | None = None  # the first chunk that said role: assistant
    legacy: Call | None = None  # a legacy function_call kept aside (tool_calls came too)
    legacy_step: int | None = None
    legacy_shown: bool = False


class ChatReader(ProtocolReader):
    protocol = PROTOCOL
    label = "Chat Completions"
    path = "/v1/chat/completions"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.done_step: int | None = None
        self._state: dict[int, _Choice] = {}

    def state(self, choice: int) -> _Choice:
        found = self._state.get(choice)
        if found is None:
            found = self._state[choice] = _Choice(self.builder(choice))
        return found

    # ------------------------------------------------------------ events

    def event(self, step: int, ms: float | None, silence: float, event: SseEvent) -> None:
        if event.data.strip() == "[DONE]":
            self.decoded = None
            if self.done_step is None:
                self.done_step = step
            return
        super().event(step, ms, silence, event)

    def chunk(self, step: int, ms: float | None, silence: float, event: SseEvent, obj: dict[str, Any]) -> None:
        self.take_identity(obj.get("id"), obj.get("created"), obj.get("model"))
        if obj.get("error") is not None and not obj.get("choices"):
            error = obj["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            self.primary.violate(rules.STREAM_ERROR, step, f"server sent an error in the stream: {clip(str(message))}")
            return
        kind = obj.get("object")
        if kind != CHUNK_OBJECT:
            self.malformed(self.primary, step, "object",
                           f"object is {clip(str(kind), 40)}, not {CHUNK_OBJECT!r}: the official SDK's stream "
                           "helper skips such chunks")
        if "choices" not in obj:
            if "usage" not in obj:
                self.malformed(self.primary, step, "choices", "chunk without a choices array")
            return
        choices = obj["choices"]
        if not isinstance(choices, list):
            self.wrong_type(self.primary, step, "choices", choices, "an array")
            return
        for choice in choices:  # an empty list is a usage-only chunk (stream_options.include_usage)
            self._choice(step, ms, silence, choice)

    def _choice(self, step: int, ms: float | None, silence: float, choice: Any) -> None:
        # ``self.primary`` (a sort of the choices) only where a verdict needs it: this runs on every chunk.
        if not isinstance(choice, dict):
            self.wrong_type(self.primary, step, "choices[]", choice, "an object")
            return
        index = choice.get("index")
        if not good_index(index):
            if index is None:
                self.malformed(self.primary, step, "choices[].index", "choice without an index")
            else:
                self.wrong_type(self.primary, step, "choices[].index", index, "a choice number 0, 1, 2...")
            index = 0  # lenient: the one choice there is
        elif index >= self.expected_choices:
            builder = self.builder(index)
            builder.once(None, rules.CHOICE_INDEX_UNEXPECTED, step,
                         f"choice index {index}, but the request asked for {self.expected_choices} choice"
                         f"{'' if self.expected_choices == 1 else 's'} (index 0 to {self.expected_choices - 1})")
        state = self.state(index)
        builder = state.builder
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._delta(step, ms, silence, state, delta)
        elif delta is not None:
            self.wrong_type(builder, step, "choices[].delta", delta, "an object")
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            if reason not in FINISH_REASONS:
                self.malformed(builder, step, "finish_reason",
                               f"finish_reason {clip(reason, 40)} is not one of {', '.join(FINISH_REASONS)}")
            builder.finish_reason_at(step, ms, reason)
        elif reason is not None and reason != "":
            self.wrong_type(builder, step, "finish_reason", reason, "a string or null")

    def _delta(self, step: int, ms: float | None, silence: float, state: _Choice, delta: dict[str, Any]) -> None:
        builder = state.builder
        role = delta.get("role")
        if role:
            builder.role(step, ms)
            if role == "assistant" and state.role_step is None:
                state.role_step = step
        reasoning = delta.get("reasoning_content")
        if reasoning is None:
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            builder.reasoning(step, ms, reasoning)
        content = delta.get("content")
        if isinstance(content, str):
            if content:
                builder.content(step, ms, content)
        elif content is not None:
            self.wrong_type(builder, step, "delta.content", content, "a string or null")
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for entry in tool_calls:
                if isinstance(entry, dict):
                    self._tool_delta(step, ms, silence, state, entry)
                else:
                    self.wrong_type(builder, step, "delta.tool_calls[]", entry, "an object")
        elif tool_calls is not None:
            self.wrong_type(builder, step, "delta.tool_calls", tool_calls, "an array")
        function_call = delta.get("function_call")
        if isinstance(function_call, dict):
            self._legacy(step, ms, silence, state, function_call)
        elif function_call is not None:
            self.wrong_type(builder, step, "delta.function_call", function_call, "an object")

    # ------------------------------------------------------------ tool calls

    def _fields(self, step: int, builder: StreamBuilder, entry: dict[str, Any], where: str,
                function: Any) -> tuple[str | None, str | None, str]:
        """id, name and arguments of a tool-call delta (or a legacy function_call), shapes checked."""
        if not isinstance(function, dict):
            if function is not None:
                self.wrong_type(builder, step, f"{where}.function", function, "an object")
            function = {}
        call_id = entry.get("id")
        if call_id is not None and not isinstance(call_id, str):
            self.wrong_type(builder, step, f"{where}.id", call_id, "a string")
            call_id = None
        kind = entry.get("type")
        if kind is not None and kind != "function":
            self.malformed(builder, step, f"{where}.type", f"{where}.type is {clip(str(kind), 40)}, not 'function'")
        name = function.get("name")
        if name is not None and not isinstance(name, str):
            self.wrong_type(builder, step, f"{where}.function.name", name, "a string")
            name = None
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            builder.once(None, rules.ARGUMENTS_NOT_STRING, step,
                         f"function.arguments sent as {json_type(arguments)}, not a string; clients concatenate "
                         "strings (the official SDK raises, others drop it)")
            arguments = dumps(arguments, ensure_ascii=False)
        return call_id or None, name or None, arguments or ""

    def _tool_delta(self, step: int, ms: float | None, silence: float, state: _Choice, entry: dict[str, Any]) -> None:
        builder = state.builder
        call_id, name, arguments = self._fields(step, builder, entry, "tool_calls[]", entry.get("function"))
        index = entry.get("index")
        if index is None:
            call = self._call_without_index(step, builder, call_id)
            wire_index = call.index if call is not None else len(builder.calls)
        elif not good_index(index):
            self.wrong_type(builder, step, "tool_calls[].index", index, "a call number 0, 1, 2...")
            wire_index = index if isinstance(index, int) and not isinstance(index, bool) else len(builder.calls)
            call = state.by_index.get(wire_index)
        else:
            wire_index = index
            call = state.by_index.get(index)
        if call is None:
            self._open(step, ms, silence, state, wire_index, call_id, name, arguments, entry)
            return
        self._nulls(step, builder, call, entry)
        if self._reused(step, builder, call, call_id, name, arguments):
            builder.fragment(step, ms, silence, call, arguments, call_id, name)
            return
        self._repeats(step, ms, builder, call, call_id, name)
        builder.fragment(step, ms, silence, call, arguments, call_id, name)

    def _open(self, step: int, ms: float | None, silence: float, state: _Choice, index: int, call_id: str | None,
              name: str | None, arguments: str, entry: dict[str, Any]) -> Call:
        builder = state.builder
        expected = len(builder.calls)
        shown_index = index if good_index(index) else expected
        if good_index(index) and index != expected and "index" in entry:
            builder.once(None, rules.INDEX_NOT_SEQUENTIAL, step,
                         f"call {expected + 1} of the message came with index {index}, expected {expected}: indices "
                         "must be 0, 1, 2... in order of first appearance (the official SDK indexes a list by them)")
        call = builder.open_call(step, ms, silence, shown_index, call_id, name, arguments)
        state.by_index.setdefault(index, call)
        missing = [what for what, ok in (("id", call_id is not None), ("type", entry.get("type") is not None),
                                         ("function.name", name is not None)) if not ok]
        if missing:
            builder.once(call, rules.HEADER_INCOMPLETE, step,
                         f"the first delta of call {call.slot} has no {', no '.join(missing)}: a client cannot "
                         "announce the call" + (" or answer it" if call_id is None else ""))
        return call

    def _repeats(self, step: int, ms: float | None, builder: StreamBuilder, call: Call, call_id: str | None,
                 name: str | None) -> None:
        """An id or a name on a later fragment: a repeat, a change, or (a name) the rest of a split name."""
        if call_id is not None:
            if call.id is None:
                call.id = call_id
            elif call_id == call.id:
                builder.once(call, rules.ID_REPEATED, step,
                             f"id {clip(call_id, 40)} sent again on a later fragment; clients that concatenate "
                             "string fields (openai-python's stream helper) get it twice")
            elif call_id not in call.ids_reported:
                call.ids_reported.add(call_id)
                builder.violate(rules.ID_CHANGED, step, f"id changed from {call.id!r} to {call_id!r} mid-call",
                                call.index)
        if name is None:
            return
        so_far = call.name
        if so_far is None:
            builder.name_more(step, ms, call, name)
        elif name == so_far:
            builder.once(call, rules.NAME_REPEATED, step,
                         f"function.name {name!r} sent again on a later fragment; a client doing name += ... "
                         f"gets {(name * 2)!r}")
        elif name.startswith(so_far) or so_far.startswith(name):
            builder.once(call, rules.NAME_REPEATED, step,
                         f"function.name re-sent ({so_far!r}, then {name!r}): clients that concatenate get "
                         f"{(so_far + name)!r}")
            if len(name) > len(so_far):
                call.name_pieces[:] = []
                builder.name_more(step, ms, call, name)
        else:
            builder.once(call, rules.NAME_FRAGMENTED, step,
                         f"function.name arrives in pieces ({so_far!r}, then {name!r}): clients that overwrite the "
                         f"name keep {name!r}, the AI SDK makes a call of each piece")
            builder.name_more(step, ms, call, name)  # a name split over chunks: its next piece

    def _nulls(self, step: int, builder: StreamBuilder, call: Call, entry: dict[str, Any]) -> None:
        """``id``, ``type`` or ``function.name`` sent as an explicit null on a later fragment."""
        function = entry.get("function")
        nulls = [k for k in ("id", "type") if k in entry and entry[k] is None]
        if isinstance(function, dict) and "name" in function and function["name"] is None:
            nulls.append("function.name")
        if nulls:
            builder.once(call, rules.FIELD_NULL, step,
                         f"a later fragment of call {call.slot} sends {', '.join(nulls)} as null instead of leaving "
                         "it out: openai-python's stream helper takes the null type and fails")

    def _call_without_index(self, step: int, builder: StreamBuilder, call_id: str | None) -> Call | None:
        """Which call an index-less delta belongs to, the way lenient clients guess: by id, else the last one."""
        builder.once(None, rules.INDEX_MISSING, step,
                     "tool-call delta without an index; clients cannot tell which call it extends "
                     "(the official SDK raises TypeError)")
        if call_id is not None:
            for call in builder.calls:
                if call.id == call_id:
                    return call
            return None  # an unseen id: a new call
        return builder.calls[-1] if builder.calls else None

    def _reused(self, step: int, builder: StreamBuilder, call: Call, call_id: str | None, name: str | None,
                arguments: str) -> bool:
        """A second call on an index whose arguments are already complete: another id, another name,
        or the same name opening new, different arguments. (The same header repeated with no new
        arguments is ``id-repeated``/``name-repeated``; the same arguments again are ``duplicated-arguments``.)"""
        if not call.length or (call_id is None and name is None):
            return False
        other_id = call_id is not None and call.id is not None and call_id != call.id
        other_name = name is not None and call.name is not None and name != call.name
        opens = name is not None and arguments.lstrip()[:1] in ("{", "[")
        if not (other_id or other_name or opens):
            return False  # the usual case, kept cheap: no join, no JSON parse per fragment
        sent = call.arguments()
        if not (other_id or other_name) and (sent.startswith(arguments) or arguments.startswith(sent)):
            return False  # the same arguments again: duplicated-arguments, not a second call
        if not is_json(sent):
            return False
        call.corrupted = True
        what = f"id {call_id!r}" if call_id is not None and call_id != call.id else f"name {name!r}"
        builder.violate(
            rules.INDEX_REUSED, step,
            f"a second call ({what}) was sent on index {call.index} after call {call.id or call.name!r} was complete; "
            "clients merge both into one",
            call.index,
        )
        return True

    # ------------------------------------------------------------ legacy function_call

    def _legacy(self, step: int, ms: float | None, silence: float, state: _Choice, function: dict[str, Any]) -> None:
        """``delta.function_call``: shown as the call when no tool_calls came, else kept aside and compared."""
        builder = state.builder
        if state.legacy_step is None:
            state.legacy_step = step
            state.legacy_shown = not builder.calls
        _, name, arguments = self._fields(step, builder, {"type": "function"}, "function_call", function)
        if state.legacy_shown:
            call = builder.calls[0] if builder.calls else None
            if call is None:
                builder.open_call(step, ms, silence, 0, None, name, arguments)
                return
            self._repeats(step, ms, builder, call, None, name)
            builder.fragment(step, ms, silence, call, arguments, None, name)
            return
        if state.legacy is None:
            state.legacy = Call(slot=0, index=0, first=StepTime(step, ms))
        legacy = state.legacy
        if name is not None and name != legacy.name:
            legacy.name_pieces.append(name)
        if arguments:
            legacy.pieces.append(arguments)

    # ------------------------------------------------------------ the end

    def finished_properly(self) -> bool:
        return self.done_step is not None or any(b.finish_reason is not None for _, b in self.choices())

    def missing_end(self) -> list[str]:
        return [what for what, ok in (("finish_reason", self.primary.finish_reason is not None),
                                      ("[DONE]", self.done_step is not None)) if not ok]

    def truncated(self, builder: StreamBuilder) -> bool:
        return self.done_step is None or builder.finish_reason is None

    def end(self, builder: StreamBuilder, choice: int, truncated: bool) -> list[Violation]:
        found: list[Violation] = []
        state = self.state(choice)
        if state.legacy_step is not None:
            found.append(self._legacy_verdict(state))
        reason = builder.finish_reason
        calls = builder.calls
        if calls and state.role_step is None:
            found.append(Violation(rules.ROLE_MISSING, calls[0].first.step,
                                   "no chunk said role 'assistant': openai-node raises 'missing role', LangChain JS "
                                   "reads the deltas as a generic message and drops every tool call"))
        if reason == "tool_calls" and not calls:
            found.append(Violation(rules.FINISH_REASON_MISMATCH, builder.finish_step.step,
                                   "finish_reason is tool_calls but no tool-call delta was sent"))
        elif calls and reason == "stop":
            found.append(Violation(rules.FINISH_REASON_MISMATCH, builder.finish_step.step,
                                   f"{len(calls)} tool call(s) were sent but finish_reason is stop; "
                                   "clients that dispatch on finish_reason ignore them"))
        elif reason in ("tool_calls", "function_call"):
            cut = [c for c in calls if not c.corrupted and not is_json(c.arguments())]
            if cut:
                found.append(Violation(
                    rules.FINISH_REASON_MISMATCH, builder.finish_step.step,
                    f"finish_reason is {reason} but the arguments of call {cut[0].slot} do not parse (cut off, "
                    "e.g. by max_tokens?): clients will dispatch a broken call; that finish is length",
                    cut[0].index))
        return found

    def _legacy_verdict(self, state: _Choice) -> Violation:
        builder = state.builder
        if state.legacy_shown:
            return Violation(rules.LEGACY_FUNCTION_CALL, state.legacy_step,
                             "the call came as the deprecated delta.function_call, with no tool_calls: clients "
                             "reading tool_calls see no call")
        legacy = state.legacy
        first = builder.calls[0] if builder.calls else None
        agrees = (legacy is not None and first is not None and legacy.name == first.name
                  and legacy.arguments() == first.arguments())
        how = ("and agrees with tool call 0" if agrees else
               f"and disagrees with tool call 0 (name {legacy.name if legacy else None!r}, "
               f"arguments {clip(legacy.arguments() if legacy else '', 40)})")
        return Violation(rules.LEGACY_FUNCTION_CALL, state.legacy_step,
                         f"the deprecated delta.function_call was sent alongside tool_calls {how}; a client reading "
                         "both sees two calls", 0)


# ---------------------------------------------------------------- the declaration


def _recognise(event: SseEvent, data: Any) -> bool:
    """``[DONE]``, or an object with ``choices`` or a ``chat.completion*`` ``object``."""
    if data is NOT_JSON:
        return event.data.strip() == "[DONE]"
    return isinstance(data, dict) and ("choices" in data or str(data.get("object", "")).startswith("chat.completion"))


def naive_read(obj: dict[str, Any], calls: NaiveCalls, content: dict[int, str]) -> None:
    """The naive client: ``+=`` on id, name and arguments of every delta, a dict per choice and tool index."""
    for choice in obj.get("choices") or []:
        index = choice["index"]
        delta = choice.get("delta") or {}
        content[index] = content.get(index, "") + (delta.get("content") or "")
        mine = calls.setdefault(index, {})
        for tool in delta.get("tool_calls") or []:
            call = mine.setdefault(tool["index"], {"id": "", "name": "", "arguments": ""})
            call["id"] += tool.get("id") or ""
            function = tool.get("function") or {}
            call["name"] += function.get("name") or ""
            call["arguments"] += function.get("arguments") or ""


class ChatWriter(ProtocolWriter):
    """A Chat Completions server: a role chunk, one ``chat.completion.chunk`` per chunk, a finish chunk, ``[DONE]``.

    A call's first delta carries its ``index`` (0, 1, 2...), ``id``, ``type`` and
    ``function.name``; later ones only ``index`` and ``function.arguments``, as
    the official API streams them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._announced: set[int] = set()
        self._finished = False

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> str:
        return sse({"id": self.identity.completion_id, "object": CHUNK_OBJECT, "created": self.identity.created,
                    "model": self.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def start(self) -> list[str]:
        return [self._chunk({"role": "assistant", "content": None})]

    def events(self, chunk: WireChunk, call: WrittenCall | None) -> list[str]:
        kind = chunk.kind
        if kind == CONTENT and chunk.text:
            return [self._chunk({"content": chunk.text})]
        if kind == REASONING and chunk.text:
            return [self._chunk({"reasoning_content": chunk.text})]
        if call is not None:
            if call.number not in self._announced:
                self._announced.add(call.number)
                return [self._chunk({"tool_calls": [{"index": call.number, "id": call.id, "type": "function",
                                                     "function": {"name": call.name, "arguments": chunk.text}}]})]
            if chunk.text:
                return [self._chunk({"tool_calls": [{"index": call.number, "function": {"arguments": chunk.text}}]})]
            return []
        if kind == FINISH and not self._finished:
            self._finished = True
            return [self._chunk({}, self.final_finish)]
        return []

    def end(self) -> list[str]:
        closing = [] if self._finished else [self._chunk({}, self.final_finish)]
        self._finished = True
        return closing + [sse("[DONE]")]

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.calls:
            message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.text}}
                                     for c in self.calls]
        return {"id": self.identity.completion_id, "object": "chat.completion", "created": self.identity.created,
                "model": self.model, "choices": [{"index": 0, "message": message, "finish_reason": self.final_finish}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


SPEC = ProtocolSpec(
    id=PROTOCOL,
    label=ChatReader.label,
    path=ChatReader.path,
    reader=ChatReader,
    end_events=("[DONE]",),
    end_text="a finish chunk or [DONE]",
    recognise=_recognise,
    naive=naive_read,
    writer=ChatWriter,
    unit="chunk",
)
