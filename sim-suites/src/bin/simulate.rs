//! `zkrs-simulate`: runs simulated seeds of the campaign's suites.
//!
//! ```text
//! zkrs-simulate run SUITE SEED [--skip 1,2] [--trace]   one run: its report (and trace)
//! zkrs-simulate campaign SECONDS [SUITE|all] [--jobs N] [--first-seed S] [--seeds COUNT]
//!                        [--seed-limit SECONDS] [--shrink-runs N] [--shrink-seconds SECONDS]
//! ```
//!
//! A campaign runs seeds on `N` threads (default: every core) for `SECONDS` of real time, or
//! until it has run `COUNT` seeds if that comes first (`S`, `S+1`, ...: the same seeds every
//! time, whatever the machine's speed), each seed with 60 s of faults, and prints seeds per
//! hour, simulated hours per hour, and each violation with its seed and the command that
//! replays it as soon as it is found, then the fewest faults of its plan that still show it.
//! Each seed's run is bounded in real time (`--seed-limit`, 60 s: past it, the seed is a
//! violation of its own), and so is the shrink (`--shrink-runs`, 100, and `--shrink-seconds`,
//! 300, cut to what is left of the campaign), so a campaign ends within its SECONDS plus one
//! seed's limit. Exit status 1 if any seed failed.

#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zkrs_sim::{FaultConfig, Report, ShrinkBudget, Simulation};
use zkrs_sim_suites::SUITES;

/// What a worker runs: the suite, the seed, since when (real time).
type Running = (&'static str, u64, Instant);

/// A seed's limit of real time, by default (`--seed-limit`).
const SEED_LIMIT: Duration = Duration::from_secs(60);

/// A shrink's budget, by default (`--shrink-runs`, `--shrink-seconds`).
const SHRINK_RUNS: u64 = 100;
const SHRINK_TIME: Duration = Duration::from_secs(300);

/// Past the campaign's end plus a seed's limit, how long a worker is waited for before the
/// campaign reports it and ends (a run that stopped polling its own limit).
const GRACE: Duration = Duration::from_secs(5);

/// Virtual seconds of faults per seed.
const FAULT_SECONDS: u64 = 60;

fn simulation(suite: &str, seed: u64, skip: &[usize]) -> Simulation {
    simulation_in(suite, seed, skip, true)
}

/// `skipped_replies: false` is the world before skipped replies were drawn, in which the
/// seeds found earlier replay as they were found (`run ... --no-skipped-replies`).
fn simulation_in(suite: &str, seed: u64, skip: &[usize], skipped_replies: bool) -> Simulation {
    let mut config = zkrs_sim_suites::fault_config(
        suite,
        FaultConfig::for_duration(Duration::from_secs(FAULT_SECONDS)),
    );
    if !skipped_replies {
        config = config.skip_reply_gap(None);
    }
    Simulation::new(seed)
        .faults(config)
        .skip_faults(skip.to_vec())
}

fn run(suite: &str, sim: &Simulation) -> Report {
    let name = suite.to_string();
    sim.run(move |world| async move { zkrs_sim_suites::run(&name, world).await })
}

/// The fewest faults of the plan that still show the violation, within `budget`
/// ([`Simulation::shrink_within`]): the faults left out, the last failing report, the runs
/// and whether every fault was tried.
fn shrink(
    sim: &Simulation,
    suite: &str,
    failing: Report,
    budget: ShrinkBudget,
) -> (Vec<usize>, Report, u64, bool) {
    let name = suite.to_string();
    let test = move |world| {
        let name = name.clone();
        async move { zkrs_sim_suites::run(&name, world).await }
    };
    match sim.shrink_within(test, &failing, budget) {
        Some(shrunk) => (shrunk.left_out, shrunk.report, shrunk.runs, shrunk.complete),
        None => (Vec::new(), failing, 0, true),
    }
}

/// A number after `name`, `default` without it; an error line for a bad one.
fn number_flag(args: &[String], name: &str, default: u64) -> Result<u64, String> {
    match flag(args, name) {
        None => Ok(default),
        Some(text) => text
            .parse()
            .map_err(|_| format!("zkrs-simulate: {name} takes a number, not {text:?}")),
    }
}

fn replay_command(suite: &str, seed: u64, skip: &[usize]) -> String {
    let mut cmd = format!("scripts/simulate.sh --replay {suite} {seed}");
    if !skip.is_empty() {
        let list: Vec<String> = skip.iter().map(usize::to_string).collect();
        cmd.push_str(&format!(" --skip {}", list.join(",")));
    }
    cmd
}

fn print_report(suite: &str, report: &Report, real: Duration) {
    println!(
        "suite={suite} seed={} hash={:016x} lines={} simulated={:.1}s real={:.3}s faults={} violation={}",
        report.seed,
        report.trace_hash,
        report.trace_lines,
        report.simulated.as_secs_f64(),
        real.as_secs_f64(),
        report.faults,
        report
            .violation
            .as_ref()
            .map_or_else(|| "none".to_owned(), ToString::to_string),
    );
}

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

fn one(args: &[String]) -> i32 {
    let suite = args.first().map_or("mutex", String::as_str);
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let skip: Vec<usize> = flag(args, "--skip")
        .map(|list| list.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default();
    let trace = args.iter().any(|a| a == "--trace");
    let skipped_replies = !args.iter().any(|a| a == "--no-skipped-replies");
    let sim = simulation_in(suite, seed, &skip, skipped_replies).keep_trace(trace);
    for fault in sim.plan() {
        println!("plan: {fault}");
    }
    let started = Instant::now();
    let report = run(suite, &sim);
    if trace {
        for line in &report.trace {
            println!("{line}");
        }
    }
    print_report(suite, &report, started.elapsed());
    i32::from(!report.passed())
}

/// What a campaign was asked for, from its command line.
#[derive(Clone)]
struct Campaign {
    suites: Vec<&'static str>,
    seconds: u64,
    jobs: usize,
    first: u64,
    /// The seed past the last one to run, if a count bounds the campaign.
    last: Option<u64>,
    seed_limit: Duration,
    shrink_runs: u64,
    shrink_time: Duration,
}

/// What the workers share: the next seed, whether to stop, what each runs now, the totals.
struct Progress {
    next: AtomicU64,
    stop: AtomicBool,
    /// What each worker runs now, and since when (real time): a seed that never ends (a loop
    /// in virtual time that never lets the clock move) is reported instead of waited for.
    running: Mutex<Vec<Option<Running>>>,
    totals: Totals,
}

struct Totals {
    seeds: AtomicU64,
    simulated_ms: AtomicU64,
    faults: AtomicU64,
    failures: Mutex<Vec<String>>,
}

/// The campaign's command line, or the exit status after saying what is wrong with it.
fn campaign_args(args: &[String]) -> Result<Campaign, i32> {
    let seconds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(60);
    let which = args.get(1).map_or("all", String::as_str);
    let suites: Vec<&'static str> = SUITES
        .iter()
        .copied()
        .filter(|s| which == "all" || *s == which)
        .collect();
    if suites.is_empty() {
        eprintln!(
            "zkrs-simulate: no suite named {which} (suites: {})",
            SUITES.join(", ")
        );
        return Err(2);
    }
    let jobs: usize = flag(args, "--jobs")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let first: u64 = flag(args, "--first-seed")
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
                .wrapping_mul(1_000_003)
        });
    // A seed count bounds the campaign as well as its time: seeds first..first+count.
    let count: Option<u64> = match flag(args, "--seeds") {
        None => None,
        Some(text) => match text.parse() {
            Ok(n) => Some(n),
            Err(_) => {
                eprintln!("zkrs-simulate: --seeds takes a count of seeds, not {text:?}");
                return Err(2);
            }
        },
    };
    let bounds = (
        number_flag(args, "--seed-limit", SEED_LIMIT.as_secs()),
        number_flag(args, "--shrink-runs", SHRINK_RUNS),
        number_flag(args, "--shrink-seconds", SHRINK_TIME.as_secs()),
    );
    let (seed_limit, shrink_runs, shrink_time) = match bounds {
        (Ok(limit), Ok(runs), Ok(time)) => (
            Duration::from_secs(limit.max(1)),
            runs,
            Duration::from_secs(time),
        ),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            eprintln!("{e}");
            return Err(2);
        }
    };
    Ok(Campaign {
        suites,
        seconds,
        jobs,
        first,
        last: count.map(|n| first.saturating_add(n)),
        seed_limit,
        shrink_runs,
        shrink_time,
    })
}

