"""`callscope run`: generate with a real model, token by token, and report what would have streamed.

With no arguments it is a working demo (``--demo write-file``, see
:mod:`~callscope.engine.decode.demos`): the packaged SmolLM2-135M model, one
``write_file`` tool, a short prompt, and a grammar that makes the model write a
real call of about 700 tokens at once, so the first delta leaves 10x or more
before the atomic emission. ``--demo quick`` is the two-call demo (weather and
file tools). The demo supplies every setting not given on the command line
(calls, content line, string bound, max tokens, repeat penalty). Ctrl-C cancels the generation
cleanly (the report and recording say ``cancelled``).
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
from typing import Any

from callscope.commands.common import (
    CliError,
    add_policy_option,
    add_report_options,
    add_thinking_option,
    apply_template_timeout,
    check_policy,
    print_report,
)
from callscope.commands.request import (  # shared with `callscope prompt`
    add_request_options,
    check_format_option,
    read_request,
    read_template,
)
from callscope.commands.status import StatusLine
from callscope.engine.core.errors import DecodeError
from callscope.engine.core.gguf import ModelInfo
from callscope.engine.decode.demos import DEFAULT_MAX_STRING, DemoPreset, get_demo
from callscope.engine.decode.grammar import ANY, OFF, form_choices
from callscope.engine.decode.loop import SamplerSettings
from callscope.engine.decode.progress import DecodeProgress

_DEFAULT_SAMPLER = SamplerSettings()


# -------------------------------------------------------------------- run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="generate with a real model (llama-cpp-python) and report the tool-call stream live",
        description="Render the request with a chat template, force a real tool call with a grammar, generate token "
        "by token, feed every token to the format parser and streaming policy as it arrives, and report calls, "
        "time to first tool-call delta (streaming vs atomic) and violations. Defaults give a working demo.",
    )
    p.add_argument("--model", metavar="PATH", help="a GGUF model (default: the packaged SmolLM2-135M-Instruct)")
    add_request_options(p)
    p.add_argument(
        "--force-tool",
        default=ANY,
        metavar="NAME|any|off",
        help="grammar-force a call to NAME, to any tool, or nothing (default any)",
    )
    p.add_argument("--max-calls", type=int, help="at most this many forced calls (default: the demo's)")
    p.add_argument("--min-calls", type=int, help="at least this many forced calls (default: the demo's)")
    p.add_argument(
        "--content-chars",
        type=int,
        metavar="N",
        help="let the forced generation open with a content line of up to N characters (0: the call comes first; "
        "default: the demo's)",
    )
    p.add_argument(
        "--max-string",
        type=int,
        metavar="N",
        help="longest string a forced argument may hold when its schema sets no maxLength (a schema's minLength "
        f"still wins; default {DEFAULT_MAX_STRING}, or the demo's with the demo's own tools)",
    )
    add_form_options(p)
    add_policy_option(p)
    add_thinking_option(p)
    p.add_argument("--max-tokens", type=int, help="stop after N tokens (default: the demo's)")
    p.add_argument(
        "--seed", type=int, default=_DEFAULT_SAMPLER.seed, help=f"sampling seed (default {_DEFAULT_SAMPLER.seed})"
    )
    p.add_argument("--temp", type=float, default=_DEFAULT_SAMPLER.temperature, help="sampling temperature")
    p.add_argument("--ctx", type=int, metavar="N", help="context window in tokens (default: min(4096, the model's))")
    p.add_argument("--record", metavar="OUT", help="write the run as a callscope.trace/1 trace (replay reproduces it)")
    add_report_options(p)
    p.set_defaults(handler=run)


def _fill_from_demo(args: argparse.Namespace, demo: DemoPreset, tools: list[dict[str, Any]] | None) -> None:
    """Every forced-call setting the command line left out takes the demo's value."""
    if args.max_calls is None and args.min_calls is not None:
        args.max_calls = max(demo.max_calls, args.min_calls)  # --min-calls 2 alone raises the demo's one call
    for name, value in {**demo.run_options(tools), "max_tokens": demo.max_tokens}.items():
        if getattr(args, name) is None:
            setattr(args, name, value)


def _form_option(format_id: str) -> str:
    return f"--{format_id.replace('_', '-')}-form"


def _form_dest(format_id: str) -> str:
    return f"{format_id}_form"


def add_form_options(p: argparse.ArgumentParser) -> None:
    """``--<format>-form`` for each format whose calls can be forced in several syntaxes (``--mistral-form``)."""
    from callscope.engine.formats import get_spec

    for format_id, forms in form_choices().items():
        labels = "; ".join(f"{e.form} = {e.label}" for e in get_spec(format_id).envelopes)
        p.add_argument(
            _form_option(format_id),
            dest=_form_dest(format_id),
            choices=forms,
            default=forms[0],
            help=f"{format_id} syntax to force: {labels}; other formats ignore it (default {forms[0]})",
        )


def chosen_forms(args: argparse.Namespace) -> dict[str, str]:
    """format id -> the syntax ``--<format>-form`` chose (each format's default unless given)."""
    return {f: getattr(args, _form_dest(f)) for f in form_choices() if hasattr(args, _form_dest(f))}


