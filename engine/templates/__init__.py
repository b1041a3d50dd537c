"""Chat templates, all in one place: render them, read them, learn and choose the wire format they teach.

* :mod:`~callscope.engine.templates.chat` -- :class:`~callscope.engine.templates.chat.ChatTemplate`: the
  sandboxed Jinja renderer (as Hugging Face and llama.cpp render), capability probes, detection by markers;
* :mod:`~callscope.engine.templates.files` -- a template from a ``.jinja``/``tokenizer_config.json`` or a GGUF's own;
* :mod:`~callscope.engine.templates.format_choice` -- ``--format auto``: the dedicated parser if it reads the
  template's calls back, else a derived one;
* the analysis: :func:`~callscope.engine.templates.analysis.analyze` renders a template with variants
  (:mod:`~callscope.engine.templates.renders`), diffs the renders and learns a plain-data
  :class:`~callscope.engine.formats.derived.description.FormatDescription` (section and call markers, how
  the name and the arguments are written, where the id goes, the reasoning markers and whether the prompt
  opens reasoning, the end of turn), keeping the evidence (:mod:`~callscope.engine.templates.evidence`);
  :mod:`callscope.engine.formats.derived` turns it into a parser, a writer and a grammar;
  :func:`~callscope.engine.templates.roundtrip.round_trip` checks that a parser reads back, byte by byte,
  the calls the template renders.

The package sits below :mod:`callscope.engine.decode` (which renders prompts with it) and imports nothing
from it: its errors are :mod:`callscope.engine.core.errors`' one-line ``DecodeError`` family, and a GGUF's
metadata is read by :mod:`callscope.engine.core.gguf`. The analysis renders through a
:class:`~callscope.engine.templates.renders.Renderer` (any callable; ``ChatTemplate.render`` is one).
"""
