//! One seed is one run: the same seed gives the same trace, byte for byte, and different
//! seeds give different runs. Fails if anything in the client, the recipes, the model or the
//! simulated network draws from outside the seed (a clock reading, a hash order, a random
//! `select!`).

use std::time::Duration;

use zkrs_sim::{FaultConfig, Report, Simulation};

fn mutex_run(seed: u64) -> Report {
    Simulation::new(seed)
        .faults(FaultConfig::for_duration(Duration::from_secs(30)))
        .keep_trace(true)
        .run(|world| async move { zkrs_sim_suites::run("mutex", world).await })
}

#[test]
fn a_seed_replays_its_trace_byte_for_byte() {
    for seed in [1, 84, 1234] {
        let a = mutex_run(seed);
        let b = mutex_run(seed);
        assert!(a.passed(), "seed {seed}: {:?}", a.violation);
        assert!(a.faults > 5, "seed {seed}: only {} faults", a.faults);
        assert!(a.trace_lines > 1000, "seed {seed}: {} lines", a.trace_lines);
        if a.trace != b.trace {
            let at = a.trace.iter().zip(&b.trace).position(|(x, y)| x != y);
            panic!(
                "seed {seed}: the traces part at line {at:?}:\n  {:?}\n  {:?}",
                at.map(|i| &a.trace[i]),
                at.map(|i| &b.trace[i])
            );
        }
        assert_eq!(a.trace_hash, b.trace_hash);
        println!(
            "seed {seed}: {:016x}, {} lines",
            a.trace_hash, a.trace_lines
        );
    }
}

/// The barriers suite under the campaign's faults (outages and single-client faults
/// included): its participants meet on shared round deadlines and a watch channel, which
/// must repeat with the seed too.
#[test]
fn a_barriers_seed_replays_its_trace() {
    let faults = zkrs_sim_suites::fault_config("barriers", FaultConfig::default());
    let run = || {
        Simulation::new(1)
            .faults(faults.clone())
            .run(|world| async move { zkrs_sim_suites::run("barriers", world).await })
    };
    let (a, b) = (run(), run());
    assert!(a.passed(), "{:?}", a.violation);
    assert!(a.faults > 5, "only {} faults", a.faults);
    assert_eq!(a.trace_hash, b.trace_hash);
}

#[test]
fn different_seeds_make_different_runs() {
    let hashes: Vec<u64> = (1..=5).map(|seed| mutex_run(seed).trace_hash).collect();
    for (i, h) in hashes.iter().enumerate() {
        assert!(!hashes[i + 1..].contains(h), "{hashes:x?}");
    }
}

#[test]
fn leaving_faults_out_changes_only_what_they_did() {
    let sim = Simulation::new(7).faults(FaultConfig::for_duration(Duration::from_secs(30)));
    let plan = sim.plan();
    let fewer = sim.clone().skip_faults(vec![plan[0].id]).plan();
    assert_eq!(fewer.len(), plan.len() - 1);
    assert_eq!(&fewer[..], &plan[1..]);
}

#[test]
fn tokio_wakes_a_watch_channels_waiters_in_the_seeds_order() {
    // A watch channel registers each waiter with one of several notifiers, picked by tokio's
    // own random draw; the wake order follows. The run seeds tokio's generator (under
    // `--cfg tokio_unstable`, which the workspace sets), so the order repeats with the seed.
    let order = |seed: u64| {
        Simulation::new(seed)
            .faults(FaultConfig::none())
            .keep_trace(true)
            .run(|world| async move {
                let (tx, rx) = tokio::sync::watch::channel(0);
                let mut tasks = Vec::new();
                for who in 0..16 {
                    let (mut rx, world) = (rx.clone(), world.clone());
                    tasks.push(tokio::spawn(async move {
                        let _ = rx.changed().await;
                        world.trace(&format!("woke {who}"));
                    }));
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                tx.send_replace(1);
                for t in tasks {
                    let _ = t.await;
                }
                Ok(())
            })
            .trace
    };
    assert_eq!(order(5), order(5));
    assert_eq!(order(6), order(6));
}
