"""A violation rule defined outside callscope, for the tests: ``slot-reused`` of the test-only ``tinyproto``.

It follows docs/extending.md's rule recipe outside the code base: the rule is
registered (``register_rule``) and raised where the fault is seen, here by a
reader of the test protocol (:mod:`tests.support.plugin_protocol`) that checks one
more thing: a call opened on a slot that already holds one. Reports, the rules
table and expected verdicts then know it like any built-in rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from callscope.engine.core import rules
from callscope.engine.streams.sse import SseEvent
from tests.support import plugin_protocol as tiny

RULE = "slot-reused"
MEANING = "a tinyproto call opened on a slot that already holds one"


class CheckedTinyReader(tiny.TinyReader):
    """The tinyproto reader, plus the check that raises :data:`RULE`."""

    def chunk(self, step: int, ms: float | None, silence: float, event: SseEvent, obj: dict[str, Any]) -> None:
        if obj.get("type") == "tiny.call" and obj.get("slot") in self._slots:
            self.primary.violate(RULE, step, f"slot {obj['slot']} already holds {self._slots[obj['slot']].name}")
        super().chunk(step, ms, silence, event, obj)


SPEC = dataclasses.replace(tiny.SPEC, reader=CheckedTinyReader)


def register() -> None:
    rules.register_rule(RULE, MEANING, rules.CAPTURE)


def unregister() -> None:
    rules.unregister_rule(RULE)
