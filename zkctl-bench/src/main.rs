//! `zkctl-bench`: zkctl with the test kit, for the figures the shipped `zkctl` leaves out.
//!
//! The same commands and flags as zkctl's (`zkctl-bench bench lock --curator`), with the
//! test kit's counting allocator installed (`allocs_per_*`, `in_line_*_heap_*`), its CPU
//! time (`cpu_ns_per_*`), Curator's side of `bench --curator` compiled through its
//! `JavaPrograms`, and a local ZooKeeper for `demo` without `--server`.
#![forbid(unsafe_code)]

mod curator;

use std::process::ExitCode;

use zkrs_testkit::measure::{allocation_counts, live_heap_bytes, process_cpu_time};
use zkrs_testkit::TestingServer;

/// Counts heap allocations, for the figures of `bench` (one relaxed atomic add per
/// allocation; nothing else reads them).
#[global_allocator]
static ALLOCATOR: zkrs_testkit::measure::CountingAllocator =
    zkrs_testkit::measure::CountingAllocator;

fn main() -> ExitCode {
    let lab = zkctl::Lab {
        cpu_time: Some(process_cpu_time),
        allocation_calls: Some(|| allocation_counts().calls()),
        live_heap_bytes: Some(live_heap_bytes),
        curator_side: Some(curator::program),
        local_server: Some(local_server),
    };
    zkctl::main_with(std::env::args_os().skip(1).collect(), lab)
}

/// A ZooKeeper server from the test kit, for `demo`: its connect string, and the server
/// (stopped when dropped).
fn local_server() -> Result<(String, Box<dyn std::any::Any + Send>), String> {
    let server = TestingServer::start().map_err(|e| e.to_string())?;
    Ok((server.connect_string(), Box::new(server)))
}
