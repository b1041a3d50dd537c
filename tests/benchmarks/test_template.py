"""The template benchmark measures each template once, and the parse benchmark holds later formats to 5 us/step."""


from callscope.benchmarks import parse as parse_bench
from callscope.benchmarks.template import _paths
from tests.support.paths import ROOT


def test_a_folder_already_benched_is_not_measured_twice():
    default = _paths([])
    again = _paths([str(ROOT / "tests" / "data" / "templates"), str(ROOT / "resources" / "templates")])
    assert again == default
    assert len({p.resolve() for p in default}) == len(default)
    assert any(p.parent.name == "derived" for p in default)  # the derived test templates are in the default set


def _result(format_id: str, last_kb_us: float) -> parse_bench.ParseBenchResult:
    return parse_bench.ParseBenchResult(
        format_id=format_id, steps=8000, first_kb_us=last_kb_us, last_kb_us=last_kb_us,
        reparse_last_kb_us=None, reconstructs=True,
    )


def test_formats_after_the_first_eight_are_held_to_five_microseconds_a_step():
    assert parse_bench._meets_targets(_result("hermes", 12.0))
    assert not parse_bench._meets_targets(_result("glm45", 12.0))
    assert not parse_bench._meets_targets(_result("derived_bench_json", 5.5))
    assert parse_bench._meets_targets(_result("gemma4", 4.5))
