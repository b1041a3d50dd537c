"""Stop during prompt evaluation, with the real packaged model: the prompt is evaluated in batches and the
stop flag is looked at between them, so a cancel never waits for the whole prompt (Llama has no cancel)."""

from __future__ import annotations

import threading

import pytest

from callscope.engine.core.causes import CANCELLED
from callscope.engine.decode.loop import PREFILL_BATCH, Generation, SamplerSettings, tokenize_prompt

pytestmark = pytest.mark.model

LONG_PROMPT = ("<|im_start|>system\n" + "You answer questions about the weather in short sentences. " * 40
               + "<|im_end|>\n<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n")


class StopAfterLooks(threading.Event):
    """Set once the generation has looked at it ``looks`` times: the n-th check between prompt batches."""

    def __init__(self, looks: int) -> None:
        super().__init__()
        self.looks = looks
        self.seen = 0

    def is_set(self) -> bool:
        self.seen += 1
        if self.seen > self.looks:
            self.set()
        return super().is_set()


def test_stop_during_prompt_evaluation_stops_after_one_batch(model):
    prompt = tokenize_prompt(model, LONG_PROMPT)
    assert len(prompt) > 4 * PREFILL_BATCH
    stop = StopAfterLooks(2)  # the look before the prompt and the one before the first batch pass
    generation = Generation(model, prompt, 32, SamplerSettings(seed=1), stop=stop)
    assert list(generation) == []
    assert generation.stats.cause == CANCELLED and generation.stats.tokens == 0
    assert model.llama.n_tokens == PREFILL_BATCH  # one batch evaluated, not the whole prompt


def test_a_batched_prompt_decodes_what_one_call_would(model):
    """Batches change nothing but when Stop is looked at: the same seed gives the same tokens."""
    import callscope.engine.decode.loop as loop

    prompt = tokenize_prompt(model, LONG_PROMPT)
    batched = [s.token for s in Generation(model, prompt, 12, SamplerSettings(seed=3))]
    whole = loop.PREFILL_BATCH
    try:
        loop.PREFILL_BATCH = len(prompt)  # the whole prompt in one evaluation, as Llama.generate does it
        single = [s.token for s in Generation(model, prompt, 12, SamplerSettings(seed=3))]
    finally:
        loop.PREFILL_BATCH = whole
    assert batched == single and len(batched) == 12
