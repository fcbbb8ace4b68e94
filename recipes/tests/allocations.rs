//! The recipe hot path allocates nothing: ranking contenders whose names are borrowed from a
//! reply frame. And an uncontended mutex acquire + release stays within its allocation budget.
//!
//! A counting global allocator; counting is switched on around the measured code only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use zkrs_codec::{Decode, Encode, GetChildren2Response, List, Stat};
use zkrs_recipes::sequence::{first_blocker_before, key_fn, rank, read_write_sort_key, sort_key};

struct Counting;

// Per thread: only the measured thread counts (tests run in parallel; the current-thread
// runtime below keeps the client's driver task on the test's thread).
thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

fn start_counting() {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|on| on.set(true));
}

fn stop_counting() -> usize {
    COUNTING.with(|on| on.set(false));
    ALLOCATIONS.with(|n| n.get())
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn count<T>(f: impl FnOnce() -> T) -> (T, usize) {
    start_counting();
    let out = f();
    (out, stop_counting())
}

#[test]
fn ranking_10000_borrowed_names_allocates_nothing() {
    let names: Vec<String> = (0..10_000)
        .rev()
        .map(|i| format!("_c_{i:08x}-aaaa-4bbb-8ccc-dddddddddddd-lock-{i:010}"))
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let frame = GetChildren2Response {
        children: List::Slice(&refs),
        stat: Stat::default(),
    }
    .to_bytes();
    let ours = names[0].as_str(); // the highest sequence: every other name sorts before it
    let ((index, predecessor), allocations) = count(|| {
        let reply = GetChildren2Response::decode_prefix(&frame).unwrap();
        let r = rank(
            reply.children.iter(),
            ours,
            key_fn(|s| sort_key(s, "lock-")),
        )
        .unwrap();
        (r.index, r.predecessor.map(|p| p.len()))
    });
    assert_eq!(index, 9_999);
    assert_eq!(predecessor, Some(names[1].len()));
    assert_eq!(allocations, 0, "the hot path allocated");

    let (blocker, allocations) = count(|| {
        let reply = GetChildren2Response::decode_prefix(&frame).unwrap();
        first_blocker_before(reply.children.iter(), ours, read_write_sort_key, |n| {
            n.contains("__WRIT__")
        })
        .map(|b| b.is_some())
    });
    assert_eq!(blocker, Some(false));
    assert_eq!(allocations, 0, "the read-lock scan allocated");
}

/// Runs `test` with a session on a new server, on a current-thread runtime: the client's
/// driver task runs on the test's thread, where allocations are counted.
fn with_a_session<F: std::future::Future<Output = ()>>(
    test: impl FnOnce(zkrs_client::Client) -> F,
) {
    let zk = zkrs_testkit::TestingServer::start().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let client = zkrs_client::Client::connect(&zk.connect_string())
            .await
            .unwrap();
        test(client).await;
    });
}

#[test]
fn uncontended_acquire_release_allocation_budget() {
    with_a_session(|client| async move {
        let mutex = zkrs_recipes::lock::InterProcessMutex::builder(&client, "/alloc/lock")
            .build()
            .unwrap();
        // Warm up: parents created, buffers grown, channels allocated.
        for _ in 0..20 {
            mutex.acquire().await.unwrap().release().await.unwrap();
        }
        const N: usize = 200;
        // Where they come from, for the report.
        start_counting();
        for _ in 0..N {
            client.get_children("/alloc/lock").await.unwrap();
        }
        println!(
            "allocations per getChildren round trip: {:.2}",
            stop_counting() as f64 / N as f64
        );
        start_counting();
        for _ in 0..N {
            let p = zkrs_recipes::framework::ProtectedName::new();
            std::hint::black_box(p.path("/alloc/lock", "lock-"));
        }
        println!(
            "allocations per protected name + path: {:.2}",
            stop_counting() as f64 / N as f64
        );
        start_counting();
        for _ in 0..N {
            mutex.acquire().await.unwrap().release().await.unwrap();
        }
        let per_cycle = stop_counting() as f64 / N as f64;
        println!("allocations per uncontended acquire+release: {per_cycle:.2}");
        // Three client round trips (create2, getChildren, delete) that allocate nothing in
        // steady state, and the node's path: 1 (the path asked for becomes the created one).
        // It was 8 while each request allocated its frame and its reply slot, and the created
        // path was a copy of its own.
        assert!(
            per_cycle <= 1.0,
            "{per_cycle:.2} allocations per acquire+release"
        );
    });
}

/// Picking an instance from a started service provider touches no network and allocates
/// nothing: the strategies walk the cache's `Arc` snapshot through the filters.
#[test]
fn a_provider_pick_allocates_nothing() {
    use zkrs_recipes::discovery::{Random, ServiceDiscovery, ServiceInstance, Sticky};
    with_a_session(|client| async move {
        let discovery = ServiceDiscovery::<serde_json::Value>::builder(&client, "/alloc/services")
            .build()
            .unwrap();
        for i in 0..20u16 {
            let instance = ServiceInstance::builder("api")
                .id(&format!("i{i:02}"))
                .address("10.0.0.1")
                .port(8000 + i)
                .build()
                .unwrap();
            discovery.register(&instance).await.unwrap();
        }
        let round_robin = discovery
            .provider("api")
            .filter(|i| i.port != Some(8003))
            .start()
            .unwrap();
        let random = discovery
            .provider("api")
            .strategy(Random::with_seed(3))
            .start()
            .unwrap();
        let sticky = discovery
            .provider("api")
            .strategy(Sticky::new(Random::with_seed(3)))
            .start()
            .unwrap();
        for provider in [&round_robin, &random, &sticky] {
            provider.initialized().await.unwrap();
            // Twice: as started, then with an instance noted down once, so the error map is
            // consulted on every pick (the walk through the filters, not the indexed path).
            for noted in [false, true] {
                if noted {
                    let first = provider.instance().unwrap();
                    provider.note_error(&first);
                }
                for _ in 0..10 {
                    provider.instance().unwrap();
                }
                const N: usize = 10_000;
                start_counting();
                for _ in 0..N {
                    std::hint::black_box(provider.instance());
                }
                let allocations = stop_counting();
                assert_eq!(allocations, 0, "{allocations} allocations in {N} picks");
            }
        }
    });
}
