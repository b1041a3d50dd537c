"""Streams on the wire, judged: received chunks in, the same Analysis as any other source out (no HTTP here)."""
