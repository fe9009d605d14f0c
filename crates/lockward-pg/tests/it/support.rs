use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use lockward_pg::{Cycle, CycleReport, JobError, Outcome, Worker, WorkerBuilder};
use lockward_registry::Registry;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub(crate) fn registry() -> Registry {
    let text = include_str!("../fixtures/lockward.toml");
    match lockward_registry::parse("lockward.toml", text) {
        Ok(loaded) => loaded.registry,
        Err(findings) => panic!("fixture registry: {findings:?}"),
    }
}

/// A recorded job's future.
pub(crate) type BoxedJob = Pin<Box<dyn Future<Output = Result<(), JobError>> + Send>>;

pub(crate) const ROLLUP: &str = "ADVISORY_LOCK_ROLLUP";
pub(crate) const ROLLUP_ID: i64 = 7_000_001;

/// One run of a job, as the job itself saw it.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub(crate) worker: usize,
    pub(crate) cycle: SystemTime,
    pub(crate) fencing_token: Option<i64>,
    pub(crate) started: Instant,
    pub(crate) ended: Option<Instant>,
    pub(crate) cancelled: bool,
    /// Why, as the cycle said once cancelled.
    pub(crate) reason: Option<String>,
}

/// Every job run and every cycle report of a test, from all its workers.
#[derive(Clone, Default)]
pub(crate) struct Log {
    runs: Arc<Mutex<Vec<Run>>>,
    reports: Arc<Mutex<Vec<(usize, CycleReport)>>>,
}

impl Log {
    pub(crate) fn runs(&self) -> Vec<Run> {
        self.runs.lock().unwrap().clone()
    }

    pub(crate) fn reports(&self) -> Vec<(usize, CycleReport)> {
        self.reports.lock().unwrap().clone()
    }

    pub(crate) fn led(&self) -> Vec<(usize, CycleReport)> {
        self.reports()
            .into_iter()
            .filter(|(_, r)| matches!(r.outcome, Outcome::Led { .. }))
            .collect()
    }

    /// A job that records its run and works for `work` unless cancelled first.
    pub(crate) fn job(
        &self,
        worker: usize,
        work: Duration,
    ) -> impl FnMut(Cycle) -> BoxedJob + Send + 'static {
        let runs = self.runs.clone();
        move |cycle: Cycle| {
            let runs = runs.clone();
            Box::pin(async move {
                let index = {
                    let mut runs = runs.lock().unwrap();
                    runs.push(Run {
                        worker,
                        cycle: cycle.start(),
                        fencing_token: cycle.fencing_token(),
                        started: Instant::now(),
                        ended: None,
                        cancelled: false,
                        reason: None,
                    });
                    runs.len() - 1
                };
                let cancelled = tokio::select! {
                    () = cycle.cancelled() => true,
                    () = tokio::time::sleep(work) => false,
                };
                let mut runs = runs.lock().unwrap();
                runs[index].ended = Some(Instant::now());
                runs[index].cancelled = cancelled;
                runs[index].reason = cycle.cancel_reason().map(str::to_owned);
                Ok(())
            })
        }
    }

    pub(crate) fn hook(&self, worker: usize) -> impl Fn(&CycleReport) + Send + Sync + 'static {
        let reports = self.reports.clone();
        move |report: &CycleReport| reports.lock().unwrap().push((worker, report.clone()))
    }
}

/// A running worker and the token that shuts it down.
pub(crate) struct Running {
    pub(crate) stop: CancellationToken,
    pub(crate) task: JoinHandle<Result<(), lockward_pg::Error>>,
}

impl Running {
    pub(crate) async fn shut_down(self) {
        self.stop.cancel();
        tokio::time::timeout(Duration::from_secs(20), self.task)
            .await
            .expect("the worker shuts down")
            .expect("the worker task")
            .expect("the worker ran without a refusal");
    }
}

/// A builder for the rollup worker with fast settings for tests.
pub(crate) fn rollup(url: &str, every: Duration) -> WorkerBuilder {
    Worker::builder(&registry(), ROLLUP)
        .expect("ROLLUP is registered")
        .database_url(url)
        .every(every)
        .probe(Duration::from_millis(200), Duration::from_millis(500))
        .connect_timeout(Duration::from_secs(2))
        .cancel_grace(Duration::from_secs(2))
        .reconnect_backoff(Duration::from_millis(50), Duration::from_millis(500))
}

/// Starts `builder` as worker number `index`, recording into `log`, with a job of `work`.
pub(crate) fn start(builder: WorkerBuilder, log: &Log, index: usize, work: Duration) -> Running {
    let worker = builder
        .on_cycle(log.hook(index))
        .build()
        .expect("worker settings");
    start_with(worker, log.job(index, work))
}

pub(crate) fn start_with<F, Fut>(worker: Worker, job: F) -> Running
where
    F: FnMut(Cycle) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(), JobError>> + Send + 'static,
{
    let stop = CancellationToken::new();
    let task = tokio::spawn(worker.run(job, stop.clone().cancelled_owned()));
    Running { stop, task }
}

/// Polls `condition` every 10 ms until it holds; panics with `what` after `limit`.
pub(crate) async fn wait_for(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Asserts that no two recorded runs overlap in time.
pub(crate) fn assert_no_overlap(runs: &[Run]) {
    let mut runs: Vec<&Run> = runs.iter().collect();
    runs.sort_by_key(|run| run.started);
    for pair in runs.windows(2) {
        let ended = pair[0].ended.expect("every run ended");
        assert!(
            ended <= pair[1].started,
            "runs overlap: worker {} (cycle {:?}) was still running when worker {} started (cycle {:?})",
            pair[0].worker,
            pair[0].cycle,
            pair[1].worker,
            pair[1].cycle
        );
    }
}

/// The backend pid holding the rollup lock in the test's database.
pub(crate) async fn holder_pid(client: &tokio_postgres::Client) -> Option<i32> {
    let holders = lockward_pg::holders(client, lockward_registry::AdvisoryKey::Bigint(ROLLUP_ID))
        .await
        .expect("holders query");
    holders.first().map(|holder| holder.pid)
}
