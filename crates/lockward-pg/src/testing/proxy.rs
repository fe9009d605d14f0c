use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// A TCP proxy on 127.0.0.1 in front of a server, for fault tests.
///
/// [`Proxy::cut`] stops forwarding in both directions without closing anything, as a network
/// partition looks to both ends: bytes (and closes) wait in the proxy until [`Proxy::heal`].
/// [`Proxy::strand`] does the same for good to the connections open at the time, as a pooler
/// that never hears of a vanished client keeps its server connection, while new connections pass.
/// [`Proxy::set_delay`] adds latency to every forwarded chunk. Dropping the proxy closes every
/// connection through it.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    cut: watch::Sender<bool>,
    delay_micros: Arc<AtomicU64>,
    /// Connections numbered below this are stranded.
    stranded_below: Arc<AtomicU64>,
    accepted: Arc<AtomicU64>,
    stop: CancellationToken,
}

impl Proxy {
    /// Starts a proxy to `target` on a free port of 127.0.0.1, on the current tokio runtime.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a cancelled start leaves nothing listening.
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("proxy: bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("proxy: local address");
        let (cut, cut_rx) = watch::channel(false);
        let delay_micros = Arc::new(AtomicU64::new(0));
        let stranded_below = Arc::new(AtomicU64::new(0));
        let accepted = Arc::new(AtomicU64::new(0));
        let stop = CancellationToken::new();
        let state = Link {
            cut: cut_rx,
            delay_micros: delay_micros.clone(),
            stranded_below: stranded_below.clone(),
            number: 0,
            stop: stop.clone(),
        };
        tokio::spawn(accept(listener, target, state, accepted.clone()));
        Self {
            addr,
            cut,
            delay_micros,
            stranded_below,
            accepted,
            stop,
        }
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops forwarding, silently: no bytes pass, no socket is closed.
    pub fn cut(&self) {
        self.cut.send_replace(true);
    }

    /// Resumes forwarding, including whatever waited during the cut.
    pub fn heal(&self) {
        self.cut.send_replace(false);
    }

    /// Stops forwarding, silently and for good, on every connection open now (a close included:
    /// the server never hears that the client went away); connections made later pass.
    pub fn strand(&self) {
        self.stranded_below
            .store(self.accepted.load(Ordering::SeqCst), Ordering::SeqCst);
    }

    /// Delays every forwarded chunk by `delay` (zero: none).
    pub fn set_delay(&self, delay: Duration) {
        let micros = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.delay_micros.store(micros, Ordering::Relaxed);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[derive(Clone)]
struct Link {
    cut: watch::Receiver<bool>,
    delay_micros: Arc<AtomicU64>,
    stranded_below: Arc<AtomicU64>,
    /// This connection's number, in the order accepted.
    number: u64,
    stop: CancellationToken,
}

impl Link {
    /// Waits while the link is cut; false when the proxy was dropped meanwhile. A stranded
    /// connection waits until then.
    async fn open(&mut self) -> bool {
        if self.number < self.stranded_below.load(Ordering::SeqCst) {
            self.stop.cancelled().await;
            return false;
        }
        tokio::select! {
            () = self.stop.cancelled() => false,
            result = self.cut.wait_for(|cut| !cut) => result.is_ok(),
        }
    }

    async fn delay(&self) {
        let micros = self.delay_micros.load(Ordering::Relaxed);
        if micros > 0 {
            tokio::time::sleep(Duration::from_micros(micros)).await;
        }
    }
}

async fn accept(listener: TcpListener, target: SocketAddr, link: Link, counted: Arc<AtomicU64>) {
    loop {
        let accepted = tokio::select! {
            () = link.stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((client, _)) = accepted else { continue };
        let mut link = link.clone();
        link.number = counted.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(target).await else {
                return;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            let up = tokio::spawn(pump(client_read, server_write, link.clone()));
            let down = tokio::spawn(pump(server_read, client_write, link));
            let _ = tokio::join!(up, down);
        });
    }
}

async fn pump(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, mut link: Link) {
    let mut buffer = vec![0_u8; 64 * 1024];
    loop {
        let read = tokio::select! {
            () = link.stop.cancelled() => return,
            read = from.read(&mut buffer) => read,
        };
        let n = match read {
            Ok(0) | Err(_) => 0,
            Ok(n) => n,
        };
        link.delay().await;
        if !link.open().await {
            return;
        }
        if n == 0 {
            let _ = to.shutdown().await;
            return;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}