fn campaign(args: &[String]) -> i32 {
    let campaign = match campaign_args(args) {
        Ok(campaign) => campaign,
        Err(code) => return code,
    };
    let progress = Arc::new(Progress {
        next: AtomicU64::new(campaign.first),
        stop: AtomicBool::new(false),
        running: Mutex::new(vec![None; campaign.jobs]),
        totals: Totals {
            seeds: AtomicU64::new(0),
            simulated_ms: AtomicU64::new(0),
            faults: AtomicU64::new(0),
            failures: Mutex::new(Vec::new()),
        },
    });
    let started = Instant::now();
    let deadline = started + Duration::from_secs(campaign.seconds);
    let workers: Vec<_> = (0..campaign.jobs)
        .map(|worker| {
            let (campaign, progress) = (campaign.clone(), progress.clone());
            std::thread::spawn(move || run_seeds(&campaign, &progress, worker, deadline))
        })
        .collect();
    wait_for_workers(&workers, &campaign, &progress, deadline);
    print_totals(&campaign, &progress.totals, started)
}

/// One worker: seeds until the deadline, the last seed or a stop.
fn run_seeds(campaign: &Campaign, progress: &Progress, worker: usize, deadline: Instant) {
    let suites = &campaign.suites;
    while Instant::now() < deadline && !progress.stop.load(Ordering::Relaxed) {
        let seed = progress.next.fetch_add(1, Ordering::Relaxed);
        if campaign.last.is_some_and(|last| seed >= last) {
            break;
        }
        let suite = suites[(seed % suites.len() as u64) as usize];
        progress.running.lock().unwrap()[worker] = Some((suite, seed, Instant::now()));
        let sim = simulation(suite, seed, &[]).real_limit(campaign.seed_limit);
        let report = run(suite, &sim);
        progress.running.lock().unwrap()[worker] = None;
        let totals = &progress.totals;
        totals.seeds.fetch_add(1, Ordering::Relaxed);
        totals
            .simulated_ms
            .fetch_add(report.simulated.as_millis() as u64, Ordering::Relaxed);
        totals.faults.fetch_add(report.faults, Ordering::Relaxed);
        if !report.passed() {
            report_violation(campaign, progress, &sim, (suite, seed), report, deadline);
        }
    }
}

