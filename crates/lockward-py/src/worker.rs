//! The runtime for Python workers: `lockward.Worker` is the Rust worker (`lockward_pg::Worker`)
//! run on pyo3-async-runtimes' tokio runtime (threads of its own), its jobs awaited on the
//! caller's asyncio loop.
//!
//! The bridge between the two is pyo3-async-runtimes in both directions: each cycle's job is a
//! Python coroutine the Rust worker awaits (`into_future_with_locals`), and the cycle's
//! cancellation is a Rust future the coroutine awaits (`future_into_py`), so a lost lock cancels
//! the job's task on its own loop. What runs on the Python side (the task, the thread of a
//! blocking job, the `Cycle` a job sees) is `lockward/_worker.py`.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use lockward_pg::{CycleReport, Error, Mode, Outcome, Pooler, Worker, WorkerBuilder};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3_async_runtimes::TaskLocals;
use tokio_util::sync::CancellationToken;

use crate::Registry;

/// A duration given in seconds from Python (`timedelta.total_seconds()` or a number), or why it
/// cannot be one.
fn seconds(what: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        PyValueError::new_err(format!(
            "{what} must be a finite number of seconds, zero or more, not {value}"
        ))
    })
}

/// The Rust side of `lockward.Worker`: the validated settings each run builds its worker from.
#[pyclass(frozen, module = "lockward._lockward", name = "_Worker")]
pub(crate) struct PyWorker {
    builder: WorkerBuilder,
    database_url: String,
    application_name: String,
    key: lockward_registry::AdvisoryKey,
    /// The run in progress, which `stop` ends.
    running: Mutex<Option<CancellationToken>>,
}

#[pymethods]
impl PyWorker {
    /// A worker of the registry's entry `lock` (a constant's name or an id), its settings checked
    /// as the Rust builder checks them: `KeyError` for a lock the registry does not know,
    /// `ValueError` for one no worker may hold or a setting out of range.
    #[new]
    #[pyo3(signature = (registry, lock, *, every, database_url, ledger, transaction, pooler, member, grace, hold_at_least, host))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        registry: &Registry,
        lock: &Bound<'_, PyAny>,
        every: f64,
        database_url: String,
        ledger: bool,
        transaction: bool,
        pooler: &str,
        member: Option<i32>,
        grace: Option<f64>,
        hold_at_least: Option<f64>,
        host: Option<String>,
    ) -> PyResult<Self> {
        let entry = registry.entry(lock)?;
        let pooler = match pooler {
            "none" => Pooler::None,
            "session" => Pooler::Session,
            other => {
                return Err(PyValueError::new_err(format!(
                    "pooler must be \"none\" (nothing between the worker and the server, proven at each session) or \"session\" (a session-pooling pooler or a proxy), not {other:?}"
                )));
            }
        };
        let mut builder = Worker::builder_for(&registry.inner, entry)
            .map_err(|error| PyValueError::new_err(error.to_string()))?
            .database_url(database_url.clone())
            .every(seconds("every", every)?)
            .mode(if transaction {
                Mode::Transaction
            } else {
                Mode::Session
            })
            .pooler(pooler)
            .ledger(ledger);
        if let Some(member) = member {
            builder = builder.member(member);
        }
        if let Some(grace) = grace {
            builder = builder.cancel_grace(seconds("grace", grace)?);
        }
        if let Some(hold) = hold_at_least {
            builder = builder.hold_at_least(seconds("hold_at_least", hold)?);
        }
        if let Some(host) = host {
            builder = builder.host(host);
        }
        let worker = builder
            .clone()
            .build()
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        Ok(Self {
            database_url,
            application_name: worker.application_name().to_owned(),
            key: worker.key(),
            builder,
            running: Mutex::new(None),
        })
    }

    /// The `application_name` the lock session sets (`lockward:PROJECT:CONSTANT PID@HOST`).
    #[getter]
    fn application_name(&self) -> &str {
        &self.application_name
    }

    /// The advisory key: an int, or the pair `(family, member)`.
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.key {
            lockward_registry::AdvisoryKey::Bigint(key) => Ok(key.into_pyobject(py)?.into_any()),
            lockward_registry::AdvisoryKey::Pair(family, member) => {
                PyTuple::new(py, [family, member]).map(Bound::into_any)
            }
        }
    }

    /// Starts the worker on the runtime's threads: each cycle it leads, `lead(cycle)` (a
    /// `_Cycle`) is called on the running loop and the coroutine it returns awaited; each cycle's
    /// report goes to `on_cycle` on the loop. Returns the run, which `join()` waits for.
    /// Without `lead` the job is a no-op of the Rust worker's own, with no call into Python:
    /// the same cycle from Rust, which the benchmark (`python/bench/cycle.py`) compares with.
    fn start(
        &self,
        py: Python<'_>,
        lead: Option<Py<PyAny>>,
        on_cycle: Option<Py<PyAny>>,
    ) -> PyResult<Run> {
        let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
        let mut builder = self.builder.clone();
        if let Some(on_cycle) = on_cycle {
            let locals = locals.clone();
            builder = builder.on_cycle(move |report: &CycleReport| {
                Python::attach(|py| {
                    let sent = Py::new(py, Report::new(report)).and_then(|report| {
                        locals
                            .event_loop(py)
                            .call_method1("call_soon_threadsafe", (on_cycle.clone_ref(py), report))
                    });
                    // A loop that closed cannot take the report; nothing else can.
                    if let Err(error) = sent {
                        error.print(py);
                    }
                });
            });
        }
        let worker = builder
            .build()
            .map_err(|error| PyValueError::new_err(error.to_string()))?;
        let stop = CancellationToken::new();
        {
            let mut running = self.running.lock().expect("the running run");
            if running.as_ref().is_some_and(|token| !token.is_cancelled()) {
                return Err(PyRuntimeError::new_err(
                    "this worker is running already: one run at a time",
                ));
            }
            *running = Some(stop.clone());
        }
        let job = move |cycle: lockward_pg::Cycle| match &lead {
            Some(lead) => job(&locals, lead, cycle),
            None => Box::pin(async { Ok(()) }),
        };
        let ended = Arc::new(Ended::default());
        let finished = Arc::clone(&ended);
        let shutdown = stop.clone();
        let url = self.database_url.clone();
        let application_name = self.application_name.clone();
        pyo3_async_runtimes::tokio::get_runtime().spawn(async move {
            let result = match refused_at_once(&url, &application_name).await {
                Err(refused) => Err(refused),
                Ok(()) => worker.run(job, shutdown.clone().cancelled_owned()).await,
            };
            // A run that ended on its own (a refusal) is no longer running either.
            shutdown.cancel();
            finished.set(result);
        });
        Ok(Run { stop, ended })
    }

    /// Ends the run in progress as a shutdown does: the job is cancelled and awaited, the lock
    /// released, and `wait()` returns. Does nothing when the worker is not running.
    fn stop(&self) {
        if let Some(token) = self.running.lock().expect("the running run").as_ref() {
            token.cancel();
        }
    }
}

