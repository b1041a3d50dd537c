"""Recordings: the trace format, byte-prefix fixtures, raw-text replay, and replaying any of them through the analysis."""
