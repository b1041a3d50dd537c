"""Why a generation ended: one vocabulary for trace end records, analyses and policies.

A trace's end record stores one of these words, an analysis keeps it as its
``finish_cause``, and a policy's ``finish_reason`` depends on it (``length`` stays
``length``; ``cancelled`` and ``error`` send none). Defined once so that a
recording written by one part is always readable by the others.
"""

from __future__ import annotations

STOP = "stop"
LENGTH = "length"
CANCELLED = "cancelled"
ERROR = "error"

#: Every way a generation ends, in the order messages list them.
END_CAUSES: tuple[str, ...] = (STOP, LENGTH, CANCELLED, ERROR)
#: Causes after which no finish_reason is sent: the stream was cut, not finished.
UNFINISHED: tuple[str, ...] = (CANCELLED, ERROR)
