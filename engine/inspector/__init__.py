"""Qt-free view state of the inspector window: everything a pane shows, computed from an :class:`Analysis`.

The GUI (``app/``) only draws what this package computes, so every behaviour of
the window (cursor, stepping, playback timing, lanes, TTFD labels, text spans,
reconciliation, compare) is unit-tested without a display.

Modules:
- :mod:`timebase` the cursor's positions (step 0 + every step) and their x values (ms or step);
- :mod:`parse_cursor` the partial parse at any step, fast for arbitrary jumps (checkpoints);
- :mod:`state` the cursor, hover and navigation (token / emitted delta / home / end);
- :mod:`playback` the playback clock (speed, loop, as-fast-as-possible, recorded timing at 1x);
- :mod:`lanes` the timeline lanes' marks; :mod:`ttfd` delivery curves and their labels;
- :mod:`text_spans` token boundaries and what each token produced; :mod:`chunks` chunk rows;
- :mod:`reconcile` per-call verdicts with character diffs; :mod:`compare` two policies (or parsers) aligned by step;
- :mod:`sources` where analyses come from (files, pasted text) and re-analysis under another policy or parser;
- :mod:`live` a growing analysis fed while a model decodes.
"""
