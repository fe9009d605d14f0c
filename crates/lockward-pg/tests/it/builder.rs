use std::time::Duration;

use lockward_pg::testing::TestDb;
use lockward_pg::{Error, Keepalive, Worker};
use lockward_registry::AdvisoryKey;

use crate::support::{Log, registry, start, wait_for};

#[test]
fn a_worker_cannot_be_built_from_an_unregistered_constant() {
    let error = Worker::builder(&registry(), "ADVISORY_LOCK_NOPE").unwrap_err();
    assert!(
        matches!(error, Error::UnknownConstant(ref name) if name == "ADVISORY_LOCK_NOPE"),
        "{error}"
    );
}

#[test]
fn a_retired_id_cannot_be_held() {
    let registry = registry();
    let retired = registry.lock(7_000_003).unwrap().clone();
    let error = Worker::builder_for(&registry, &retired).unwrap_err();
    assert!(
        matches!(
            error,
            Error::NotHoldable {
                kind: "retired",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_plugins_handover_can_be_held_through_its_registry_entry() {
    let registry = registry();
    let handover = registry.lock(7_000_004).unwrap();
    let worker = Worker::builder_for(&registry, handover)
        .unwrap()
        .database_url("postgres://u@127.0.0.1/db")
        .every(Duration::from_secs(1))
        .build()
        .unwrap();
    assert_eq!(worker.key(), AdvisoryKey::Bigint(7_000_004));
    assert!(
        worker
            .application_name()
            .starts_with("lockward:pgtest:billing.7000004 ")
    );
}

#[test]
fn a_family_needs_a_member_and_an_exact_lock_refuses_one() {
    let registry = registry();
    let family = Worker::builder(&registry, "ADVISORY_LOCK_RELOAD_BASE").unwrap();
    let url = "postgres://u@127.0.0.1/db";
    let error = family
        .clone()
        .database_url(url)
        .every(Duration::from_secs(1))
        .build()
        .unwrap_err();
    assert!(matches!(error, Error::Member(_)), "{error}");
    let worker = family
        .member(7)
        .database_url(url)
        .every(Duration::from_secs(1))
        .build()
        .unwrap();
    assert_eq!(worker.key(), AdvisoryKey::Pair(7_000_002, 7));
    let exact = Worker::builder(&registry, "ADVISORY_LOCK_ROLLUP")
        .unwrap()
        .member(1);
    let error = exact
        .database_url(url)
        .every(Duration::from_secs(1))
        .build()
        .unwrap_err();
    assert!(matches!(error, Error::Member(_)), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_family_member_worker_holds_the_pair_key_while_it_leads() {
    let db = TestDb::new().await;
    let admin = db.connect().await;
    let builder = Worker::builder(&registry(), "ADVISORY_LOCK_RELOAD_BASE")
        .unwrap()
        .member(7)
        .database_url(db.url())
        .every(Duration::from_millis(200));
    let log = Log::default();
    let worker = start(builder, &log, 0, Duration::from_secs(30));
    wait_for("a job to start", Duration::from_secs(10), || {
        !log.runs().is_empty()
    })
    .await;
    let holders = lockward_pg::holders(&admin, AdvisoryKey::Pair(7_000_002, 7))
        .await
        .unwrap();
    assert_eq!(holders.len(), 1);
    assert!(
        holders[0]
            .application_name
            .starts_with("lockward:pgtest:ADVISORY_LOCK_RELOAD_BASE/7 ")
    );
    worker.shut_down().await;
    assert!(
        lockward_pg::holders(&admin, AdvisoryKey::Pair(7_000_002, 7))
            .await
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_keepalive_that_would_never_declare_the_peer_dead_is_refused() {
    let error = Worker::builder(&registry(), "ADVISORY_LOCK_ROLLUP")
        .unwrap()
        .database_url("postgres://u@127.0.0.1/db")
        .every(Duration::from_secs(1))
        .keepalive(Keepalive {
            count: 0,
            ..Keepalive::default()
        })
        .build()
        .unwrap_err();
    assert!(matches!(error, Error::Setting(_)), "{error}");
}

/// `billing`'s manifest as a host would admit it: the handover 7_000_004 and an id of its own.
fn admitted_billing(registry: &lockward_registry::Registry) -> lockward_registry::AdmittedPlugin {
    let manifest = lockward_registry::Manifest::parse(
        "plugins/billing/plugin.toml",
        "[plugin]\nname = \"billing\"\nadvisory_lock_ids = [7_000_004, 9_100_001]\n",
        "plugin",
    )
    .expect("valid manifest");
    registry.admit(&manifest, &[]).expect("admitted")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_is_built_and_leads_on_an_admitted_plugins_ids() {
    // `AdmittedPlugin::lock` built a lock with an empty span, and `builder_for` compared whole
    // locks with the registry's entry: `NotInRegistry` for the plugin's own handover.
    let registry = registry();
    let billing = admitted_billing(&registry);
    let db = TestDb::new().await;
    let admin = db.connect().await;
    for (id, name) in [
        (7_000_004, "billing.7000004"),
        (9_100_001, "billing.9100001"),
    ] {
        let lock = billing.lock(id).expect("declared");
        let builder = Worker::builder_for(&registry, &lock)
            .unwrap_or_else(|error| panic!("{id}: {error}"))
            .database_url(db.url())
            .every(Duration::from_millis(200));
        let log = Log::default();
        let worker = start(builder, &log, 0, Duration::from_secs(30));
        wait_for("a job to start", Duration::from_secs(10), || {
            !log.runs().is_empty()
        })
        .await;
        let holders = lockward_pg::holders(&admin, AdvisoryKey::Bigint(id))
            .await
            .unwrap();
        assert_eq!(holders.len(), 1, "{id}");
        assert!(
            holders[0]
                .application_name
                .starts_with(&format!("lockward:pgtest:{name} ")),
            "{}",
            holders[0].application_name
        );
        worker.shut_down().await;
    }
}

#[test]
fn a_lock_that_is_not_the_registrys_entry_is_refused() {
    let registry = registry();
    // Another registry's entry of the same id, as another kind.
    let other = lockward_registry::parse(
        "lockward.toml",
        "[project]\nname = \"other\"\n[core]\nconstants = \"x.rs\"\n\
         block = { start = 7_000_001, end = 7_000_999 }\n\
         [[lock]]\nid = 7_000_001\nplugin = \"billing\"\n",
    )
    .expect("valid")
    .registry;
    let foreign = other.lock(7_000_001).expect("registered");
    let error = Worker::builder_for(&registry, foreign).unwrap_err();
    assert!(matches!(error, Error::NotInRegistry(_)), "{error}");
}

#[test]
fn a_hold_past_the_boundary_as_long_as_the_period_is_refused() {
    let builder = Worker::builder(&registry(), "ADVISORY_LOCK_ROLLUP")
        .unwrap()
        .database_url("postgres://u@127.0.0.1/db")
        .every(Duration::from_millis(500));
    let error = builder
        .clone()
        .hold_at_least(Duration::from_millis(500))
        .build()
        .unwrap_err();
    assert!(
        matches!(error, Error::Setting(ref text) if text.contains("must be shorter than the period")),
        "{error}"
    );
    assert!(
        builder
            .hold_at_least(Duration::from_millis(499))
            .build()
            .is_ok()
    );
}

#[test]
fn a_host_given_to_the_builder_is_the_identitys_host() {
    let worker = Worker::builder(&registry(), "ADVISORY_LOCK_ROLLUP")
        .unwrap()
        .database_url("postgres://u@localhost/db")
        .every(Duration::from_secs(60))
        .host("pod 7/alpha")
        .build()
        .unwrap();
    assert_eq!(worker.identity().host(), "pod 7/alpha");
    assert!(
        worker.application_name().ends_with("@pod%207%2Falpha"),
        "{}",
        worker.application_name()
    );
}

#[test]
fn a_host_the_identity_and_the_ledger_cannot_carry_is_refused() {
    for (host, why) in [
        ("", "empty"),
        ("alpha\nbeta", "control character"),
        ("a\0b", "control character"),
    ] {
        let error = Worker::builder(&registry(), "ADVISORY_LOCK_ROLLUP")
            .unwrap()
            .database_url("postgres://u@localhost/db")
            .every(Duration::from_secs(60))
            .host(host)
            .build()
            .unwrap_err();
        assert!(matches!(error, Error::Setting(_)), "{error}");
        assert!(error.to_string().contains(why), "{host:?}: {error}");
    }
}

#[test]
fn a_period_outside_1ms_to_31_days_is_refused_with_its_bounds() {
    for every in [
        Duration::from_nanos(1),
        Duration::from_micros(999),
        lockward_pg::MAX_PERIOD + Duration::from_secs(1),
        Duration::from_secs(i64::MAX.cast_unsigned()),
    ] {
        let built = crate::support::rollup("postgres://nobody@127.0.0.1:1/none", every).build();
        match built {
            Err(Error::Setting(message)) => {
                assert!(message.contains("must be from 1ms to 31 days"), "{message}");
            }
            other => panic!("{every:?}: {other:?}"),
        }
    }
    for every in [lockward_pg::MIN_PERIOD, lockward_pg::MAX_PERIOD] {
        assert!(
            crate::support::rollup("postgres://nobody@127.0.0.1:1/none", every)
                .build()
                .is_ok(),
            "{every:?}"
        );
    }
}
