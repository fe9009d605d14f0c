"""`Registry.admit` and `Registry.admit_ids`: the load-time check of a Python host's plugin loader."""

from __future__ import annotations

from pathlib import Path

import pytest

import lockward


def add_plugin(root: Path, name: str, ids: str) -> Path:
    manifest = root / "plugins" / name / "plugin.toml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(f'# The {name} plugin.\n[plugin]\nname = "{name}"\nadvisory_lock_ids = [{ids}]\n')
    return manifest


def test_the_examples_plugins_are_admitted_from_their_manifests(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    billing = registry.admit(harbor / "plugins" / "billing" / "plugin.toml")
    assert isinstance(billing, lockward.AdmittedPlugin)
    assert (billing.name, billing.ids, billing.manifest) == ("billing", [1_001_002], "plugins/billing/plugin.toml")
    shipping = registry.admit(str(harbor / "plugins" / "shipping" / "plugin.json"), loaded=[billing])
    assert (shipping.name, shipping.ids) == ("shipping", [7_300_001, 7_300_002])


def test_a_plugin_declaring_a_core_constants_id_is_refused_naming_both_sides(harbor: Path, cli_json) -> None:
    manifest = add_plugin(harbor, "evil", "1_001_001")
    registry = lockward.Registry.load(harbor / "lockward.toml")
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit(manifest)
    error = raised.value
    assert isinstance(error, lockward.RegistryError)
    message = str(error)
    # This plugin and where it declares the id; core's constant and where it is registered.
    assert "plugin `evil`" in message
    assert "plugins/evil/plugin.toml:4:22" in message
    assert "core's constant `ADVISORY_LOCK_INVOICE_ROLLUP`" in message
    assert "lockward.toml:21:6" in message
    assert [finding.code for finding in error.findings] == ["plugin-collides-with-core"]
    printed = [
        finding
        for finding in cli_json(harbor, "plugins")["findings"]
        if finding["path"] == "plugins/evil/plugin.toml"
    ]
    assert [finding.to_dict() for finding in error.findings] == printed


def test_a_plugin_declaring_a_retired_id_or_an_id_in_cores_block_is_refused(harbor: Path) -> None:
    manifest = add_plugin(harbor, "late", "1_001_003, 1_001_500")
    registry = lockward.Registry.load(harbor / "lockward.toml")
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit(manifest)
    assert [(f.code, f.line) for f in raised.value.findings] == [
        ("plugin-uses-retired-id", 4),
        ("plugin-id-in-core-block", 4),
    ]
    assert "2 reasons" in str(raised.value)


def test_a_malformed_or_missing_manifest_is_refused_with_its_finding(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    broken = harbor / "plugins" / "broken" / "plugin.toml"
    broken.parent.mkdir()
    broken.write_text('[plugin]\nadvisory_lock_ids = ["seven"]\n')
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit(broken)
    assert {f.code for f in raised.value.findings} == {"malformed-manifest"}
    assert all(f.path == "plugins/broken/plugin.toml" for f in raised.value.findings)
    with pytest.raises(lockward.PluginRefused) as missing:
        registry.admit(harbor / "plugins" / "nowhere" / "plugin.toml")
    assert [(f.code, f.path) for f in missing.value.findings] == [("unreadable", "plugins/nowhere/plugin.toml")]


def test_admit_ids_admits_a_plugin_the_host_holds_and_refuses_a_retired_id(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    billing = registry.admit_ids("billing", [1_001_002])
    assert (billing.name, billing.ids) == ("billing", [1_001_002])
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit_ids("rogue", [1_001_003], source="rogue/manifest.py")
    (finding,) = raised.value.findings
    assert finding.code == "plugin-uses-retired-id"
    # The ids came from the host, not from a file: no position on this side, the registry's on the other.
    assert (finding.path, finding.line, finding.column) == ("rogue/manifest.py", None, None)
    assert [(label.path, label.line) for label in finding.labels] == [("lockward.toml", 30)]
    assert "plugin `rogue`" in str(raised.value)
    assert "lockward.toml:30:6" in str(raised.value)


def test_admit_ids_refuses_an_id_core_handed_over_to_another_plugin(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit_ids("invoicing", [1_001_002])
    assert [f.code for f in raised.value.findings] == ["plugin-takes-others-handover"]
    assert "plugin `billing`" in str(raised.value)


def test_an_id_a_loaded_plugin_declares_is_refused_only_when_that_plugin_is_passed_as_loaded(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    shipping = registry.admit(harbor / "plugins" / "shipping" / "plugin.json")
    # Alone, an id outside the block that nothing registers is free to take.
    assert registry.admit_ids("labels", [7_300_002]).ids == [7_300_002]
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit_ids("labels", [7_300_002], loaded=[shipping])
    (finding,) = raised.value.findings
    assert finding.code == "plugin-id-shared"
    message = str(raised.value)
    assert "plugin `labels`" in message
    assert "plugin `shipping` also declares" in message
    assert [(label.path, label.line) for label in finding.labels] == [("plugins/shipping/plugin.json", 4)]
    assert "plugins/shipping/plugin.json:4:" in message


def test_two_host_held_plugins_sharing_an_id_refuse_the_second(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    first = registry.admit_ids("exports", [7_400_001])
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit_ids("imports", [7_400_001], loaded=[first])
    (finding,) = raised.value.findings
    assert finding.code == "plugin-id-shared"
    assert [(label.path, label.line) for label in finding.labels] == [("<admit_ids exports>", None)]


def test_a_plugin_name_with_quotes_reaches_the_messages_as_written(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit_ids('odd "name"\n', [1_001_001])
    assert 'plugin `odd "name"\n`' in str(raised.value)


def test_admit_ids_refuses_a_bool_and_names_an_id_beyond_bigint(harbor: Path) -> None:
    registry = lockward.Registry.load(harbor / "lockward.toml")
    # `True` was id 1 here while `lock(True)` was refused.
    with pytest.raises(TypeError, match="ints, not bool"):
        registry.admit_ids("flags", [True])
    # `2**64` was a raw `OverflowError: ... C long`.
    with pytest.raises(ValueError, match="18446744073709551616 does not fit PostgreSQL's bigint"):
        registry.admit_ids("huge", [2**64])


def test_help_shows_the_defaults_as_written() -> None:
    # `help()` showed `loaded=Ellipsis`.
    assert lockward.Registry.admit.__text_signature__ == "($self, path, loaded=())"
    assert lockward.Registry.admit_ids.__text_signature__ == "($self, name, ids, loaded=(), source=None)"


def test_a_refused_manifest_is_named_normalized_and_from_the_working_directory(
    harbor: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil = harbor.parent / "evil" / "plugin.toml"
    evil.parent.mkdir()
    evil.write_text('[plugin]\nname = "evil"\nadvisory_lock_ids = [1_001_001]\n')
    registry = lockward.Registry.load(harbor / "lockward.toml")
    monkeypatch.chdir(harbor.parent)
    with pytest.raises(lockward.PluginRefused) as raised:
        registry.admit(harbor / ".." / "evil" / "plugin.toml")
    message = str(raised.value)
    # Both sides relative to the working directory, the `..` resolved.
    assert "plugin `evil` (evil/plugin.toml)" in message, message
    assert "harbor/lockward.toml:" in message, message
    assert "/../" not in message, message
    # The findings keep the paths `lockward plugins --format json` prints.
    (finding,) = raised.value.findings
    assert finding.path == str(evil)
    assert [label.path for label in finding.labels] == ["lockward.toml"]
