"""Chat-template analysis: render a template with variants, diff the renders, learn the wire format it teaches.

Given any template, :func:`~engine.templates.analysis.analyze` learns a plain-data
:class:`~engine.formats.derived.description.FormatDescription` (section and call
markers, how the name and the arguments are written, where the id goes, the
reasoning markers and whether the prompt opens reasoning, the end of turn) and
keeps the evidence; :mod:`engine.formats.derived` turns it into a parser, a
writer and a grammar; :func:`~engine.templates.roundtrip.round_trip` checks that
a parser reads back, byte by byte, the calls the template renders.

The package sits at the decode layer but does not import it: it renders through
a :class:`~engine.templates.renders.Renderer` (any callable; ``ChatTemplate.render``
is one), so :mod:`engine.decode.prompting` can use it to pick a parser.
"""