/// Whether the database turns this worker away for good: one connection before the first cycle,
/// which fails for the database's name (SQLSTATE 3D000) or the role and its authentication (class
/// 28). The worker itself retries every failure at the following boundaries, as a server that is
/// down or restarting needs; a Python service starting against a database that does not exist, or
/// with a wrong password, is told at once (`DatabaseError`) instead. Any other outcome, a
/// connection that works or fails otherwise, leaves it to the worker.
async fn refused_at_once(url: &str, application_name: &str) -> Result<(), Error> {
    match lockward_pg::connect(url, application_name).await {
        Err(Error::Postgres(error))
            if error
                .code()
                .is_some_and(|code| code.code() == "3D000" || code.code().starts_with("28")) =>
        {
            Err(Error::Postgres(error))
        }
        _ => Ok(()),
    }
}

/// The job the Rust worker runs for `cycle`: the coroutine of `lead(_Cycle)`, on the loop of
/// `locals`. Its exception, if any, is the job's error.
fn job(
    locals: &TaskLocals,
    lead: &Py<PyAny>,
    cycle: lockward_pg::Cycle,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), lockward_pg::JobError>> + Send>>
{
    let started = Python::attach(|py| {
        let cycle = Py::new(py, PyCycle { cycle })?;
        let coroutine = lead.call1(py, (cycle,))?;
        pyo3_async_runtimes::into_future_with_locals(locals, coroutine.into_bound(py))
    });
    Box::pin(async move {
        let finished = match started {
            Ok(future) => future.await,
            Err(error) => Err(error),
        };
        finished
            .map(drop)
            .map_err(|error| Python::attach(|py| described(py, &error)).into())
    })
}

