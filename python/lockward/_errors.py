"""The exceptions lockward raises; the extension module instantiates them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from lockward._lockward import Finding


class RegistryError(Exception):
    """A registry that cannot be read or breaks a rule.

    ``str()`` is the summary and then every finding, one ``path:line:col: severity[code]: message``
    line each (with the locations that explain it and the help indented below); ``findings`` holds
    them as :class:`lockward.Finding` objects, errors and warnings alike.
    """

    findings: list[Finding]

    def __init__(self, message: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = list(findings)


class PluginRefused(RegistryError):
    """A plugin that admission refuses (the README's "Plugins" section): its ids collide with core's, are retired, were
    handed over to another plugin, are declared by a plugin loaded before, or lie in core's block
    without a handover; or its manifest is unreadable or malformed.

    ``str()`` names both sides of each collision and where each is declared; ``findings`` are the
    findings ``lockward plugins --format json`` prints for the same manifest.
    """
