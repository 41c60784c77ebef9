//! What the CLI's process tests share: `hado` with its own ports and data
//! folder, started and stopped the way a person does.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

pub(crate) const HADO: &str = env!("CARGO_BIN_EXE_hado");

/// A free port on loopback, never one handed out before in this test
/// process. A port let go at once may be handed out again by the next bind:
/// two tests running side by side then start two processes on one port, the
/// second fails to listen, and the first answers in its place until it stops.
pub(crate) fn free_port() -> u16 {
    static HANDED_OUT: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if HANDED_OUT.lock().unwrap().insert(port) {
            return port;
        }
    }
}

/// The ports one `hado up` listens on.
#[derive(Clone, Copy)]
pub(crate) struct Ports {
    pub grpc: u16,
    pub mcp: u16,
    pub http: u16,
    /// Where each process serves its metrics: core, gateway-http, gateway-mcp.
    pub metrics: [u16; 3],
}

/// Six distinct free ports ([`free_port`]).
pub(crate) fn free_ports() -> Ports {
    Ports {
        grpc: free_port(),
        mcp: free_port(),
        http: free_port(),
        metrics: [free_port(), free_port(), free_port()],
    }
}

pub(crate) fn hado(folder: &Path, ports: Ports) -> Command {
    hado_at(Path::new(HADO), folder, ports)
}

/// `hado` as [`hado`] runs it, from `program`: another build of it, for a
/// benchmark that runs two builds in turn.
pub(crate) fn hado_at(program: &Path, folder: &Path, ports: Ports) -> Command {
    let mut command = Command::new(program);
    command
        .current_dir(folder)
        .env("HADO_GRPC_ADDR", format!("127.0.0.1:{}", ports.grpc))
        .env("HADO_MCP_ADDR", format!("127.0.0.1:{}", ports.mcp))
        .env("HADO_HTTP_ADDR", format!("127.0.0.1:{}", ports.http))
        .env("HADO_CORE_METRICS_ADDR", format!("127.0.0.1:{}", ports.metrics[0]))
        .env("HADO_HTTP_METRICS_ADDR", format!("127.0.0.1:{}", ports.metrics[1]))
        .env("HADO_MCP_METRICS_ADDR", format!("127.0.0.1:{}", ports.metrics[2]))
        .env_remove("HADO_LOCAL_USER")
        .env_remove("HADO_CORE_URL")
        .env_remove("HADO_DATABASE_URL")
        .env_remove("HADO_ADMIN_TOKEN")
        .env_remove("HADO_GATEWAY_TOKEN")
        .env_remove("HADO_DATA_DIR");
    command
}

/// Starts `hado up` and returns it with what it printed, up to its last line.
pub(crate) fn start(folder: &Path, ports: Ports) -> (Child, Vec<String>) {
    start_on(folder, ports, None)
}

/// Starts `hado up` on `database` (a URL), or on its SQLite default.
pub(crate) fn start_on(
    folder: &Path,
    ports: Ports,
    database: Option<&str>,
) -> (Child, Vec<String>) {
    start_with(folder, ports, |command| {
        if let Some(url) = database {
            command.env("HADO_DATABASE_URL", url);
        }
    })
}

/// Starts `hado up` with its command first set up by `configure`.
pub(crate) fn start_with(
    folder: &Path,
    ports: Ports,
    configure: impl FnOnce(&mut Command),
) -> (Child, Vec<String>) {
    start_at(Path::new(HADO), folder, ports, configure)
}

/// Starts `hado up` from `program` (see [`hado_at`]), its command first set
/// up by `configure`.
pub(crate) fn start_at(
    program: &Path,
    folder: &Path,
    ports: Ports,
    configure: impl FnOnce(&mut Command),
) -> (Child, Vec<String>) {
    let mut command = hado_at(program, folder, ports);
    configure(&mut command);
    let log = folder.join("hado-up.stderr");
    let mut up = command
        .arg("up")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let stdout = up.stdout.take().unwrap();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    let mut printed = Vec::new();
    while let Ok(line) = receiver.recv_timeout(Duration::from_secs(120)) {
        let last = line == "Ctrl-C stops Hado.";
        printed.push(line);
        if last {
            return (up, printed);
        }
    }
    let _ = up.kill();
    let _ = up.wait();
    panic!(
        "hado up did not print that it is running; it said:\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
}

pub(crate) use nix::sys::signal::Signal;

/// Sends `signal` to a process this test started.
pub(crate) fn signal(pid: u32, signal: Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal);
}

pub(crate) fn children_of(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|child| child.parse().ok())
        .collect()
}

pub(crate) fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .unwrap_or_default()
            .contains(") Z ")
}

pub(crate) fn wait_with_timeout(child: &mut Child) -> std::process::ExitStatus {
    for _ in 0..300 {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("the process did not stop");
}

/// A child process that is killed when the test lets go of it, so that a
/// failing assertion leaves nothing running.
pub(crate) struct Running(pub Child);

impl Running {
    pub(crate) fn id(&self) -> u32 {
        self.0.id()
    }

    /// Asks the process to stop and waits for it.
    pub(crate) fn stop(mut self) {
        signal(self.0.id(), Signal::SIGTERM);
        let _ = self.0.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Starts one process of Hado's (`core`, `gateway-http`, `gateway-mcp`) in
/// `folder` with only `environment` of Hado's settings; its log goes to
/// `folder/ROLE.log`.
pub(crate) fn spawn(role: &str, folder: &Path, environment: &[(&str, String)]) -> Running {
    spawn_at(Path::new(HADO), role, folder, environment)
}

/// Starts one process of Hado's as [`spawn`] does, from `program`: another
/// build of `hado`, such as the release build the write-path guard measures.
pub(crate) fn spawn_at(
    program: &Path,
    role: &str,
    folder: &Path,
    environment: &[(&str, String)],
) -> Running {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(folder.join(format!("{role}.log")))
        .unwrap();
    let mut command = Command::new(program);
    command.arg(role).current_dir(folder).stdin(Stdio::null()).stdout(Stdio::null()).stderr(log);
    for variable in [
        "HADO_LOCAL_USER",
        "HADO_DATABASE_URL",
        "HADO_CORE_URL",
        "HADO_PUBLIC_URL",
        "HADO_ALLOWED_HOSTS",
        "HADO_METRICS_ADDR",
    ] {
        command.env_remove(variable);
    }
    for (name, value) in environment {
        command.env(name, value);
    }
    Running(command.spawn().expect("hado starts"))
}

/// How long a spawned process may take to answer its health check.
pub(crate) const STARTING: Duration = Duration::from_secs(60);

/// A channel to the core listening on `port` on loopback, connected when
/// first used: what `hado_testing::wait_until_serving` asks.
pub(crate) fn core_on(port: u16) -> tonic::transport::Channel {
    tonic::transport::Channel::from_shared(format!("http://127.0.0.1:{port}"))
        .unwrap()
        .connect_lazy()
}

/// Sends and receives a message's bytes as they are.
#[derive(Clone, Copy, Default)]
pub(crate) struct RawCodec;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        *self
    }

    fn decoder(&mut self) -> Self::Decoder {
        *self
    }
}

impl Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(
        &mut self,
        item: Vec<u8>,
        destination: &mut EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        destination.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn decode(&mut self, source: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        Ok(Some(source.copy_to_bytes(source.remaining()).to_vec()))
    }
}
