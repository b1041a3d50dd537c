"""Streaming policies: how a server turns successive parses into wire chunks."""

from __future__ import annotations

from callscope.engine.policies.atomic import AtomicPolicy
from callscope.engine.policies.base import StreamingPolicy
from callscope.engine.policies.incremental import IncrementalPolicy
from callscope.engine.policies.llama_server import LlamaServerPolicy

POLICIES: dict[str, type[StreamingPolicy]] = {
    cls.policy_id: cls for cls in (IncrementalPolicy, AtomicPolicy, LlamaServerPolicy)
}
POLICY_IDS: tuple[str, ...] = tuple(POLICIES)


class UnknownPolicy(ValueError):
    def __init__(self, policy_id: str) -> None:
        super().__init__(f"unknown policy {policy_id!r}; known policies: {', '.join(POLICY_IDS)}")


def make_policy(policy_id: str, id_seed: str = "callscope") -> StreamingPolicy:
    cls = POLICIES.get(policy_id)
    if cls is None:
        raise UnknownPolicy(policy_id)
    return cls(id_seed)


__all__ = ["POLICIES", "POLICY_IDS", "StreamingPolicy", "UnknownPolicy", "make_policy"]
