"""Where things are in the checkout, for tests at any depth (tests mirror the source folders)."""

from pathlib import Path

#: The repository root (the checkout the tests run from; the code itself is imported as installed).
ROOT = Path(__file__).resolve().parents[2]
#: Test-only inputs: recordings, templates, the report schema's fallback copy.
DATA = ROOT / "tests" / "data"
#: The shipped fixture library, and the recordings many tests open.
FIXTURES = ROOT / "fixtures"
HEADLINE = FIXTURES / "headline_701_tokens.jsonl"
PARALLEL = FIXTURES / "formats" / "hermes_parallel.jsonl"
REGRESS = FIXTURES / "prefix" / "arguments_regress.txt"
