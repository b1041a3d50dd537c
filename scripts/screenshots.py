"""Regenerate the README's screenshots (`make screenshots`): docs/screenshot.png, docs/ttfd.png, docs/compare.png,
docs/debugger.png, docs/light.png, docs/template_pane.png, docs/presenter.png, docs/client_view.png and
docs/corpus.png.

Each one is `callscope gui FILE --screenshot OUT.png ...` run headless (the
offscreen Qt platform), exactly as a user would make it, so the pictures show
what the shipped window shows. Look at them after regenerating: a screenshot
is only current if someone has checked it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: (output, fixture, extra `callscope gui` arguments)
SHOTS: list[tuple[str, str, list[str]]] = [
    # the headline: 701 tokens streamed from 0.5 s, against 29 s of silence then everything at once
    ("screenshot.png", "fixtures/headline_701_tokens.jsonl", ["--at", "180"]),
    # the same run's TTFD plot: the incremental ramp against the atomic step
    ("ttfd.png", "fixtures/headline_701_tokens.jsonl", ["--at", "180", "--tab", "ttfd"]),
    # a parser that rewrites arguments it already showed (Python True -> true): incremental against atomic,
    # cursor on the step where the arguments diverge (the first violation)
    ("compare.png", "fixtures/prefix/arguments_regress.txt", ["--at", "65", "--tab", "compare"]),
    # the debugger at a step where the parser holds text back: the held text underlined with its reason, the
    # step's diff (added, sent, withheld and why), the deltas the client does not have yet dimmed
    ("debugger.png", "fixtures/formats/hermes_parallel.jsonl", ["--at", "50"]),
    # the light theme (View > Theme), on the headline at the same step as screenshot.png
    ("light.png", "fixtures/headline_701_tokens.jsonl", ["--at", "180", "--theme", "light"]),
    # the Template pane on Kimi-K2's template beside a Kimi-K2 stream: the parser and why, the rendered call with its
    # markers, and the round trip coloured by what the parser read
    ("template_pane.png", "fixtures/formats/kimi_k2_parallel.jsonl",
     ["--template", "resources/templates/kimi_k2.jinja", "--tab", "template"]),
]


# ---- the demo views (client view, presenter mode): a separate block, kept by their owner ----
DEMO_SHOTS: list[tuple[str, str, list[str]]] = [
    # the slide: the streaming client filling in while the atomic one waits, over the TTFD plot
    ("presenter.png", "fixtures/headline_701_tokens.jsonl", ["--at", "180", "--presenter", "--size", "1400x800"]),
    # the same moment in the window, the Client view tab
    ("client_view.png", "fixtures/headline_701_tokens.jsonl", ["--at", "180", "--tab", "client"]),
]


def shoot(out: str, fixture: str, extra: list[str]) -> bool:
    target = DOCS / out
    command = [sys.executable, "-m", "callscope", "gui", str(ROOT / fixture), "--screenshot", str(target), *extra]
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or not target.is_file():
        sys.stderr.write(f"screenshots: {out} failed ({done.returncode}): {done.stderr.strip()}\n")
        return False
    print(f"wrote {target.relative_to(ROOT)}  ({fixture} {' '.join(extra)})")
    return True


#: The Corpus table (File > Open folder, or `callscope gui FOLDER`) on this many generated recordings.
CORPUS_COUNT = 1000


def shoot_corpus() -> bool:
    """A folder of recordings generated from the shipped library (every kind `check` reads), listed and judged."""
    from callscope.benchmarks.corpus import generate

    with tempfile.TemporaryDirectory(prefix="callscope-shot-") as tmp:
        folder = Path(tmp) / "recordings"
        generate(folder, CORPUS_COUNT, seed=7)
        return shoot("corpus.png", str(folder), [])


def main() -> int:
    DOCS.mkdir(exist_ok=True)
    results = [shoot(*shot) for shot in SHOTS + DEMO_SHOTS] + [shoot_corpus()]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
