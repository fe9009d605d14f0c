//! A progress line on stderr for a scan that takes longer than a moment, drawn only when stderr
//! is a terminal: redirected output and CI logs get nothing extra.

use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use lockward_scan::Progress;

/// How long a scan runs before the line appears.
const DELAY: Duration = Duration::from_millis(300);
const TICK: Duration = Duration::from_millis(100);

/// Draws the line until dropped, then clears it.
pub(crate) struct ProgressLine {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressLine {
    /// Starts drawing `progress` when stderr is a terminal; otherwise does nothing.
    pub(crate) fn start(progress: &Arc<Progress>) -> Self {
        let done = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let progress = Arc::clone(progress);
            let done = Arc::clone(&done);
            std::thread::spawn(move || draw(&progress, &done))
        });
        Self { done, thread }
    }
}

fn draw(progress: &Progress, done: &AtomicBool) {
    let mut waited = Duration::ZERO;
    let mut drawn = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(TICK);
        waited += TICK;
        if waited < DELAY {
            continue;
        }
        #[allow(clippy::cast_precision_loss)]
        let megabytes = progress.bytes() as f64 / 1e6;
        let _ = write!(
            std::io::stderr(),
            "\r\x1b[2Kscanning: {}, {megabytes:.1} MB",
            crate::report::count(progress.files(), "file", "files")
        );
        drawn = true;
    }
    if drawn {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
