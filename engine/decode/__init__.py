"""The live decode path: a real GGUF model generating token by token, analysed as it goes.

Modules, one job each:

* :mod:`~engine.decode.model` -- find/check/load a GGUF, read its metadata without weights.
* :mod:`~engine.decode.templates` -- sandboxed Jinja chat templates, capability probes, format detection.
* :mod:`~engine.decode.prompting` -- choose template + wire format for a request and render the prompt.
* :mod:`~engine.decode.demos` -- the demo presets (``write-file``, the default; ``quick``): request and forcing.
* :mod:`~engine.decode.messages` -- the demo conversation; loading/validating a messages file.
* :mod:`~engine.decode.grammar` -- GBNF that forces a real tool call in a format (``--force-tool``).
* :mod:`~engine.decode.loop` -- the token generator (:class:`~engine.decode.loop.Generation`).
* :mod:`~engine.decode.session` -- a live run: loop + Analyzer + trace recording (:class:`~engine.decode.session.LiveRun`).
* :mod:`~engine.decode.progress` -- hooks for the slow steps (model load, prompt evaluation, each token): status lines.
* :mod:`~engine.decode.errors` -- typed, one-line errors for the CLI and the GUI.

A GUI worker thread does: ``model = load_model(path)``; ``live = LiveRun(model, RunSettings(...))``;
``result = live.run(stop_event, on_token)``, all on that thread (a ``Llama`` is not thread-safe).
"""
