//! What the process benchmarks share: `hado up`'s three children found by
//! the command each runs, and their resident memory read from `/proc`.

#![allow(dead_code)]

use crate::common::{Signal, children_of, signal, wait_with_timeout};

/// One of `hado up`'s children.
pub(crate) struct Process {
    pub(crate) name: &'static str,
    pub(crate) pid: u32,
}

/// A field in KiB of a `/proc` file such as `status`.
fn kib(text: &str, name: &str) -> u64 {
    let line = text.lines().find(|line| line.starts_with(name)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

impl Process {
    /// `VmRSS` (now), `VmHWM` (the peak) and `Pss` (now, with the pages it
    /// shares, such as the binary the three processes run, split among
    /// them) in KiB.
    pub(crate) fn resident_kib(&self) -> (u64, u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap();
        let rollup = std::fs::read_to_string(format!("/proc/{}/smaps_rollup", self.pid)).unwrap();
        (kib(&status, "VmRSS:"), kib(&status, "VmHWM:"), kib(&rollup, "Pss:"))
    }
}

/// `hado up`, stopped with SIGTERM however the benchmark ends.
pub(crate) struct Up(pub(crate) std::process::Child);

impl Drop for Up {
    fn drop(&mut self) {
        signal(self.0.id(), Signal::SIGTERM);
        let stopped = wait_with_timeout(&mut self.0);
        if !std::thread::panicking() {
            assert!(stopped.success(), "hado up stops cleanly");
        }
    }
}

/// The three children by the command each runs.
pub(crate) fn processes(up: u32) -> Vec<Process> {
    let mut found: Vec<Process> = children_of(up)
        .into_iter()
        .map(|pid| {
            let command = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap();
            let name = ["core", "gateway-mcp", "gateway-http"]
                .into_iter()
                .find(|name| command.split('\0').nth(1) == Some(*name))
                .unwrap();
            Process { name, pid }
        })
        .collect();
    found.sort_by_key(|process| process.name);
    assert_eq!(found.len(), 3, "core and both gateways run");
    found
}

pub(crate) fn report(when: &str, processes: &[Process]) {
    println!("\n{when}");
    for process in processes {
        let (now, peak, proportional) = process.resident_kib();
        let mib = |kib: u64| kib as f64 / 1024.0;
        println!(
            "  {:<13} {:>6.1} MiB now  {:>6.1} MiB at its peak  ({:>5.1} MiB proportional)",
            process.name,
            mib(now),
            mib(peak),
            mib(proportional)
        );
    }
}
