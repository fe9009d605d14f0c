"""`lockward.Registry`: the import-time check of a Python host."""

from __future__ import annotations

from pathlib import Path

import pytest

import lockward


def test_the_example_registry_loads_with_the_figures_lockward_list_prints(harbor: Path, cli_json) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    listing = cli_json(harbor, "list")
    assert registry.project == listing["project"] == "harbor"
    assert registry.core_constants == listing["core_constants"] == 4
    # The example's manifests declare no id inside the block and it is no git repository, so
    # the registry's own figure is the command's.
    assert registry.next_free_id == listing["next_free_id"] == 1_001_007
    assert registry.path == str(harbor / "lockward.toml")


def test_every_lock_has_the_fields_lockward_list_prints_for_it(harbor: Path, cli_json) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    listed = cli_json(harbor, "list")["locks"]
    locks = registry.locks()
    assert [lock.id for lock in locks] == [entry["id"] for entry in listed]
    assert [lock.id for lock in locks] == sorted(lock.id for lock in locks)
    for lock, entry in zip(locks, listed):
        assert (lock.id, lock.literal, lock.kind, lock.constant, lock.owner, lock.worker, lock.key) == (
            entry["id"],
            entry["literal"],
            entry["kind"],
            entry["constant"],
            entry["owner"],
            entry["worker"],
            entry["key"],
        )
        assert lock.defined_in == entry["defined_in"]
        assert lock.reason == entry["reason"]


def test_a_lock_is_found_by_constant_name_and_by_id(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    by_name = registry.lock("ADVISORY_LOCK_INVOICE_ROLLUP")
    by_id = registry.lock(1_001_001)
    for lock in (by_name, by_id):
        assert lock.id == 1_001_001
        assert lock.literal == "1_001_001"
        assert lock.kind == "constant"
        assert lock.constant == "ADVISORY_LOCK_INVOICE_ROLLUP"
        assert lock.owner == "core"
        assert lock.worker == "invoice rollup"
        assert lock.key == "exact"
        assert lock.defined_in == ["crates/harbor-core/src/locks.rs"]
    family = registry.lock("ADVISORY_LOCK_RELOAD_BASE")
    assert family.key == "family"
    legacy = registry.lock(0x6E697374)
    assert legacy.literal == "0x6E697374"
    handover = registry.lock(1_001_002)
    assert (handover.kind, handover.owner, handover.constant) == ("handover", "plugin:billing", None)
    external = registry.lock("_CATALOG_LOCK_KEY")
    assert external.kind == "external"
    assert external.defined_in == ["services/api/catalog.py", "services/api/catalog_sync.py"]


def test_an_absent_name_or_id_raises_key_error(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    with pytest.raises(KeyError, match="ADVISORY_LOCK_NOPE"):
        registry.lock("ADVISORY_LOCK_NOPE")
    with pytest.raises(KeyError, match="1001999"):
        registry.lock(1_001_999)
    with pytest.raises(KeyError):
        registry.lock(2**80)


def test_a_lock_key_that_is_neither_str_nor_int_raises_type_error(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    with pytest.raises(TypeError, match="float"):
        registry.lock(1001001.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="bool"):
        registry.lock(True)


def test_a_core_constant_outside_the_block_is_a_warning_of_a_valid_registry(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    assert [(w.code, w.severity, w.line) for w in registry.warnings] == [("constant-outside-block", "warning", 55)]


def test_a_broken_registry_raises_registry_error_with_every_finding_and_its_position(harbor: Path) -> None:
    path = harbor / "lockward.toml"
    text = path.read_text()
    # A second entry with the invoice rollup's id, and an unknown key.
    text += '\n[[lock]]\nid = 1_001_001\nconstant = "ADVISORY_LOCK_DUPLICATE"\nworker = "dup"\ndefined-in = ["x.py"]\n'
    path.write_text(text)
    lines = text.splitlines()
    duplicate_line = len(lines) - 3
    assert lines[duplicate_line - 1] == "id = 1_001_001"
    with pytest.raises(lockward.RegistryError) as raised:
        lockward.Registry.load(path)
    findings = raised.value.findings
    assert all(isinstance(finding, lockward.Finding) for finding in findings)
    by_code = {finding.code: finding for finding in findings}
    assert {"duplicate-id", "unknown-key"} <= set(by_code)
    duplicate = by_code["duplicate-id"]
    assert (duplicate.severity, duplicate.path, duplicate.line, duplicate.column) == (
        "error",
        "lockward.toml",
        duplicate_line,
        6,
    )
    assert duplicate.source_line == "id = 1_001_001"
    assert [(label.path, label.line) for label in duplicate.labels] == [("lockward.toml", 21)]
    assert "defined_in" in (by_code["unknown-key"].help or by_code["unknown-key"].message)
    message = str(raised.value)
    assert "lockward.toml: the registry has 2 errors" in message
    assert f"lockward.toml:{duplicate_line}:6: error[duplicate-id]" in message


def test_the_findings_of_a_broken_registry_are_the_ones_lockward_check_prints(harbor: Path, cli_json) -> None:
    path = harbor / "lockward.toml"
    path.write_text(path.read_text() + '\n[[lock]]\nid = 1_001_001\nretired = "again"\n')
    with pytest.raises(lockward.RegistryError) as raised:
        lockward.Registry.load(path)
    printed = cli_json(harbor, "check")["findings"]
    assert [finding.to_dict() for finding in raised.value.findings] == printed


def test_a_missing_registry_raises_file_not_found_error_as_open_would(tmp_path: Path) -> None:
    # It raised RegistryError, saying the reason twice.
    missing = tmp_path / "lockward.toml"
    with pytest.raises(FileNotFoundError) as raised:
        lockward.Registry.load(missing)
    assert raised.value.filename == str(missing)
    assert raised.value.errno == 2
    assert str(raised.value).count("No such file or directory") == 1
    with pytest.raises(OSError, match="it is a directory, not a regular file"):
        lockward.Registry.load(tmp_path)


def test_one_entry_looked_up_twice_is_equal_and_hashes_alike(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    by_name = registry.lock("ADVISORY_LOCK_INVOICE_ROLLUP")
    by_id = registry.lock(1_001_001)
    assert by_name == by_id
    assert hash(by_name) == hash(by_id)
    assert len({by_name, by_id, registry.lock(1_001_003)}) == 2
    assert by_name != registry.lock(1_001_003)


def test_a_registry_that_is_not_toml_raises_registry_error_at_the_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "lockward.toml"
    path.write_text('[project]\nname = "x"\n[core\n')
    with pytest.raises(lockward.RegistryError) as raised:
        lockward.Registry.load(str(path))
    (finding,) = raised.value.findings
    assert (finding.code, finding.line) == ("toml-syntax", 3)
