"""``python -m lockward ARGS``: runs the ``lockward`` command this package installed."""

from __future__ import annotations

import os
import subprocess
import sys

from lockward import find_lockward_bin


def _run() -> int:
    binary = find_lockward_bin()
    if sys.platform == "win32":
        return subprocess.run([binary, *sys.argv[1:]], check=False).returncode
    # In place of this interpreter, so that signals and the exit status are the command's.
    os.execv(binary, [binary, *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    sys.exit(_run())
