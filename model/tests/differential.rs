//! Differential test: random scripts run against the model (over its TCP adapter) and against
//! a real ZooKeeper from the test kit (3.9.5 by default; `ZKRS_TEST_ZOOKEEPER=debian` is
//! 3.8.0), in lock step, the model answering as the release the real server reports; every
//! reply (error code, zxid, data, Stat, children, ACL) and every watch event must match after
//! normalising (zxids relative to the script's start, session ids by order of creation, times
//! left out, children sorted).
//! Events are compared with their header's zxid (-1 on 3.8, the firing write's on 3.9).
//!
//! Short campaign by default (CI); a long one with `ZKRS_MODEL_SCRIPTS=1000` (and optionally
//! `ZKRS_MODEL_STEPS`, `ZKRS_MODEL_SEED`). A difference prints the seed and the step.

mod support;

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use support::diagnose::{self, StepTime};
use support::runner::{Run, TIMEOUT_MS};
use support::script::{generate, Step};
use zkrs_model::{ServerConfig, TcpServer, ZooKeeperVersion};
use zkrs_testkit::{ServerOptions, TestingServer};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Containers and TTL nodes are reaped by a background pass; both servers run it hourly so
/// it never lands inside a campaign (it is checked on its own in the model's unit tests).
const REAPER_INTERVAL_MS: u64 = 3_600_000;

/// Names the seed when a script panics outside the comparison (a server that never answers,
/// a session that never expires), so it can be replayed.
struct NameOnPanic(u64);

impl Drop for NameOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "while running seed {0}: ZKRS_MODEL_SEED={0} ZKRS_MODEL_SCRIPTS=1 cargo test -p zkrs-model --test differential",
                self.0
            );
        }
    }
}

