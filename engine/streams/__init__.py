"""Streams on the wire, judged: received lines in, the same Analysis as any other source out (no HTTP here).

- :mod:`.sse`: server-sent events from recorded lines, as the WHATWG spec reads them;
- :mod:`.protocols`: the registry of protocols, each one :class:`~.spec.ProtocolSpec` declared by its module
  (Chat Completions :mod:`.chat`, OpenAI Responses :mod:`.responses`, Anthropic Messages :mod:`.anthropic`):
  its reader (a :class:`~.reader.ProtocolReader`), endpoint, end events, auth, request shape, recognition;
- :mod:`.assembly`: what a stream means, and the Analysis built from it;
- :mod:`.clients`: client profiles, each a client library's assembly emulated at its exact version (openai, the AI SDK,
  LangChain, anthropic...), and a naive ``+=`` client;
- :mod:`.conformance`: :class:`~.conformance.CaptureAnalyzer`, the live analysis that ties them together.

Whoever recorded the lines (the capture client, a recording proxy, a HAR or mitmproxy reader) feeds
``(ms, line)`` pairs, blank lines included, to :func:`~.conformance.analyze_capture_streams`.
"""
