#!/usr/bin/env python3
"""Install callscope's freedesktop launcher and icon for this user (``make desktop``).

Writes ``~/.local/share/applications/callscope.desktop`` (from the shipped
resources/callscope.desktop, with ``Exec`` pointing at this venv's
``callscope``) and the scalable icon into the hicolor theme, then refreshes
the menu caches when their tools are installed. ``--prefix`` installs
elsewhere (the tests use a temporary folder); ``--uninstall`` removes both.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from pathlib import Path

from callscope.engine.core.shipped import resource


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def targets(prefix: Path) -> tuple[Path, Path]:
    return prefix / "applications" / "callscope.desktop", prefix / "icons" / "hicolor" / "scalable" / "apps" / "callscope.svg"


def install(prefix: Path, exec_line: str) -> list[Path]:
    desktop, icon = targets(prefix)
    desktop.parent.mkdir(parents=True, exist_ok=True)
    icon.parent.mkdir(parents=True, exist_ok=True)
    text = resource("callscope.desktop").read_text(encoding="utf-8")
    lines = [f"Exec={exec_line} %f" if line.startswith("Exec=") else line for line in text.splitlines()]
    desktop.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copyfile(resource("icons", "callscope.svg"), icon)
    for tool, arg in (("update-desktop-database", desktop.parent), ("gtk-update-icon-cache", prefix / "icons" / "hicolor")):
        if shutil.which(tool):
            subprocess.run([tool, "-q", str(arg)], check=False, capture_output=True)
    return [desktop, icon]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exec", dest="exec_line", default="callscope gui", help="the command the launcher runs")
    parser.add_argument("--prefix", type=Path, default=None, help="data folder (default $XDG_DATA_HOME or ~/.local/share)")
    parser.add_argument("--uninstall", action="store_true")
    args = parser.parse_args()
    prefix = args.prefix or data_home()
    if args.uninstall:
        for path in targets(prefix):
            path.unlink(missing_ok=True)
            print(f"removed {path}")
        return 0
    for path in install(prefix, args.exec_line):
        print(f"installed {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
