//! Many seeds of one test, from a plain `#[test]`: [`Runner`] takes its seeds, time budget
//! and threads from the environment (or its defaults), runs the test on each seed, and for
//! each failing seed shrinks its faults and checks that it replays.

use std::fmt;
use std::future::Future;
use std::ops::Range;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::finding::Finding;
use crate::runner_error::RunnerError;
use crate::settings::{self, EnvSettings, Seeds};
use crate::shrink::{ReplayCheck, Shrunk};
use crate::world::{Report, Simulation, World};

/// Whether this build replays a seed byte for byte: tokio seeds its own random draws (the
/// order a watch channel's waiters wake in) only when built with `--cfg tokio_unstable`.
/// Without it a seed still draws the same faults, but two runs may differ.
pub const EXACT_REPLAY: bool = cfg!(tokio_unstable);

/// One failing seed: its run, the faults that show it, and whether it replays.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Failure {
    /// The failing run (its [`Report::violation`] is set).
    pub report: Report,
    /// The fewest faults that still fail the same way (`None` when shrinking is off).
    pub shrunk: Option<Shrunk>,
    /// Whether the seed replays (`None` when the check is off).
    pub replay: Option<ReplayCheck>,
    /// The environment that replays it, for the test's command line.
    pub replay_with: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let violation = self
            .report
            .violation
            .as_ref()
            .map_or_else(String::new, ToString::to_string);
        writeln!(
            f,
            "seed {} failed: {}",
            self.report.seed,
            violation.replace('\n', "\n  ")
        )?;
        if let Some(shrunk) = &self.shrunk {
            writeln!(
                f,
                "  the faults that show it ({} left out, {} runs):",
                shrunk.left_out.len(),
                shrunk.runs
            )?;
            for fault in &shrunk.faults {
                writeln!(f, "    {fault}")?;
            }
        }
        if let Some(replay) = &self.replay {
            writeln!(f, "  the seed {replay}")?;
        }
        let report = self.shrunk.as_ref().map_or(&self.report, |s| &s.report);
        writeln!(f, "  last trace lines:")?;
        for line in &report.trace[report.trace.len().saturating_sub(20)..] {
            writeln!(f, "    {line}")?;
        }
        write!(f, "  replay: {}", self.replay_with)
    }
}

/// What a [`Runner`] did: the seeds it ran and the ones that failed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Summary {
    /// Seeds run.
    pub seeds: u64,
    /// The failing ones, by seed.
    pub failures: Vec<Failure>,
    /// Virtual time of every run together.
    pub simulated: Duration,
    /// Real time taken.
    pub real: Duration,
    /// Whether the time budget, not the seeds, ended the run.
    pub budget_ended: bool,
}

impl Summary {
    /// Whether no seed failed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Panics with every failure, for a `#[test]`.
    pub fn assert_passed(&self) {
        assert!(self.passed(), "{self}");
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} seeds, {} failed, {:.0} simulated s in {:.1} s{}",
            self.seeds,
            self.failures.len(),
            self.simulated.as_secs_f64(),
            self.real.as_secs_f64(),
            if self.budget_ended {
                " (time budget ended)"
            } else {
                ""
            }
        )?;
        for failure in &self.failures {
            write!(f, "\n{failure}")?;
        }
        Ok(())
    }
}

/// Runs one test over many seeds, from a plain `#[test]`.
///
/// The environment overrides the defaults set here, so one test serves CI and a long
/// campaign:
/// - `ZKRS_SIM_SEEDS`: `1000` (a count, from the first of [`Runner::seeds`]),
///   `5000..6000`, `5000..` (until the budget ends) or `3,17,42`;
/// - `ZKRS_SIM_BUDGET`: real time after which no seed starts (`90`, `90s`, `5m`, `2h`);
/// - `ZKRS_SIM_JOBS`: threads running seeds;
/// - `ZKRS_SIM_SEED` (with `ZKRS_SIM_SKIP`, the faults a shrink left out): replays that one
///   seed and prints its plan and its whole trace.
///
/// Each failing seed is shrunk ([`Simulation::shrink`]) and run twice more to check it
/// replays ([`Simulation::check_replay`]); its report ends with the variables that replay it.
/// A build without `--cfg tokio_unstable` cannot replay exactly: the run fails with
/// [`RunnerError::InexactReplay`], which says what to add to `.cargo/config.toml`.
///
/// ```
/// use std::time::Duration;
/// use zkrs_sim::{FaultConfig, Runner, Simulation, World};
///
/// async fn my_service(world: World) -> Result<(), zkrs_sim::Finding> {
///     let client = world.connect().await;
///     client.create("/x", b"1", zkrs_client::CreateMode::Persistent).await.ok();
///     world.healed().await;
///     Ok(())
/// }
///
/// # fn main() {
/// Runner::new(|seed| {
///     Simulation::new(seed).faults(FaultConfig::for_duration(Duration::from_secs(10)))
/// })
/// .seeds(0..3)
/// .check(my_service);
/// # }
/// ```
pub struct Runner {
    simulation: Box<dyn Fn(u64) -> Simulation + Send + Sync>,
    seeds: Range<u64>,
    budget: Option<Duration>,
    jobs: usize,
    shrink: bool,
    check_replay: bool,
    inexact_replay: bool,
    max_failures: usize,
    /// [`EXACT_REPLAY`] (a field, so the check can be tested in a build that has the flag).
    exact_replay: bool,
}

