"""Derived formats: parsers driven by what a chat template teaches, learnt from the template itself.

A template callscope has no dedicated parser for still shows how it writes a
call; :mod:`callscope.engine.templates` renders it with variants and learns a
:class:`FormatDescription` (plain data). This package turns a description into
a working format, one parser per family (:data:`~description.FAMILIES`):

* :mod:`.json_family`: the whole call is a JSON object (bare, array-wrapped, name as key);
* :mod:`.tag_json`: the name in markup, the arguments a JSON object;
* :mod:`.tag_tagged`: the name and every argument in markup, values typed from the tool schema.

They share the front (:mod:`.machine`: reasoning, content, the loop over calls
and sections) and the tag call header (:mod:`.tags`), and keep every rule the
dedicated parsers keep: a name only once complete, arguments only growing, no
marker in content, work per step proportional to the new text.
:func:`derived_spec` makes the :class:`~callscope.engine.formats._kit.spec.FormatSpec`
(parser, markers, writer, grammar envelope); :func:`register_derived` registers
it under ``derived_<template name>``.
"""

from callscope.engine.formats.derived.description import FAMILIES, JSON, TAG_JSON, TAG_TAGGED, FormatDescription
from callscope.engine.formats.derived.spec import PREFIX, derived_id, derived_spec, register_derived

__all__ = [
    "FAMILIES",
    "JSON",
    "PREFIX",
    "TAG_JSON",
    "TAG_TAGGED",
    "FormatDescription",
    "derived_id",
    "derived_spec",
    "register_derived",
]
