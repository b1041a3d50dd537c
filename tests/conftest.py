import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every QSettings a test (or a `callscope gui` subprocess) opens lives in a throw-away directory:
# a test run must never touch the user's ~/.config/callscope (recent files pointing into /tmp).
_SETTINGS_HOME = tempfile.mkdtemp(prefix="callscope-test-config-")
os.environ["XDG_CONFIG_HOME"] = _SETTINGS_HOME
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
