"""Periodic tasks of harbor's worker service."""

from harbor.tasks import PeriodicTask


def refresh_bq_write_visibility():
    """Recomputes which BigQuery tables each tenant may write to."""


# The lock id is written here, at the call site, with no constant: lockward.toml lists this
# file and says where the id is written (`site`), and `lockward check` finds it here.
bq_write_visibility = PeriodicTask(
    refresh_bq_write_visibility,
    every=300,
    advisory_lock_id=9_001_042,
)