impl fmt::Debug for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runner")
            .field("seeds", &self.seeds)
            .field("budget", &self.budget)
            .field("jobs", &self.jobs)
            .field("shrink", &self.shrink)
            .field("check_replay", &self.check_replay)
            .field("inexact_replay", &self.inexact_replay)
            .field("max_failures", &self.max_failures)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner of the simulations `simulation` sets up for each seed: seeds `0..100`, one
    /// thread, no time budget, failures shrunk and checked for replay, stopping after 3.
    pub fn new(simulation: impl Fn(u64) -> Simulation + Send + Sync + 'static) -> Runner {
        Runner {
            simulation: Box::new(simulation),
            seeds: 0..100,
            budget: None,
            jobs: 1,
            shrink: true,
            check_replay: true,
            inexact_replay: false,
            max_failures: 3,
            exact_replay: EXACT_REPLAY,
        }
    }

    /// The seeds to run when `ZKRS_SIM_SEEDS` says nothing (a count there starts at the
    /// first of these).
    pub fn seeds(mut self, seeds: Range<u64>) -> Runner {
        self.seeds = seeds;
        self
    }

    /// Starts no seed after this much real time (`ZKRS_SIM_BUDGET` overrides it).
    pub fn budget(mut self, budget: Duration) -> Runner {
        self.budget = Some(budget);
        self
    }

    /// Runs seeds on this many threads (`ZKRS_SIM_JOBS` overrides it; 0 is taken as 1).
    pub fn jobs(mut self, jobs: usize) -> Runner {
        self.jobs = jobs.max(1);
        self
    }

    /// Whether to shrink each failing seed's faults (one run per fault of its plan).
    pub fn shrink(mut self, on: bool) -> Runner {
        self.shrink = on;
        self
    }

    /// Whether to run each failing seed twice more and compare the traces.
    pub fn check_replay(mut self, on: bool) -> Runner {
        self.check_replay = on;
        self
    }

    /// Runs even in a build that cannot replay a seed byte for byte (see [`EXACT_REPLAY`]).
    pub fn inexact_replay(mut self, allowed: bool) -> Runner {
        self.inexact_replay = allowed;
        self
    }

    /// Starts no seed after this many have failed (each is shrunk, which takes time).
    pub fn max_failures(mut self, n: usize) -> Runner {
        self.max_failures = n.max(1);
        self
    }

    /// Runs `test` on every seed, and shrinks and checks each failing one.
    pub fn run<F, Fut>(self, test: F) -> Result<Summary, RunnerError>
    where
        F: Fn(World) -> Fut + Sync,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        if !self.exact_replay && !self.inexact_replay {
            return Err(RunnerError::InexactReplay);
        }
        let env = EnvSettings::read(self.seeds.start)?;
        let started = Instant::now();
        // libtest names a test's thread after the test: the replay command names it.
        let name = std::thread::current().name().map(str::to_owned);
        let name = name.as_deref().filter(|&n| n != "main");
        if let Some((seed, skip)) = env.replay {
            return Ok(self.replay(seed, skip, &test, started, name));
        }
        let budget = env.budget.or(self.budget);
        let seeds = bounded(
            env.seeds.unwrap_or(Seeds::Range(self.seeds.clone())),
            budget,
        )?;
        let seeds = Mutex::new(seeds.into_iter());
        let jobs = env.jobs.unwrap_or(self.jobs);
        let summary = Mutex::new(Summary {
            seeds: 0,
            failures: Vec::new(),
            simulated: Duration::ZERO,
            real: Duration::ZERO,
            budget_ended: false,
        });
        let worker = || loop {
            if budget.is_some_and(|b| started.elapsed() >= b) {
                summary.lock().unwrap().budget_ended = true;
                return;
            }
            if summary.lock().unwrap().failures.len() >= self.max_failures {
                return;
            }
            let Some(seed) = seeds.lock().unwrap().next() else {
                return;
            };
            let sim = (self.simulation)(seed);
            let report = sim.run(&test);
            let failure =
                (!report.passed()).then(|| self.examine(&sim, &test, report.clone(), name));
            let mut summary = summary.lock().unwrap();
            summary.seeds += 1;
            summary.simulated += report.simulated;
            if let Some(failure) = failure {
                eprintln!("{failure}");
                summary.failures.push(failure);
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..jobs {
                scope.spawn(worker);
            }
            worker();
        });
        let mut summary = summary.into_inner().unwrap();
        summary.failures.sort_by_key(|f| f.report.seed);
        summary.real = started.elapsed();
        Ok(summary)
    }

    /// Runs `test` as [`Runner::run`] does and panics with what failed: a plain `#[test]`'s
    /// one call.
    pub fn check<F, Fut>(self, test: F)
    where
        F: Fn(World) -> Fut + Sync,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        match self.run(test) {
            Ok(summary) if summary.passed() => eprintln!("zkrs-sim: {summary}"),
            Ok(summary) => panic!("{summary}"),
            Err(e) => panic!("{e}"),
        }
    }

    /// Shrinks a failing seed and checks it replays.
    fn examine<F, Fut>(
        &self,
        sim: &Simulation,
        test: &F,
        report: Report,
        name: Option<&str>,
    ) -> Failure
    where
        F: Fn(World) -> Fut,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        let shrunk = if self.shrink {
            sim.shrink(test, &report)
        } else {
            None
        };
        let replay = self.check_replay.then(|| {
            let left_out = shrunk.as_ref().map_or(Vec::new(), |s| s.left_out.clone());
            sim.clone().skip_faults(left_out).check_replay(test)
        });
        let replay_with = replay_with(
            report.seed,
            shrunk.as_ref().map_or(&[][..], |s| &s.left_out[..]),
            name,
        );
        Failure {
            report,
            shrunk,
            replay,
            replay_with,
        }
    }

    /// `ZKRS_SIM_SEED`: one seed, its plan and every trace line printed.
    fn replay<F, Fut>(
        &self,
        seed: u64,
        skip: Vec<usize>,
        test: &F,
        started: Instant,
        name: Option<&str>,
    ) -> Summary
    where
        F: Fn(World) -> Fut,
        Fut: Future<Output = Result<(), Finding>> + Send + 'static,
    {
        let sim = (self.simulation)(seed)
            .skip_faults(skip.clone())
            .keep_trace(true);
        for fault in sim.plan() {
            println!("plan: {fault}");
        }
        let report = sim.run(test);
        for line in &report.trace {
            println!("{line}");
        }
        let simulated = report.simulated;
        let failures = if report.passed() {
            Vec::new()
        } else {
            vec![Failure {
                replay_with: replay_with(seed, &skip, name),
                report,
                shrunk: None,
                replay: None,
            }]
        };
        Summary {
            seeds: 1,
            failures,
            simulated,
            real: started.elapsed(),
            budget_ended: false,
        }
    }
}

