"""The `lockward` command that `pip install` puts on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import lockward


def run(binary: str, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([binary, *args], cwd=root, capture_output=True, text=True, check=False)


def test_the_command_is_installed_in_the_environments_scripts_as_the_compiled_binary(lockward_bin: str) -> None:
    assert Path(lockward_bin).parent == Path(sysconfig.get_path("scripts"))
    assert os.access(lockward_bin, os.X_OK)
    with open(lockward_bin, "rb") as binary:
        magic = binary.read(4)
    if sys.platform.startswith("linux"):
        # The binary itself (as ruff and uv ship theirs), not a Python launcher script.
        assert magic == b"\x7fELF"


def test_the_command_says_the_packages_version(lockward_bin: str, harbor: Path) -> None:
    result = run(lockward_bin, harbor, "--version")
    assert result.returncode == 0, result.stderr
    assert lockward.__version__ in result.stdout


def test_check_passes_on_the_example_with_exit_status_0(lockward_bin: str, harbor: Path) -> None:
    result = run(lockward_bin, harbor, "check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check: no errors" in result.stdout


def test_check_exits_1_when_code_uses_an_unregistered_id(lockward_bin: str, harbor: Path) -> None:
    (harbor / "services" / "api" / "export.py").write_text(
        "import db\n\ndb.execute('SELECT pg_try_advisory_lock(1001777)')\n"
    )
    result = run(lockward_bin, harbor, "check")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "unregistered-id" in result.stdout


def test_check_exits_2_without_a_registry(lockward_bin: str, tmp_path: Path) -> None:
    result = run(lockward_bin, tmp_path, "check")
    assert result.returncode == 2
    assert "no lockward.toml" in result.stderr


def test_python_dash_m_lockward_runs_the_same_command(harbor: Path) -> None:
    result = run(sys.executable, harbor, "-m", "lockward", "check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "check: no errors" in result.stdout
