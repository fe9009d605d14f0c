//! What the worker records through the `metrics` facade, read back as a Prometheus scrape.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lockward_pg::testing::TestDb;
use lockward_pg::{CycleReport, JobError, Outcome};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio_util::sync::CancellationToken;

use crate::support::{rollup, wait_for};

/// The value of `metric` in a scrape of `handle` (one lock: the rollup's).
fn value(handle: &PrometheusHandle, metric: &str) -> Option<f64> {
    let text = handle.render();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|line| Ok(line.to_owned())))
        .expect("the Prometheus text format");
    scrape
        .samples
        .into_iter()
        .find(|sample| sample.metric == metric)
        .inspect(|sample| {
            // The label scheme `lockward serve`'s series share: project and lock.
            if metric != "lockward_build_info" {
                assert_eq!(sample.labels.get("project"), Some("pgtest"), "{metric}");
                assert!(sample.labels.get("lock").is_some(), "{metric}");
            }
        })
        .and_then(|sample| match sample.value {
            prometheus_parse::Value::Counter(value)
            | prometheus_parse::Value::Gauge(value)
            | prometheus_parse::Value::Untyped(value) => Some(value),
            _ => None,
        })
}

// A current-thread runtime: the worker, its job and the thread-local recorder share the test's
// thread. The samples are counts and a 0/1 gauge, exact in an f64.
#[allow(clippy::float_cmp, clippy::cast_precision_loss)]
#[tokio::test(flavor = "current_thread")]
async fn the_leader_gauge_is_1_while_the_job_runs_and_every_led_cycle_is_counted_with_its_hold() {
    let db = TestDb::new().await;
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(lockward_pg::HOLD_SECONDS.to_owned()),
            lockward_pg::HOLD_SECONDS_BUCKETS,
        )
        .expect("buckets")
        .build_recorder();
    let handle = recorder.handle();
    let _local = metrics::set_default_local_recorder(&recorder);

    let reports: Arc<Mutex<Vec<CycleReport>>> = Arc::default();
    let seen = Arc::clone(&reports);
    let worker = rollup(&db.url(), Duration::from_millis(200))
        .ledger(true)
        .on_cycle(move |report| seen.lock().expect("reports").push(report.clone()))
        .build()
        .expect("worker settings");
    let in_job: Arc<Mutex<Vec<Option<f64>>>> = Arc::default();
    let stop = CancellationToken::new();
    let job = {
        let (handle, in_job) = (handle.clone(), Arc::clone(&in_job));
        move |_cycle| {
            let leader = value(&handle, "lockward_worker_leader");
            in_job.lock().expect("gauge values").push(leader);
            async { Ok::<(), JobError>(()) }
        }
    };
    let run = worker.run(job, stop.clone().cancelled_owned());
    let watch = async {
        wait_for("3 led cycles", Duration::from_secs(30), || {
            let reports = reports.lock().expect("reports");
            let led = reports.iter();
            led.filter(|report| matches!(report.outcome, Outcome::Led { .. }))
                .count()
                >= 3
        })
        .await;
        stop.cancel();
    };
    let (ran, ()) = tokio::join!(run, watch);
    ran.expect("the worker runs");

    let reports = reports.lock().expect("reports").clone();
    let led = reports
        .iter()
        .filter(|report| matches!(report.outcome, Outcome::Led { .. }))
        .count() as f64;
    let held = reports
        .iter()
        .filter(|report| {
            matches!(
                report.outcome,
                Outcome::Led { .. }
                    | Outcome::Failed { .. }
                    | Outcome::Lost { .. }
                    | Outcome::ShutDown { .. }
            )
        })
        .count() as f64;
    let in_job = in_job.lock().expect("gauge values").clone();
    assert!(
        !in_job.is_empty() && in_job.iter().all(|&leader| leader == Some(1.0)),
        "the leader gauge while the job ran: {in_job:?}"
    );
    assert_eq!(value(&handle, "lockward_worker_leader"), Some(0.0));
    assert_eq!(
        value(&handle, "lockward_worker_cycles_led_total"),
        Some(led)
    );
    // The last success: after the last led cycle, by the wall clock, within the test's minute.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .expect("after the epoch")
        .as_secs_f64();
    let last = value(&handle, "lockward_worker_last_success_timestamp_seconds")
        .expect("the last success is recorded");
    assert!(
        last <= now && now - last < 60.0,
        "last success {last}, now {now}"
    );
    // A led cycle, however it ended, is at or after the last success.
    let last_led = value(&handle, "lockward_worker_last_led_timestamp_seconds")
        .expect("the last led cycle is recorded");
    assert!(
        last_led >= last && last_led <= now,
        "last led {last_led}, last success {last}"
    );
    assert_eq!(value(&handle, "lockward_worker_period_seconds"), Some(0.2));
    let started =
        value(&handle, "lockward_worker_started_timestamp_seconds").expect("the start is recorded");
    assert!(
        started <= last && now - started < 60.0,
        "started {started}, now {now}"
    );
    assert!(
        handle.render().contains(&format!(
            "lockward_build_info{{version=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        handle.render()
    );
    assert_eq!(
        value(&handle, "lockward_worker_cycles_failed_total"),
        Some(0.0),
        "registered at 0"
    );
    assert_eq!(
        value(&handle, "lockward_worker_hold_seconds_count"),
        Some(held)
    );
}