/// `seeds`, if something ends them: seeds without end need a time budget.
fn bounded(seeds: Seeds, budget: Option<Duration>) -> Result<Seeds, RunnerError> {
    match (&seeds, budget) {
        (Seeds::From(first), None) => Err(RunnerError::Environment {
            variable: settings::SEEDS,
            value: format!("{first}.."),
            expected: "a range with an end, unless ZKRS_SIM_BUDGET (or Runner::budget) bounds \
                       the run",
        }),
        _ => Ok(seeds),
    }
}

/// The variables and the command line that replay `seed` with `skip` left out, in test
/// `name`.
fn replay_with(seed: u64, skip: &[usize], name: Option<&str>) -> String {
    let mut vars = format!("{}={seed}", settings::SEED);
    if !skip.is_empty() {
        let list: Vec<String> = skip.iter().map(usize::to_string).collect();
        vars.push_str(&format!(" {}={}", settings::SKIP, list.join(",")));
    }
    match name {
        Some(name) => format!("{vars} cargo test -- --exact {name} --nocapture"),
        None => vars,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FaultConfig;

    fn runner() -> Runner {
        Runner::new(|seed| Simulation::new(seed).faults(FaultConfig::none())).seeds(0..1)
    }

    #[test]
    fn a_build_without_exact_replay_is_refused_unless_allowed() {
        let mut refused = runner();
        refused.exact_replay = false;
        let err = refused.run(|_| async { Ok(()) }).unwrap_err();
        assert_eq!(err, RunnerError::InexactReplay);
        let mut allowed = runner().inexact_replay(true);
        allowed.exact_replay = false;
        assert!(allowed.run(|_| async { Ok(()) }).unwrap().passed());
    }

    #[test]
    fn seeds_without_end_need_a_budget() {
        let open = || Seeds::From(7);
        assert!(matches!(
            bounded(open(), None),
            Err(RunnerError::Environment { variable, .. }) if variable == settings::SEEDS
        ));
        assert_eq!(bounded(open(), Some(Duration::from_secs(1))), Ok(open()));
        assert_eq!(bounded(Seeds::Range(0..3), None), Ok(Seeds::Range(0..3)));
    }
}
