"""The Ray executor on a real local Ray instance (127.0.0.1 only, 2 CPUs): the same summary as one process."""

from __future__ import annotations

from callscope.engine.corpus.executors import CheckOptions, run_inline, run_ray
from callscope.engine.corpus.paths import expand
from callscope.engine.corpus.summary import Summary
from tests.engine.corpus.test_executors import collect
from tests.engine.corpus.test_summary import _same


def test_ray_tasks_on_a_local_instance_reduce_to_the_same_summary(corpus):
    """Ray is imported by the executor, as `callscope check --executor ray` does (it must see the loopback
    setting before Ray reads it)."""
    paths = list(expand([str(corpus)]))
    alone, by_path = collect(run_inline(paths, CheckOptions()))
    seen_nodes: list[str] = []
    summary, verdicts = Summary(), {}
    for batch in run_ray(paths, CheckOptions(jobs=2, batch=9, address="local")):
        if not seen_nodes:
            import ray

            seen_nodes.append(ray.util.get_node_ip_address())
            assert ray.cluster_resources()["CPU"] == 2
        summary.merge(batch.summary)
        verdicts.update((v.path, v) for v in batch.verdicts)
    assert seen_nodes == ["127.0.0.1"], "a local instance listens on loopback only"
    import ray

    assert not ray.is_initialized(), "the instance it started is shut down"
    assert _same(summary.to_json(), alone.to_json())
    assert {p: v.rules() for p, v in verdicts.items()} == {p: v.rules() for p, v in by_path.items()}