def run(args: argparse.Namespace) -> int:
    from callscope.engine.decode.model import load_model
    from callscope.engine.decode.session import LiveRun, RunSettings

    check_policy(args.policy)
    apply_template_timeout(args)
    check_format_option(args.format)
    messages, tools = read_request(args)
    demo = get_demo(args.demo)
    _fill_from_demo(args, demo, tools)
    if args.max_tokens < 1:
        raise CliError("--max-tokens must be at least 1")
    if not (math.isfinite(args.temp) and args.temp >= 0):
        raise CliError(f"--temp must be a finite number >= 0, not {args.temp}")
    if args.max_calls < 1:
        raise CliError("--max-calls must be at least 1")
    if not 1 <= args.min_calls <= args.max_calls:
        raise CliError(f"--min-calls must be between 1 and --max-calls ({args.max_calls})")
    if args.content_chars < 0:
        raise CliError("--content-chars must be 0 or more")
    if args.max_string < 1:
        raise CliError("--max-string must be at least 1")
    if args.force_tool in ("", None):
        raise CliError(f"--force-tool takes a tool name, {ANY} or {OFF}")
    template = read_template(args.template)
    settings = RunSettings(
        messages=messages,
        tools=tools,
        format_id=args.format,
        template=template,
        force_tool=args.force_tool,
        max_calls=args.max_calls,
        min_calls=args.min_calls,
        content_chars=args.content_chars,
        max_string=args.max_string,
        forms=chosen_forms(args),
        policy=args.policy,
        max_tokens=args.max_tokens,
        sampler=SamplerSettings(temperature=args.temp, seed=args.seed, repeat_penalty=demo.repeat_penalty),
        record=args.record,
        thinking=args.thinking,
        name="run",
    )
    status = StatusLine.for_args(args)
    progress = _StatusProgress(status, settings.max_tokens) if status.enabled else None
    try:
        with status:  # erased before any error line
            model = load_model(args.model, n_ctx=args.ctx, seed=args.seed, progress=progress)
            live = LiveRun(model, settings)
    except DecodeError as exc:
        # A llama.cpp build that cannot run here is not the user's input: exit 1, like a failed generation.
        raise CliError(str(exc), exit_code=1 if type(exc).__name__ == "BackendBroken" else 2) from None
    try:
        with _cancel_on_interrupt() as stop, status:  # erased before the report
            result = live.run(stop, progress=progress)
    except OSError as exc:  # the recording could not be written
        raise CliError(f"cannot write the recording {args.record}: {exc.strerror or exc}") from None
    if not args.json:
        print(_header_text(live, result))
        print()
    print_report([result.analysis], args)
    if result.stats.cause == "error":
        from callscope.engine.core.terminal import terminal_line

        print(f"callscope run: generation failed: {terminal_line(str(result.stats.error))}", file=sys.stderr)
        return 1
    if result.stats.cause == "cancelled":
        print("callscope run: cancelled; the report covers the tokens generated so far", file=sys.stderr)
        return 130
    return 0


def _header_text(live: Any, result: Any) -> str:
    from callscope.engine.analysis.report import format_seconds, plural
    from callscope.engine.core.terminal import terminal_line

    model, plan, stats = live.model, result.plan, result.stats
    rate = stats.decode_tokens_per_s
    lines = [
        f"model: {model.info.describe()}, loaded in {format_seconds(model.load_ms)}",
        f"template: {plan.template.name} ({plan.template_reason})",
        f"format: {plan.format_id} ({plan.format_reason})",
        f"forced: {result.grammar.describe()}" if result.grammar else "forced: nothing (--force-tool off)",
        f"generation: {stats.prompt_tokens} prompt tokens, time to first token {format_seconds(stats.ttft_ms)}, "
        f"{plural(stats.tokens, 'token')} by {format_seconds(stats.end_ms)}"
        + (f" ({rate:.1f} tok/s after the first token)" if rate else "")
        + f", ended: {stats.cause}"
        + (
            f" (the context left room for {stats.max_tokens} of the {live.settings.max_tokens} tokens asked)"
            if stats.context_limited
            else ""
        )
        + f"; seed {live.settings.sampler.seed}",
    ]
    if result.record:
        lines.append(f"recorded: {result.record}")
    return "\n".join(terminal_line(line) for line in lines)  # the GGUF's name, the template's markers


class _StatusProgress(DecodeProgress):
    """The seconds before the first token, and the decoding rate, on the terminal's status line."""

    def __init__(self, status: StatusLine, max_tokens: int) -> None:
        self.status = status
        self.max_tokens = max_tokens
        self.first_ms = 0.0

    def checking_backend(self) -> None:
        self.status.show("checking that this llama.cpp build runs here (once per build)...", elapsed=True)

    def loading_model(self, info: ModelInfo) -> None:
        self.status.show(f"loading {info.name} ({info.size_text})...", elapsed=True)

    def model_loaded(self, info: ModelInfo, load_ms: float) -> None:
        self.status.show("rendering the prompt, compiling the grammar...")

    def hashing_model(self, info: ModelInfo) -> None:
        self.status.show(f"hashing {info.file_name} for the recording...", elapsed=True)

    def evaluating_prompt(self, prompt_tokens: int) -> None:
        self.status.show(f"evaluating the prompt ({prompt_tokens} tokens)...", elapsed=True)

    def token(self, tokens: int, ms: float) -> None:
        if tokens == 1:
            self.first_ms = ms
            self.status.show(f"decoding: 1/{self.max_tokens} tokens")
        elif self.status.due():
            span = ms - self.first_ms
            rate = f", {(tokens - 1) * 1000.0 / span:.1f} tok/s" if span > 0 else ""
            self.status.update(f"decoding: {tokens}/{self.max_tokens} tokens{rate}")


class _cancel_on_interrupt:
    """Ctrl-C sets the stop flag (the loop ends after the current token) instead of killing the run."""

    def __enter__(self) -> threading.Event:
        self.stop = threading.Event()
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, lambda *_: self.stop.set())
        return self.stop

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
