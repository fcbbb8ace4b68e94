//! A seeded fault injector for the invariant and soak suites: one fault at a time on a
//! 3-node ensemble (member kill+restart, leader kill+restart, pauses shorter and longer than
//! the session timeout, two members paused so the quorum is lost), drawn from a seed that is
//! printed so a run can be replayed (`ZKR_FAULT_SEED`).
#![allow(dead_code)] // each test file uses some of these

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zkr_testkit::TestingCluster;

/// How long the faults last (`ZKR_FAULT_SECS`, else `default`).
pub fn fault_secs_or(default: u64) -> u64 {
    std::env::var("ZKR_FAULT_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The invariant suites' length: 25 s unless `ZKR_FAULT_SECS` says otherwise.
pub fn fault_secs() -> u64 {
    fault_secs_or(25)
}

/// `ZKR_FAULT_SEED`, else one from the clock.
pub fn seed() -> u64 {
    std::env::var("ZKR_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        })
}

/// splitmix64: a seeded sequence, so a schedule can be replayed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn millis(&mut self, from: u64, to: u64) -> Duration {
        Duration::from_millis(from + self.below(to - from))
    }
}

/// Injects one fault at a time on a thread of its own until stopped, then heals everything
/// and waits for a leader. Returns the faults it injected.
pub struct Faults {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<String>>>,
}

impl Faults {
    pub fn start(cluster: Arc<TestingCluster>, seed: u64) -> Faults {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut rng = Rng(seed);
            let mut log = Vec::new();
            // Waits `d` unless told to stop; the injector's own pacing, not a test's wait.
            let pause_for = |d: Duration| {
                let until = Instant::now() + d;
                while Instant::now() < until && !stopping.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(20));
                }
            };
            let started = Instant::now();
            while !stopping.load(Ordering::Relaxed) {
                pause_for(rng.millis(800, 2500));
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                let member = rng.below(3) as usize;
                let at = started.elapsed().as_secs_f32();
                let fault = match rng.below(5) {
                    0 => {
                        let _ = cluster.kill(member);
                        pause_for(rng.millis(300, 3000));
                        let _ = cluster.start_member(member);
                        format!("{at:.1}s kill+restart member {member}")
                    }
                    1 => {
                        let d = rng.millis(300, 1500);
                        let _ = cluster.pause(member);
                        pause_for(d);
                        let _ = cluster.resume(member);
                        format!("{at:.1}s pause member {member} {}ms (short)", d.as_millis())
                    }
                    2 => {
                        let d = rng.millis(2500, 6000);
                        let _ = cluster.pause(member);
                        pause_for(d);
                        let _ = cluster.resume(member);
                        format!("{at:.1}s pause member {member} {}ms (long)", d.as_millis())
                    }
                    3 => match cluster.leader() {
                        Some(leader) => {
                            let _ = cluster.kill(leader);
                            pause_for(rng.millis(300, 2000));
                            let _ = cluster.start_member(leader);
                            format!("{at:.1}s kill+restart leader {leader}")
                        }
                        None => format!("{at:.1}s no leader to kill"),
                    },
                    _ => {
                        // Two members: no quorum; longer than the session timeout.
                        let other = (member + 1 + rng.below(2) as usize) % 3;
                        let d = rng.millis(1500, 5000);
                        let _ = cluster.pause(member);
                        let _ = cluster.pause(other);
                        pause_for(d);
                        let _ = cluster.resume(member);
                        let _ = cluster.resume(other);
                        format!(
                            "{at:.1}s pause members {member},{other} {}ms (quorum lost)",
                            d.as_millis()
                        )
                    }
                };
                log.push(fault);
            }
            // Heal: everyone running and resumed, and a leader.
            for i in 0..3 {
                if cluster.is_paused(i) {
                    let _ = cluster.resume(i);
                }
                if !cluster.is_running(i) {
                    let _ = cluster.start_member(i);
                }
            }
            cluster
                .wait_for_leader(Duration::from_secs(60))
                .expect("a leader after healing");
            log
        });
        Faults {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops injecting, heals, and returns what was injected.
    pub fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        let thread = self.thread.take().expect("once");
        tokio::task::block_in_place(|| thread.join().expect("fault thread"))
    }
}

impl Drop for Faults {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
