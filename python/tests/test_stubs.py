"""The type stubs and docstrings the wheel ships, so editors show the API."""

from __future__ import annotations

import ast
from pathlib import Path

import lockward
import lockward._lockward as native


def stub_tree() -> ast.Module:
    return ast.parse((Path(lockward.__file__).parent / "_lockward.pyi").read_text())


def test_the_wheel_ships_the_stubs_and_the_py_typed_marker() -> None:
    package = Path(lockward.__file__).parent
    assert (package / "py.typed").is_file()
    assert (package / "_lockward.pyi").is_file()


def test_the_stubs_name_exactly_the_classes_and_members_the_module_has() -> None:
    stubbed: dict[str, set[str]] = {}
    for node in stub_tree().body:
        if isinstance(node, ast.ClassDef):
            stubbed[node.name] = {
                item.name
                for item in node.body
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("_")
            }
    runtime = {
        name: {member for member in vars(getattr(native, name)) if not member.startswith("_")}
        for name in dir(native)
        if isinstance(getattr(native, name), type)
    }
    assert stubbed == runtime


def test_every_public_class_and_member_has_a_docstring() -> None:
    for name in lockward.__all__:
        value = getattr(lockward, name)
        if isinstance(value, str):
            continue
        assert value.__doc__, name
        if isinstance(value, type):
            for member, attribute in vars(value).items():
                if not member.startswith("_"):
                    assert getattr(attribute, "__doc__", None), f"{name}.{member}"
