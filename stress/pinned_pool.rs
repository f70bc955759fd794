//! The stress binaries' thread pool: rayon's global pool with each worker pinned to one of
//! the cores the process may use. Included by the examples with `#[path]`.
//!
//! Why: on the 2-vCPU virtual machines these figures come from, a pool thread woken while
//! the other core sits idle is often queued on the core of the thread that woke it (the
//! guest's scheduler passes over an idle vCPU it sees as preempted by the host) and starts
//! only when the next scheduler tick moves it, 0 to 4 ms later. A frame whose serial work
//! let the workers fall asleep then runs its step's first passes on one core, and the
//! step's p99 over its median on the city rises from 1.74x pinned to 2.43x unpinned
//! (docs/benchmarks.md, Dynamic worlds). Game engines pin their job threads for the same
//! reason. `WAYMARK_UNPINNED=1` leaves the pool as rayon builds it.

/// Builds the global pool with pinned workers (Linux); whether it did. Call before any
/// other use of rayon.
pub fn pin_pool_threads() -> bool {
    if std::env::var_os("WAYMARK_UNPINNED").is_some() {
        return false;
    }
    pin_on_this_system()
}

#[cfg(target_os = "linux")]
fn pin_on_this_system() -> bool {
    // SAFETY: `cpu_set_t` is plain data; the calls read and write the set given.
    let allowed: Vec<usize> = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return false;
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    };
    if allowed.is_empty() {
        return false;
    }
    rayon::ThreadPoolBuilder::new()
        .start_handler(move |index| {
            // SAFETY: as above; a failed call leaves the thread unpinned, nothing worse.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(allowed[index % allowed.len()], &mut set);
                libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set);
            }
        })
        .build_global()
        .is_ok()
}

#[cfg(not(target_os = "linux"))]
fn pin_on_this_system() -> bool {
    false
}
