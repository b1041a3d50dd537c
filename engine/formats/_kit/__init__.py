"""What the format modules are built from, kept apart from the formats themselves.

A format module (``engine/formats/<id>.py``) is a parser plus one
:class:`~callscope.engine.formats._kit.spec.FormatSpec`; everything it shares with the
other formats lives here:

* :mod:`.spec`: the spec a format declares (markers, writer, grammar envelopes,
  template signs) and the registry's vocabulary;
* :mod:`.gbnf`: the grammar side of a spec: GBNF literals, the envelope around
  the schema-derived argument rules, what a call builder may ask of a schema;
* :mod:`.writing`: helpers for a spec's writer (the inverse of its parser);
* :mod:`.parser`: :class:`FormatParser`, the contract every parser keeps;
* :mod:`.text_machine`: the two state-machine drivers parsers are tables of;
* :mod:`.marker_search`: finding markers without leaking half-typed ones;
* :mod:`.json_scanner`: the resumable JSON scanner;
* :mod:`.json_call_machine`: reading ``{"name": ..., "arguments": ...}`` as it is written;
* :mod:`.registry`: the table of specs behind :mod:`callscope.engine.formats`.

Nothing here depends on a particular format (the docstrings name some as examples).
"""
