"""Fixtures: a copy of examples/harbor to change, and the lockward command the wheel installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import lockward

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def harbor(tmp_path: Path) -> Path:
    """A fresh copy of the example project, the one the README's first command runs on."""
    root = tmp_path / "harbor"
    shutil.copytree(REPO / "examples" / "harbor", root, ignore=shutil.ignore_patterns("target"))
    return root


@pytest.fixture(scope="session")
def lockward_bin() -> str:
    """The `lockward` command as `pip install` put it on PATH."""
    return lockward.find_lockward_bin()


@pytest.fixture
def cli_json(lockward_bin: str):
    """Runs `lockward ARGS --format json` in a directory and returns the parsed report."""

    def run(root: Path, *args: str) -> dict:
        result = subprocess.run(
            [lockward_bin, *args, "--format", "json"],
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode in (0, 1), result.stderr
        return json.loads(result.stdout)

    return run