/// A Python exception as one line: `Type: message`.
fn described(py: Python<'_>, error: &PyErr) -> String {
    let name = error
        .get_type(py)
        .name()
        .map_or_else(|_| "Exception".to_owned(), |name| name.to_string());
    let message = error.value(py).to_string();
    if message.is_empty() {
        name
    } else {
        format!("{name}: {message}")
    }
}

/// How a run ended, once it has, and who waits for it.
#[derive(Default)]
struct Ended {
    result: Mutex<Option<Result<(), Error>>>,
    done: std::sync::Condvar,
}

impl Ended {
    fn set(&self, result: Result<(), Error>) {
        *self.result.lock().expect("the run's end") = Some(result);
        self.done.notify_all();
    }

    /// Blocks until the run has ended: `None` for a clean end; else whether it was a refusal,
    /// the error's text and its SQLSTATE.
    fn wait(&self) -> Option<(Stop, String, Option<String>)> {
        let mut result = self.result.lock().expect("the run's end");
        loop {
            if let Some(result) = result.as_ref() {
                return result.as_ref().err().map(|error| {
                    let sqlstate = match error {
                        Error::Postgres(error) => error.code().map(|code| code.code().to_owned()),
                        _ => None,
                    };
                    let stop = if error.is_refusal() {
                        Stop::Refused
                    } else {
                        Stop::Database
                    };
                    (stop, error.to_string(), sqlstate)
                });
            }
            result = self.done.wait(result).expect("the run's end");
        }
    }
}

/// Why a run stopped with an error.
#[derive(Clone, Copy)]
enum Stop {
    /// The path to the server cannot hold a session lock (`PoolerRefused`).
    Refused,
    /// Anything else the database said (`DatabaseError`).
    Database,
}

/// A worker's run in progress.
#[pyclass(frozen, module = "lockward._lockward", name = "_Run")]
pub(crate) struct Run {
    stop: CancellationToken,
    ended: Arc<Ended>,
}

#[pymethods]
impl Run {
    /// Shuts the run down: the job is cancelled and awaited, the lock released.
    fn stop(&self) {
        self.stop.cancel();
    }

    /// Blocks (without the GIL) until the run has ended; raises `PoolerRefused` or
    /// `DatabaseError` when it stopped on an error. `lockward.Worker.run` calls it from an
    /// executor thread: the run's end reaches Python through Python's own thread, not a call
    /// from the runtime's threads, which could still be inside the interpreter as it exits.
    fn join(&self, py: Python<'_>) -> PyResult<()> {
        let ended = Arc::clone(&self.ended);
        match py.detach(move || ended.wait()) {
            None => Ok(()),
            Some((stop, message, sqlstate)) => {
                let errors = py.import("lockward._errors")?;
                let error = match stop {
                    Stop::Refused => errors.getattr("PoolerRefused")?.call1((message,))?,
                    Stop::Database => errors
                        .getattr("DatabaseError")?
                        .call1((message, sqlstate))?,
                };
                Err(PyErr::from_value(error))
            }
        }
    }
}

/// One cycle this process leads, as the Rust worker hands it over.
#[pyclass(frozen, module = "lockward._lockward", name = "_Cycle")]
pub(crate) struct PyCycle {
    cycle: lockward_pg::Cycle,
}

#[pymethods]
impl PyCycle {
    /// The cycle's boundary, in seconds since the epoch.
    #[getter]
    fn start(&self) -> f64 {
        epoch_seconds(self.cycle.start())
    }

    /// The ledger's fencing token (None without a ledger).
    #[getter]
    fn fencing_token(&self) -> Option<i64> {
        self.cycle.fencing_token()
    }

    /// Whether the cycle was cancelled.
    #[getter]
    fn cancelled(&self) -> bool {
        self.cycle.is_cancelled()
    }

    /// Why it was cancelled, once it was.
    #[getter]
    fn reason(&self) -> Option<String> {
        self.cycle.cancel_reason().map(str::to_owned)
    }

    /// Awaitable: resolves with the reason when the cycle is cancelled.
    fn cancelled_wait<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let cycle = self.cycle.clone();
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            cycle.cancelled().await;
            Ok(cycle.cancel_reason().unwrap_or("cancelled").to_owned())
        })
    }
}

fn epoch_seconds(time: SystemTime) -> f64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64())
}

