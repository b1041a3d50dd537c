"""`callscope bench template`: how long the template analysis takes, per template.

Every shipped chat template (``resources/templates/``), the test templates when
run from a source checkout (``tests/data/templates/``, derived ones included),
and any ``--templates DIR`` are analysed ``--rounds`` times each; reported is the
median time of one analysis (render the variants, diff them, learn the
description, read the renders back with the derived parser), with the template
compiled beforehand (compiling is done once per template, on load). Side by side:
the round-trip check of the parser ``--format auto`` picks, which ``run``,
``prompt`` and ``replay-text`` pay once per template. Target: analysis <= 50 ms
per template.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from callscope.benchmarks import BenchError

WHAT = "template analysis (render variants, diff, learn the syntax) per template"
TARGET_MS = 50.0
_CHECKOUT_TEMPLATES = Path(__file__).resolve().parent.parent / "tests" / "data" / "templates"


@dataclass
class TemplateBenchResult:
    template: str
    family: str
    analysis_ms: float
    choice_ms: float
    parser: str


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=5, help="analyses per template (default 5; the median counts)")
    parser.add_argument("--templates", action="append", default=[], metavar="DIR", help="also every *.jinja under DIR")


def _paths(extra: list[str]) -> list[Path]:
    from callscope.engine.core.shipped import resource

    folders = [Path(str(resource("templates")))]
    if _CHECKOUT_TEMPLATES.is_dir():
        folders.append(_CHECKOUT_TEMPLATES)
    folders += [Path(d) for d in extra]
    paths: list[Path] = []
    seen: set[Path] = set()
    for folder in folders:
        if not folder.is_dir():
            raise BenchError(f"--templates {folder}: not a directory")
        for path in sorted(folder.rglob("*.jinja")):
            if path.resolve() not in seen:  # a DIR already benched (or inside one) is not measured twice
                seen.add(path.resolve())
                paths.append(path)
    return paths


def bench_template(path: Path, rounds: int) -> TemplateBenchResult | None:
    """One template's median analysis time (None when the template does not even compile)."""
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.templates.analysis import analyze
    from callscope.engine.templates.chat import load_template_file, probe_caps
    from callscope.engine.templates.format_choice import choose_format

    try:
        template = load_template_file(path)
    except DecodeError:
        return None
    render = template.renderer()
    times, analysis = [], None
    for _ in range(rounds):
        began = time.perf_counter()
        analysis = analyze(render, template.name)
        times.append((time.perf_counter() - began) * 1000)
    began = time.perf_counter()
    choice = choose_format(template, probe_caps(template))
    choice_ms = (time.perf_counter() - began) * 1000
    family = analysis.description.family if analysis and analysis.description else "-"
    return TemplateBenchResult(path.name, family, statistics.median(times), choice_ms, choice.format_id)


def run(args: argparse.Namespace) -> int:
    """Analyse every template; print the table (or JSON); 0 when every analysis meets the target."""
    from callscope.engine.formats import FORMAT_IDS, unregister_format
    from callscope.engine.formats.derived import PREFIX

    if args.rounds < 1:
        raise BenchError("--rounds must be at least 1")
    results = []
    try:
        for path in _paths(args.templates):
            result = bench_template(path, args.rounds)
            if result is not None:
                results.append(result)
    finally:
        for format_id in list(FORMAT_IDS):
            if format_id.startswith(PREFIX):
                unregister_format(format_id)
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
    else:
        print(f"template bench: {len(results)} templates, median of {args.rounds} analyses each (template compiled first)")
        print(f"{'template':<34}{'family':<12}{'analysis ms':>12}{'auto ms':>9}  parser")
        for r in results:
            print(f"{r.template[:33]:<34}{r.family:<12}{r.analysis_ms:>12.1f}{r.choice_ms:>9.1f}  {r.parser}")
        worst = max((r.analysis_ms for r in results), default=0.0)
        print(f"slowest analysis {worst:.1f} ms; target: analysis <= {TARGET_MS:g} ms per template")
    return 0 if all(r.analysis_ms <= TARGET_MS for r in results) else 1
