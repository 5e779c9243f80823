// SPDX-License-Identifier: GPL-2.0

//! Time a receiver was held off the CPU by the host's scheduler.
//!
//! The generator gives up on streams its receiver keeps paused for too long
//! (a driver that stopped giving buffers back). On a busy host the
//! receiver, a guest under TCG run at a low priority beside other VMs, can
//! be runnable and yet get no CPU for tens of seconds: its streams stay
//! paused for as long, and a give-up counted in wall time calls that a
//! dead driver. What the kernel reports per thread in
//! `/proc/PID/task/TID/schedstat` (its second field: nanoseconds spent
//! runnable, waiting for a CPU) tells the two apart: a guest that had the
//! CPU and did nothing waited for none.

use std::collections::HashMap;
use std::time::Duration;

/// The run delay of a set of processes' threads, from a starting point.
#[derive(Debug, Default)]
pub struct HeldOff {
    pids: Vec<u32>,
    /// Each thread's run delay (ns) at [`HeldOff::start`], by (pid, tid).
    base: HashMap<(u32, u32), u64>,
}

impl HeldOff {
    /// Watches the threads of `pids` (none: [`HeldOff::since_start`] is 0).
    pub fn new(pids: Vec<u32>) -> Self {
        Self {
            pids,
            base: HashMap::new(),
        }
    }

    /// Each thread's run delay so far, by (pid, tid). A process or thread
    /// that is gone, or a kernel without schedstat, adds nothing.
    fn delays(&self) -> HashMap<(u32, u32), u64> {
        let mut out = HashMap::new();
        for &pid in &self.pids {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for task in tasks.flatten() {
                let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
                    continue;
                };
                let Ok(s) = std::fs::read_to_string(task.path().join("schedstat")) else {
                    continue;
                };
                if let Some(delay) = parse_run_delay(&s) {
                    out.insert((pid, tid), delay);
                }
            }
        }
        out
    }

    /// Makes now the point [`HeldOff::since_start`] counts from.
    pub fn start(&mut self) {
        self.base = self.delays();
    }

    /// The longest any one thread waited for a CPU since [`HeldOff::start`]
    /// (a thread started since counts from its start). The longest, not
    /// the sum: a guest's vCPUs wait side by side, and the guest lost the
    /// time once; and the longest, not the least, because one vCPU held
    /// off can hold up the queue whose interrupt it takes.
    pub fn since_start(&self) -> Duration {
        let now = self.delays();
        let most = now
            .iter()
            .map(|(k, &d)| d.saturating_sub(self.base.get(k).copied().unwrap_or(0)))
            .max()
            .unwrap_or(0);
        Duration::from_nanos(most)
    }
}

/// The run delay (ns) of a `schedstat` line: "on-CPU run-delay timeslices".
fn parse_run_delay(schedstat: &str) -> Option<u64> {
    schedstat.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_line() {
        assert_eq!(parse_run_delay("265033 55482 4\n"), Some(55482));
        assert_eq!(parse_run_delay("265033\n"), None);
        assert_eq!(parse_run_delay(""), None);
    }

    #[test]
    fn no_processes_no_delay() {
        let mut h = HeldOff::new(Vec::new());
        h.start();
        assert_eq!(h.since_start(), Duration::ZERO);
    }

    #[test]
    fn threads_on_one_cpu_wait_for_it() {
        if !std::path::Path::new("/proc/self/schedstat").exists() {
            return; // a kernel without CONFIG_SCHED_INFO
        }
        let mut h = HeldOff::new(vec![std::process::id()]);
        h.start();
        let t = std::time::Instant::now();
        // Two threads that spin on CPU 0 for 200 ms take turns: each
        // waits for the CPU while the other has it. They stay until the
        // delays are read (a thread gone has no schedstat).
        let spun = std::sync::Arc::new(std::sync::Barrier::new(3));
        let read = std::sync::Arc::new(std::sync::Barrier::new(3));
        let spin = || {
            let (spun, read) = (spun.clone(), read.clone());
            move || {
                // SAFETY: `set` is a zeroed `cpu_set_t` that `CPU_SET`
                // fills in; pid 0 is the calling thread.
                let pinned = unsafe {
                    let mut set: libc::cpu_set_t = core::mem::zeroed();
                    libc::CPU_SET(0, &mut set);
                    libc::sched_setaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &set) == 0
                };
                let until = std::time::Instant::now() + Duration::from_millis(200);
                while std::time::Instant::now() < until {
                    std::hint::spin_loop();
                }
                spun.wait();
                read.wait();
                pinned
            }
        };
        let a = std::thread::spawn(spin());
        let b = std::thread::spawn(spin());
        spun.wait();
        let waited = h.since_start();
        read.wait();
        let pinned = a.join().unwrap_or(false) && b.join().unwrap_or(false);
        assert!(waited <= t.elapsed(), "{waited:?} of {:?}", t.elapsed());
        if pinned {
            assert!(waited >= Duration::from_millis(50), "{waited:?}");
        }
    }
}
