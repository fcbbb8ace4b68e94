//! What a binary built with the test kit adds to zkctl's commands (`zkctl-bench`, not
//! published): measures of this process for `bench`, Curator's side of `bench --curator`, and
//! a local server for `demo`. The shipped `zkctl` has none of them: it carries neither the test
//! kit nor a counting allocator, and `bench` leaves out the figures that need them.

use std::any::Any;
use std::sync::OnceLock;
use std::time::Duration;

/// The test kit's measures and programs, as plain functions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lab {
    /// CPU time this process's threads have used so far (`cpu_ns_per_*`).
    pub cpu_time: Option<fn() -> Duration>,
    /// Calls into the allocator so far, from a counting global allocator (`allocs_per_*`).
    pub allocation_calls: Option<fn() -> u64>,
    /// Bytes live on the heap now, from the same allocator (`in_line_*_heap_*`).
    pub live_heap_bytes: Option<fn() -> usize>,
    /// Compiles Curator's side of `bench --curator`: the command that starts it, its
    /// arguments still to add (see `commands/bench_curator.rs`).
    pub curator_side: Option<fn() -> Result<std::process::Command, String>>,
    /// Starts a local ZooKeeper for `demo`: its connect string, and what keeps the server
    /// running until dropped.
    pub local_server: Option<LocalServer>,
}

/// [`Lab::local_server`].
pub type LocalServer = fn() -> Result<(String, Box<dyn Any + Send>), String>;

static LAB: OnceLock<Lab> = OnceLock::new();

/// Sets the process's lab (once, before any command runs).
pub fn install(lab: Lab) {
    let _ = LAB.set(lab);
}

/// The process's lab (empty in `zkctl`).
pub fn get() -> Lab {
    LAB.get().copied().unwrap_or_default()
}

/// How to get what zkctl leaves out, for a message: `what` needs `zkctl-bench`.
pub fn needs_bench(what: &str) -> String {
    format!(
        "{what} needs the test kit, which the shipped zkctl leaves out: run zkctl-bench \
         (cargo run --release -p zkctl-bench -- ARGS, the same arguments as zkctl's)"
    )
}
