"""`callscope gui [FILE]`: the inspector window (Qt is imported only inside the handler)."""

from __future__ import annotations

import argparse
import math
import os

from callscope.commands.common import CliError, check_format, check_policy
from callscope.panes.specs import pane_ids

ANIMATION_VIEWS = ("client", "presenter", "window")
#: `--theme` reaches the window through this variable (see callscope.ui.theme_menu).
THEME_ENV = "CALLSCOPE_THEME"
#: What an export-only run (no window left open) may be asked for.
_OUTPUTS = ("screenshot", "export_animation", "export_plot")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "gui",
        help="open the inspector window (a trace, a fixture, or a live run of the packaged model)",
        description="Open the inspector on FILE (a trace or a byte-prefix fixture), or on a folder of recordings "
        "(the Corpus table, as File > Open folder). Without FILE: a live run of the packaged model with the sample "
        "tools, or a shipped fixture when no model can run.",
    )
    p.add_argument("file", nargs="?", help="trace (.jsonl) or byte-prefix fixture (.txt) to open, a shipped "
                   "fixture's name (e.g. headline_701_tokens), or a folder of recordings to check and list")
    p.add_argument("--template", metavar="FILE|GGUF", help="analyse a chat template (a .jinja, a tokenizer_config.json, "
                   "or a GGUF's own) in the Template pane")
    p.add_argument("--screenshot", metavar="OUT.png", help="render the window offscreen to OUT.png and exit")
    p.add_argument("--at", type=int, metavar="STEP", help="with --screenshot: put the cursor at STEP")
    p.add_argument("--tab", choices=pane_ids(), help="with --screenshot: the tab shown on the right "
                   f"(default {pane_ids()[0]})")
    p.add_argument("--presenter", action="store_true",
                   help="with --screenshot: presenter mode (the client view over the TTFD plot, large)")
    p.add_argument("--size", metavar="WxH", help="with --screenshot or an export: the window size (default 1400x900)")
    p.add_argument("--export-animation", metavar="OUT",
                   help="write the replay from the start at real timing as OUT and exit: .gif, .png (animated PNG), "
                   ".mp4 (needs ffmpeg)")
    p.add_argument("--animation-view", choices=ANIMATION_VIEWS, default="client",
                   help="what the animation shows: the client view (default), presenter mode, or the whole window")
    p.add_argument("--fps", type=float, default=10.0, help="animation frames per second (default 10)")
    p.add_argument("--speed", type=float, default=1.0, help="animation playback speed (default 1 = real time)")
    p.add_argument("--export-plot", metavar="OUT", help="write one plot alone, without buttons or cursor, and exit: "
                   ".png (--plot-width pixels wide) or .svg")
    p.add_argument("--plot", choices=("ttfd", "timeline"), default="ttfd", help="with --export-plot: which plot")
    p.add_argument("--plot-width", type=int, default=2400, help="with --export-plot: PNG width in pixels (default 2400)")
    p.add_argument("--theme", choices=("dark", "light", "system"),
                   help="colour theme for this window (default: the one chosen in View > Theme, else dark)")
    p.add_argument("--policy", help="streaming policy to analyse with (default incremental)")
    p.add_argument("--format", help="override the recorded wire format of a trace")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.policy is not None:
        check_policy(args.policy)
    if args.format is not None:
        check_format(args.format)
    if (args.at is not None or args.tab is not None or args.presenter) and not args.screenshot:
        raise CliError("--at, --tab and --presenter only apply with --screenshot")
    exporting = any(getattr(args, name) for name in _OUTPUTS)
    if args.size is not None and not exporting:
        raise CliError("--size only applies with --screenshot, --export-animation or --export-plot")
    size = _size(args.size) if args.size is not None else None
    _check_animation(args)
    if not 16 <= args.plot_width <= 20000:
        raise CliError(f"--plot-width must be 16 to 20000 pixels, not {args.plot_width}")
    if args.file is not None:
        from callscope.engine.core.shipped import resolve_recording

        args.file = resolve_recording(args.file)
        if not os.path.exists(args.file):
            raise CliError(f"cannot open {args.file}: no such file (nor a shipped fixture of that name)")
    if args.template is not None and not os.path.exists(args.template):
        raise CliError(f"cannot open the template {args.template}: no such file")
    if exporting:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from callscope.gui_main import launch
        from callscope.headless import SCREENSHOT_SIZE, HeadlessJob
    except ImportError as exc:
        raise CliError(f"the GUI is not available: {exc}") from None
    if args.theme is not None:
        os.environ[THEME_ENV] = args.theme  # read by the window's theme menu; not saved as the user's choice
    job = None
    if exporting:
        job = HeadlessJob(
            screenshot=args.screenshot, at=args.at, tab=args.tab, size=size or SCREENSHOT_SIZE, presenter=args.presenter,
            animation=args.export_animation, animation_view=args.animation_view, fps=args.fps, speed=args.speed,
            plot=args.export_plot, plot_kind=args.plot, plot_width=args.plot_width,
        )
    return launch(args.file, None, None, args.policy, args.format, job=job, template=args.template)


def _size(text: str) -> tuple[int, int]:
    """``1024x700`` -> (1024, 700); anything else is a usage error."""
    width, sep, height = text.lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit():
        raise CliError(f"--size takes WIDTHxHEIGHT in pixels, e.g. 1024x700, not {text!r}")
    w, h = int(width), int(height)
    if not (320 <= w <= 8192 and 240 <= h <= 8192):
        raise CliError(f"--size must be 320x240 to 8192x8192, not {text}")
    return w, h


def _check_animation(args: argparse.Namespace) -> None:
    if not (math.isfinite(args.fps) and 0 < args.fps <= 60):
        raise CliError(f"--fps must be above 0 and at most 60, not {args.fps}")
    if not (math.isfinite(args.speed) and 0 < args.speed <= 100):
        raise CliError(f"--speed must be above 0 and at most 100, not {args.speed}")
    out = args.export_animation
    if out is not None and not out.lower().endswith((".gif", ".png", ".apng", ".mp4")):
        raise CliError(f"--export-animation writes .gif, .png (animated), .apng or .mp4, not {out}")
    if args.export_plot is not None and not args.export_plot.lower().endswith((".png", ".svg")):
        raise CliError(f"--export-plot writes .png or .svg, not {args.export_plot}")
