"""The live decode path: a real GGUF model generating token by token, analysed as it goes.

Modules, one job each:

* :mod:`~callscope.engine.decode.model` -- load a GGUF with llama-cpp-python (its metadata: :mod:`callscope.engine.core.gguf`).
* :mod:`~callscope.engine.decode.prompting` -- choose template + wire format for a request and render the prompt.
* :mod:`~callscope.engine.decode.demos` -- the demo presets (``write-file``, the default; ``quick``): request and forcing.
* :mod:`~callscope.engine.decode.messages` -- the demo conversation; loading/validating a messages file.
* :mod:`~callscope.engine.decode.grammar` -- GBNF that forces a real tool call in a format (``--force-tool``).
* :mod:`~callscope.engine.decode.loop` -- the token generator (:class:`~callscope.engine.decode.loop.Generation`).
* :mod:`~callscope.engine.decode.session` -- a live run: loop + Analyzer + trace recording (:class:`~callscope.engine.decode.session.LiveRun`).
* :mod:`~callscope.engine.decode.progress` -- hooks for the slow steps (model load, prompt evaluation, each token): status lines.

Chat templates (rendering, reading, ``--format auto``) live in :mod:`callscope.engine.templates`, the
one-line errors every input problem raises in :mod:`callscope.engine.core.errors`.

A GUI worker thread does: ``model = load_model(path)``; ``live = LiveRun(model, RunSettings(...))``;
``result = live.run(stop_event, on_token)``, all on that thread (a ``Llama`` is not thread-safe).
"""