/// Prints a failing seed at once (a shrink takes many runs, and may not finish), then the
/// fewest faults of its plan that still show it.
fn report_violation(
    campaign: &Campaign,
    progress: &Progress,
    sim: &Simulation,
    (suite, seed): (&'static str, u64),
    report: Report,
    deadline: Instant,
) {
    let text = format!(
        "VIOLATION suite={suite} seed={seed}\n  {}\n  replay: {}",
        report
            .violation
            .as_ref()
            .map_or_else(|| "?".to_owned(), ToString::to_string)
            .replace('\n', "\n  "),
        replay_command(suite, seed, &[]),
    );
    println!("{text}");
    progress.totals.failures.lock().unwrap().push(text);
    let left = deadline.saturating_duration_since(Instant::now());
    let budget = ShrinkBudget::new(campaign.shrink_runs, campaign.shrink_time.min(left));
    let (skip, shrunk, runs, complete) = shrink(sim, suite, report, budget);
    let plan: Vec<String> = simulation(suite, seed, &skip)
        .plan()
        .iter()
        .map(|f| format!("    {f}"))
        .collect();
    println!(
        "SHRUNK suite={suite} seed={seed} runs={runs}{}\n  faults that show it:\n{}\n  last trace lines:\n{}\n  replay: {}",
        if complete { "" } else { " (budget spent: not every fault tried)" },
        plan.join("\n"),
        shrunk.trace[shrunk.trace.len().saturating_sub(40)..]
            .iter()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
        replay_command(suite, seed, &skip),
    );
    if std::env::var_os("ZKRS_SIM_STOP_AT_FIRST").is_some() {
        progress.stop.store(true, Ordering::Relaxed);
    }
}

/// Waits for the workers. Each run polls its own limit of real time; one that stopped
/// polling (a step that never returns) is reported here, and left behind (the process
/// exits).
fn wait_for_workers(
    workers: &[std::thread::JoinHandle<()>],
    campaign: &Campaign,
    progress: &Progress,
    deadline: Instant,
) {
    let given_up = deadline + campaign.seed_limit + GRACE;
    while workers.iter().any(|w| !w.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        if Instant::now() < given_up {
            continue;
        }
        for (suite, seed, since) in progress.running.lock().unwrap().iter().flatten() {
            let text = format!(
                "VIOLATION suite={suite} seed={seed}\n  stalled: still running after {} s of real time, past its limit of {} s\n  replay: ZKRS_SIM_ECHO=1 {}",
                since.elapsed().as_secs(),
                campaign.seed_limit.as_secs(),
                replay_command(suite, *seed, &[])
            );
            println!("{text}");
            progress.totals.failures.lock().unwrap().push(text);
        }
        break;
    }
}

/// The campaign's closing line; the exit status (1 if any seed failed).
fn print_totals(campaign: &Campaign, totals: &Totals, started: Instant) -> i32 {
    let real = started.elapsed().as_secs_f64();
    let seeds = totals.seeds.load(Ordering::Relaxed);
    let simulated = totals.simulated_ms.load(Ordering::Relaxed) as f64 / 1000.0;
    let failures = totals.failures.lock().unwrap().len();
    let (jobs, first) = (campaign.jobs, campaign.first);
    println!(
        "campaign suites={} jobs={jobs} first_seed={first} seeds={seeds} real={real:.0}s simulated={:.2}h faults={} seeds_per_hour={:.0} simulated_hours_per_hour={:.0} speed={:.0}x violations={failures}",
        campaign.suites.join(","),
        simulated / 3600.0,
        totals.faults.load(Ordering::Relaxed),
        seeds as f64 * 3600.0 / real,
        simulated / real,
        simulated / real / jobs as f64,
    );
    i32::from(failures > 0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("run") => one(&args[1..]),
        Some("campaign") => campaign(&args[1..]),
        _ => {
            eprintln!(
                "usage: zkrs-simulate run SUITE SEED [--skip 1,2] [--trace] [--no-skipped-replies]\n       zkrs-simulate campaign SECONDS [SUITE|all] [--jobs N] [--first-seed S] [--seeds COUNT]\nsuites: {}",
                SUITES.join(", ")
            );
            2
        }
    };
    std::process::exit(code);
}