#[test]
fn model_agrees_with_zookeeper() {
    let scripts = env_or("ZKRS_MODEL_SCRIPTS", 8);
    let steps = env_or("ZKRS_MODEL_STEPS", 60) as usize;
    let first_seed = env_or("ZKRS_MODEL_SEED", 1);

    let real = TestingServer::start_with(
        ServerOptions::new()
            .max_session_timeout_ms(TIMEOUT_MS as u32)
            .system_property(
                "znode.container.checkIntervalMs",
                REAPER_INTERVAL_MS.to_string(),
            )
            // The JVM's collections in the server's log, for a wait that times out.
            .jvm_arg("-Xlog:gc:stdout"),
    )
    .expect("a real ZooKeeper");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // The model answers as the real server's release; `ZKRS_MODEL_ZOOKEEPER` overrides it (to
    // see how a release the model does not follow, 3.5 to 3.7, differs from a modelled one).
    let reported = real.version().expect("the real server's version");
    let version = match std::env::var("ZKRS_MODEL_ZOOKEEPER") {
        Ok(v) => v.parse::<ZooKeeperVersion>(),
        Err(_) => ZooKeeperVersion::new(reported.major, reported.minor, reported.patch),
    }
    .unwrap_or_else(|e| panic!("{e}: set ZKRS_MODEL_ZOOKEEPER to compare with {reported}"));
    let mut config = ServerConfig::default();
    config.zookeeper = version;
    config.container_check_interval = Duration::from_millis(REAPER_INTERVAL_MS);
    config.max_session_timeout = Some(Duration::from_millis(TIMEOUT_MS as u64));
    let model = runtime.block_on(TcpServer::start_with(config)).unwrap();

    let started = Instant::now();
    let mut lines = 0usize;
    let mut expiry_steps = 0;
    for seed in first_seed..first_seed + scripts {
        let _named = NameOnPanic(seed);
        let root = format!("/script-{seed}");
        let script = generate(seed, &root, steps);
        expiry_steps += script
            .iter()
            .filter(|s| matches!(s, Step::Expire { .. }))
            .count();
        let mut on_model = Run::start(model.addr(), &root);
        let mut on_real = Run::start(real.address(), &root);
        assert_eq!(
            on_model.steps[0], on_real.steps[0],
            "seed {seed}: setup differs"
        );
        let mut times: Vec<StepTime> = Vec::new();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
            for (k, step) in script.iter().enumerate() {
                let t0 = Instant::now();
                on_model.step(step);
                let t1 = Instant::now();
                on_real.step(step);
                let time = StepTime {
                    step: k,
                    model: t1 - t0,
                    real: t1.elapsed(),
                };
                // The slowest step, the expiry, takes the short session's 600 ms and a tick
                // or two; a step over 2 s means a server (or this process) stalled.
                if time.model.max(time.real) > Duration::from_secs(2) {
                    eprintln!("slow step: seed {seed} {time:?} {step:?}");
                }
                times.push(time);
                let (m, r) = (&on_model.steps[k + 1], &on_real.steps[k + 1]);
                if m != r {
                    return Err(k);
                }
                lines += m.len();
                if std::env::var("ZKRS_MODEL_DUMP").is_ok() {
                    eprintln!("{k}: {step:?}\n    {r:?}");
                }
            }
            Ok(())
        }));
        let k = match outcome {
            Ok(Ok(())) => {
                on_model.finish();
                on_real.finish();
                continue;
            }
            Ok(Err(k)) => k,
            Err(stopped) => {
                // Stopped on a wait, not on a difference: show both servers' view.
                diagnose::report(
                    &real,
                    &model,
                    &runtime,
                    &times,
                    &on_model.sessions,
                    &on_real.sessions,
                );
                panic::resume_unwind(stopped);
            }
        };
        let step = &script[k];
        let (m, r) = (&on_model.steps[k + 1], &on_real.steps[k + 1]);
        // Background transactions of the real server (expiries, the container reaper)
        // explain most zxid skews: show them.
        let log = std::fs::read_to_string(real.log_path()).unwrap_or_default();
        let background: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("Expiring") || l.contains("ontainer"))
            .collect();
        eprintln!("real server's background work:\n{}", background.join("\n"));
        diagnose::print_times(&times);
        let from = k.saturating_sub(usize::try_from(env_or("ZKRS_MODEL_CONTEXT", 6)).unwrap_or(6));
        let context: Vec<String> = script[from..k]
            .iter()
            .zip(on_real.steps[from + 1..=k].iter())
            .map(|(s, l)| format!("  {s:?}\n    -> {l:?}"))
            .collect();
        panic!(
            "seed {seed}, step {k}: the model differs from ZooKeeper\n\
             step: {step:?}\nmodel:     {m:#?}\nzookeeper: {r:#?}\n\
             previous steps (ZooKeeper's answers):\n{}\n\
             replay: ZKRS_MODEL_SEED={seed} ZKRS_MODEL_SCRIPTS=1 cargo test -p zkrs-model --test differential",
            context.join("\n")
        );
    }
    if let Ok(secs) = std::env::var("ZKRS_MODEL_LINGER") {
        // Debugging aid: wait past the slots' session timeout (and the tick it is rounded up
        // to) and show what the real server did on its own (an expiry here means a script left
        // a session open).
        let past_timeout = TIMEOUT_MS as u64 / 1000 + 2;
        std::thread::sleep(Duration::from_secs(secs.parse().unwrap_or(past_timeout)));
        let log = std::fs::read_to_string(real.log_path()).unwrap_or_default();
        for line in log.lines().filter(|l| {
            l.contains("Expiring")
                || l.contains("Processed session termination")
                || l.contains("Session establishment complete")
        }) {
            eprintln!("{line}");
        }
    }
    // Every expiry on ZooKeeper should be an expiry step's: another means a script left a
    // session behind, or a stall expired one (either would skew the zxids of a later step).
    let log = std::fs::read_to_string(real.log_path()).unwrap_or_default();
    let expiries = log.matches("Expiring session").count();
    eprintln!(
        "differential, ZooKeeper {reported} and the model as {version}: {scripts} scripts x {steps} steps (seeds {first_seed}..{}), {lines} observations identical, {:?}; \
         ZooKeeper expired {expiries} sessions, for {expiry_steps} expiry steps",
        first_seed + scripts,
        started.elapsed()
    );
}