/// What one cycle came to, given to `on_cycle`.
#[pyclass(frozen, module = "lockward", name = "CycleReport")]
pub(crate) struct Report {
    /// `led`, `failed`, `lost`, `shut-down`, `skipped`, `collision`, `already-run`,
    /// `led-by-another-project` or `unavailable`.
    #[pyo3(get)]
    outcome: &'static str,
    /// The cycle's boundary, in seconds since the epoch.
    #[pyo3(get)]
    start: f64,
    /// The fencing token, when this worker led with a ledger.
    #[pyo3(get)]
    fencing_token: Option<i64>,
    /// How long this worker held the lock, in seconds, when it led.
    #[pyo3(get)]
    held: Option<f64>,
    /// The job's error (`failed`), why the lock was lost (`lost`), or the connection error
    /// (`unavailable`).
    #[pyo3(get)]
    error: Option<String>,
    /// The `application_name` of the session that held the lock (`skipped`, `collision`,
    /// `led-by-another-project`).
    #[pyo3(get)]
    holder: Option<String>,
    /// The other lockward project (`led-by-another-project`).
    #[pyo3(get)]
    project: Option<String>,
}

impl Report {
    fn new(report: &CycleReport) -> Self {
        let mut this = Self {
            outcome: "",
            start: epoch_seconds(report.start),
            fencing_token: report.fencing_token,
            held: None,
            error: None,
            holder: None,
            project: None,
        };
        let held = |held: &Duration| Some(held.as_secs_f64());
        match &report.outcome {
            Outcome::Led { held: h } => {
                this.outcome = "led";
                this.held = held(h);
            }
            Outcome::Failed { error, held: h } => {
                this.outcome = "failed";
                this.held = held(h);
                this.error = Some(error.clone());
            }
            Outcome::Lost { reason, held: h } => {
                this.outcome = "lost";
                this.held = held(h);
                this.error = Some(reason.clone());
            }
            Outcome::ShutDown { held: h } => {
                this.outcome = "shut-down";
                this.held = held(h);
            }
            Outcome::Skipped { holder } => {
                this.outcome = "skipped";
                this.holder = holder.as_ref().map(|h| h.application_name.clone());
            }
            Outcome::Collision { holder } => {
                this.outcome = "collision";
                this.holder = Some(holder.application_name.clone());
            }
            Outcome::AlreadyRun => this.outcome = "already-run",
            Outcome::LedByAnotherProject {
                project,
                application_name,
            } => {
                this.outcome = "led-by-another-project";
                this.project = Some(project.clone());
                this.holder = Some(application_name.clone());
            }
            Outcome::Unavailable { error } => {
                this.outcome = "unavailable";
                this.error = Some(error.clone());
            }
            _ => this.outcome = "other",
        }
        this
    }
}

#[pymethods]
impl Report {
    fn __repr__(&self) -> String {
        let mut text = format!("CycleReport({}", self.outcome);
        if let Some(token) = self.fencing_token {
            let _ = write!(text, ", fencing_token={token}");
        }
        if let Some(error) = &self.error {
            let _ = write!(text, ", error={error:?}");
        }
        if let Some(holder) = &self.holder {
            let _ = write!(text, ", holder={holder:?}");
        }
        text.push(')');
        text
    }
}

/// Serves the worker metrics of this process (the `lockward_worker_*` series every worker
/// records) for Prometheus at `http://HOST:PORT/metrics`, as `lockward run --metrics` does. The
/// hold-time histogram's buckets are fitted to `periods` (seconds: the periods of the workers
/// this process runs), else the generic ladder.
#[pyfunction]
#[pyo3(signature = (port, host = "127.0.0.1", periods = Vec::new()))]
pub(crate) fn serve_metrics(port: u16, host: &str, periods: Vec<f64>) -> PyResult<()> {
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
    let address: std::net::IpAddr = host
        .parse()
        .map_err(|_| PyValueError::new_err(format!("{host:?} is not an IP address")))?;
    let periods = periods
        .into_iter()
        .map(|seconds| {
            std::time::Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|period| !period.is_zero())
                .ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "period {seconds} is not a positive number of seconds"
                    ))
                })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let runtime = pyo3_async_runtimes::tokio::get_runtime();
    let _entered = runtime.enter();
    PrometheusBuilder::new()
        .with_http_listener((address, port))
        .set_buckets_for_metric(
            Matcher::Full(lockward_pg::HOLD_SECONDS.to_owned()),
            &lockward_pg::hold_seconds_buckets(&periods),
        )
        .map_err(|error| PyValueError::new_err(error.to_string()))?
        .install()
        .map_err(|error| PyRuntimeError::new_err(format!("cannot serve the metrics: {error}")))
}
