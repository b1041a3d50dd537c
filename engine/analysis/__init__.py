"""One stream analysed: the analyzer (steps in; parses, chunks, reconciliation, TTFD out), expected verdicts, the report."""
