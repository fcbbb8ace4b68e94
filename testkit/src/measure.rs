//! What a benchmark or a soak measures about its own process: heap allocations (through a
//! counting global allocator the program installs) and CPU time.
//!
//! ```
//! use zkrs_testkit::measure::{allocation_counts, process_cpu_time, CountingAllocator};
//!
//! #[global_allocator]
//! static ALLOCATOR: CountingAllocator = CountingAllocator;
//!
//! let (before, cpu_before) = (allocation_counts(), process_cpu_time());
//! let v = vec![1u8; 1000];
//! let spent = allocation_counts() - before;
//! assert!(spent.allocations >= 1);
//! assert!(process_cpu_time() >= cpu_before);
//! # drop(v);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::ops::Sub;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static REALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting every allocation, reallocation and byte of the whole
/// process (all threads), and the bytes live. Install it with `#[global_allocator]`; the
/// counts cost one relaxed atomic add per call. Without it installed, every count stays 0.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountingAllocator;

// SAFETY: every call is forwarded unchanged to `System`; the bookkeeping is atomics only (no
// allocation, no reentrancy).
#[allow(unsafe_code)] // `GlobalAlloc` is an unsafe trait: the crate's one unsafe item.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        REALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

/// Totals since the process started; subtract two to get what happened between them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocationCounts {
    /// Allocations (`alloc` and `alloc_zeroed`).
    pub allocations: u64,
    /// Reallocations (a growing buffer).
    pub reallocations: u64,
    /// Bytes asked for, by allocations and reallocations.
    pub bytes: u64,
}

impl AllocationCounts {
    /// Allocations and reallocations: the calls into the allocator that can be slow.
    pub fn calls(&self) -> u64 {
        self.allocations + self.reallocations
    }
}

impl Sub for AllocationCounts {
    type Output = AllocationCounts;

    fn sub(self, earlier: AllocationCounts) -> AllocationCounts {
        AllocationCounts {
            allocations: self.allocations.saturating_sub(earlier.allocations),
            reallocations: self.reallocations.saturating_sub(earlier.reallocations),
            bytes: self.bytes.saturating_sub(earlier.bytes),
        }
    }
}

/// The counts so far (all zero unless [`CountingAllocator`] is the global allocator).
pub fn allocation_counts() -> AllocationCounts {
    AllocationCounts {
        allocations: ALLOCATIONS.load(Ordering::Relaxed),
        reallocations: REALLOCATIONS.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
    }
}

/// Bytes live on the heap now (allocated through [`CountingAllocator`] and not freed yet).
pub fn live_heap_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// CPU time this process's live threads have used so far (user and system). On Linux, from
/// each thread's `/proc/self/task/*/schedstat` (nanoseconds); where that is missing, from
/// `/proc/self/stat` (clock ticks, taken as 100 per second); zero where neither exists.
/// Threads that have exited no longer count: measure phases that keep their threads.
pub fn process_cpu_time() -> Duration {
    schedstat_cpu().or_else(stat_cpu).unwrap_or_default()
}

/// The sum of the first field (on-CPU nanoseconds) of every thread's schedstat.
fn schedstat_cpu() -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path().join("schedstat");
        let text = std::fs::read_to_string(path).ok()?;
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// utime + stime from /proc/self/stat.
fn stat_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // After the comm: field 3 (state) is index 0, so utime (14) is 11 and stime (15) is 12.
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = process_cpu_time();
        let mut x = 0u64;
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        assert!(process_cpu_time() > before);
    }

    #[test]
    fn counts_subtract() {
        let a = AllocationCounts {
            allocations: 5,
            reallocations: 2,
            bytes: 100,
        };
        let b = AllocationCounts {
            allocations: 8,
            reallocations: 2,
            bytes: 164,
        };
        let d = b - a;
        assert_eq!(
            (d.allocations, d.reallocations, d.bytes, d.calls()),
            (3, 0, 64, 3)
        );
    }
}
