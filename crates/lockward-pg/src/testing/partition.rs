//! A real, silent network partition: a network namespace of the test's own, linked to the
//! host's by a veth pair, and a cut that makes both ends drop every packet (a `blackhole` qdisc)
//! without a reset, as a pulled cable or a dead switch does (`ip link set down` would not be
//! silent: the peer's socket errors out at once). Needs root.

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A network namespace and the veth pair that links it to this one, each end with an address of
/// a /30 in 10.231.0.0/16 of its own. Run a process inside with [`Partition::command`]; cut the link
/// with [`Partition::cut`]. Removed on drop (the pair goes
/// with its host end; the namespace once its last process has exited).
#[derive(Debug)]
pub struct Partition {
    namespace: String,
    host_link: String,
    inner_link: String,
    host_addr: Ipv4Addr,
    inner_addr: Ipv4Addr,
}

impl Partition {
    /// Makes the namespace and the pair (names and addresses unique to this process and call).
    ///
    /// Fails, saying which command did, when not root or when `ip` is missing.
    pub fn create() -> Result<Self, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        // 16384 /30 blocks in 10.231.0.0/16; ids unique among this host's running processes.
        let block = (pid.wrapping_mul(8).wrapping_add(n)) % 16_384;
        let base = u32::from(Ipv4Addr::new(10, 231, 0, 0)) + block * 4;
        let tag = format!("{}{n}", pid % 100_000);
        let partition = Self {
            namespace: format!("lockward-{pid}-{n}"),
            host_link: format!("lwh{tag}"),
            inner_link: format!("lwn{tag}"),
            host_addr: Ipv4Addr::from(base + 1),
            inner_addr: Ipv4Addr::from(base + 2),
        };
        // Should a step fail, dropping `partition` removes what the steps before it made.
        ip(&["netns", "add", &partition.namespace])?;
        ip(&[
            "link",
            "add",
            &partition.host_link,
            "type",
            "veth",
            "peer",
            "name",
            &partition.inner_link,
            "netns",
            &partition.namespace,
        ])?;
        ip(&[
            "addr",
            "add",
            &format!("{}/30", partition.host_addr),
            "dev",
            &partition.host_link,
        ])?;
        ip(&["link", "set", &partition.host_link, "up"])?;
        partition.inside(&[
            "addr",
            "add",
            &format!("{}/30", partition.inner_addr),
            "dev",
            &partition.inner_link,
        ])?;
        partition.inside(&["link", "set", &partition.inner_link, "up"])?;
        partition.inside(&["link", "set", "lo", "up"])?;
        Ok(partition)
    }

    /// The host end's address (reachable from inside the namespace).
    pub fn host_addr(&self) -> Ipv4Addr {
        self.host_addr
    }

    /// The namespace end's address.
    pub fn inner_addr(&self) -> Ipv4Addr {
        self.inner_addr
    }

    /// `program`, to be run inside the namespace (`ip netns exec NAME program`, which execs it:
    /// the child's pid is the program's).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.namespace])
            .arg(program);
        command
    }

    /// Cuts the link: from now on both ends drop every packet they would send, silently.
    pub fn cut(&self) -> Result<(), String> {
        self.blackholes("add")
    }

    /// Heals a cut: packets pass again (what the ends retransmit included).
    pub fn heal(&self) -> Result<(), String> {
        self.blackholes("del")
    }

    /// Adds or deletes the `blackhole` qdisc on both ends of the pair.
    fn blackholes(&self, verb: &str) -> Result<(), String> {
        run(
            "tc",
            &["qdisc", verb, "dev", &self.host_link, "root", "blackhole"],
        )?;
        run(
            "tc",
            &[
                "-n",
                &self.namespace,
                "qdisc",
                verb,
                "dev",
                &self.inner_link,
                "root",
                "blackhole",
            ],
        )
    }

    fn inside(&self, args: &[&str]) -> Result<(), String> {
        ip(&[&["-n", &self.namespace][..], args].concat())
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        // Deleting the pair takes its qdiscs with it; nothing else to undo for a cut.
        let _ = ip(&["link", "del", &self.host_link]);
        let _ = ip(&["netns", "del", &self.namespace]);
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    run("ip", args)
}

fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("{program} {}: {error}", args.join(" ")))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{program} {}: {}: {}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    ))
}
