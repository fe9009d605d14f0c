"""The PEP 517 build backend of the lockward wheel: maturin's, after building the command.

maturin builds one Cargo target per wheel: here the pyo3 module (crates/lockward-py). The wheel
also carries the ``lockward`` command, the very binary ``cargo install`` builds (as ruff and uv
ship theirs), so that ``pip install`` puts it on PATH. Before each wheel this backend builds
lockward-cli with cargo and copies the binary into the wheel data directory that
``[tool.maturin] data`` names, under ``scripts/``, which installers put on PATH. Every other hook
is maturin's.

``LOCKWARD_WHEEL_PROFILE`` picks the Cargo profile of both builds: ``release`` (the default) or
``dev`` (what the tests use: it shares the debug build of ``cargo test``).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
from typing import Any, Mapping

import maturin
from maturin import (  # noqa: F401  (re-exported hooks)
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

# Where the command is copied to: `[tool.maturin] data` in pyproject.toml, plus `scripts`.
DATA_DIR = os.path.join("target", "lockward-wheel-data")


def _profile() -> str:
    profile = os.environ.get("LOCKWARD_WHEEL_PROFILE", "release")
    if profile not in ("release", "dev"):
        raise SystemExit(f"LOCKWARD_WHEEL_PROFILE is {profile!r}; it must be `release` or `dev`")
    return profile


def _data_dir() -> str:
    """The wheel data directory, made when missing: maturin refuses a `data` that does not exist."""
    scripts = os.path.join(DATA_DIR, "scripts")
    os.makedirs(scripts, exist_ok=True)
    return scripts


def _build_command(profile: str) -> None:
    command = [
        "cargo",
        "build",
        "--locked",
        "--package",
        "lockward-cli",
        "--bin",
        "lockward",
        "--profile",
        profile,
        "--message-format",
        "json-render-diagnostics",
    ]
    print(f"Running `{shlex.join(command)}`", flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, check=False)
    if result.returncode != 0:
        raise SystemExit(f"building the lockward command failed: `{shlex.join(command)}` exited {result.returncode}")
    executable = None
    for line in result.stdout.decode(errors="replace").splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if (
            message.get("reason") == "compiler-artifact"
            and message.get("target", {}).get("name") == "lockward"
            and message.get("executable")
        ):
            executable = message["executable"]
    if executable is None:
        raise SystemExit(f"`{shlex.join(command)}` reported no `lockward` executable")
    target = os.path.join(_data_dir(), os.path.basename(executable))
    shutil.copyfile(executable, target)
    mode = os.stat(target).st_mode
    os.chmod(target, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    print(f"Copied {executable} to {target}", flush=True)


def _maturin_settings(
    config_settings: Mapping[str, Any] | None, profile: str
) -> Mapping[str, Any] | None:
    """maturin's settings, with the profile added unless the caller chose one."""
    args = maturin.get_maturin_pep517_args(config_settings)
    if any(arg in ("--profile", "--release") or arg.startswith("--profile=") for arg in args):
        return config_settings
    settings = dict(config_settings or {})
    settings.pop("build-args", None)
    settings["maturin.build-args"] = [*args, "--profile", profile]
    return settings


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Builds the command, then maturin's wheel, which carries it."""
    profile = _profile()
    _build_command(profile)
    return maturin.build_wheel(wheel_directory, _maturin_settings(config_settings, profile), metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Builds the command, then maturin's editable wheel, which carries it."""
    profile = _profile()
    _build_command(profile)
    return maturin.build_editable(wheel_directory, _maturin_settings(config_settings, profile), metadata_directory)


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    """maturin's metadata, which needs the data directory to exist (the command is not built yet)."""
    _data_dir()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    """maturin's metadata, which needs the data directory to exist (the command is not built yet)."""
    _data_dir()
    return maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_sdist(sdist_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    """maturin's sdist: the sources only (a wheel built from it builds the command anew)."""
    _data_dir()
    return maturin.build_sdist(sdist_directory, config_settings)
