"""`callscope gui [FILE]`: the inspector window (Qt is imported only inside the handler)."""

from __future__ import annotations

import argparse
import os

from callscope.commands.common import CliError, check_format, check_policy

TABS = ("deltas", "reconciliation", "ttfd", "compare")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gui",
        help="open the inspector window (a trace, a fixture, or a live run of the packaged model)",
        description="Open the inspector on FILE (a trace or a byte-prefix fixture). Without FILE: a live run of the "
        "packaged model with the sample tools, or a shipped fixture when no model can run.",
    )
    p.add_argument("file", nargs="?", help="trace (.jsonl) or byte-prefix fixture (.txt) to open, or a shipped "
                   "fixture's name (e.g. headline_701_tokens)")
    p.add_argument("--screenshot", metavar="OUT.png", help="render the window offscreen to OUT.png and exit")
    p.add_argument("--at", type=int, metavar="STEP", help="with --screenshot: put the cursor at STEP")
    p.add_argument("--tab", choices=TABS, help="with --screenshot: the tab shown on the right (default deltas)")
    p.add_argument("--policy", help="streaming policy to analyse with (default incremental)")
    p.add_argument("--format", help="override the recorded wire format of a trace")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.policy is not None:
        check_policy(args.policy)
    if args.format is not None:
        check_format(args.format)
    if (args.at is not None or args.tab is not None) and not args.screenshot:
        raise CliError("--at and --tab only apply with --screenshot")
    if args.file is not None:
        from callscope.engine.core.shipped import resolve_recording

        args.file = resolve_recording(args.file)
        if not os.path.exists(args.file):
            raise CliError(f"cannot open {args.file}: no such file (nor a shipped fixture of that name)")
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from callscope.gui_main import launch
    except ImportError as exc:
        raise CliError(f"the GUI is not available: {exc}") from None
    tab = TABS.index(args.tab) if args.tab else None
    return launch(args.file, args.screenshot, args.at, args.policy, args.format, tab=tab)
