//! What the environment asks of a [`Runner`](crate::Runner): which seeds, how long, on how
//! many threads, or one seed to replay. Read once per run; a value that does not parse is an
//! error naming the variable, never ignored.

use std::ops::Range;
use std::time::Duration;

use crate::runner_error::RunnerError;

/// Seeds to run: `N` (a count from the runner's first seed), `A..B`, `A..` (until the time
/// budget ends) or `A,B,C`.
pub(crate) const SEEDS: &str = "ZKRS_SIM_SEEDS";
/// One seed to replay, every trace line printed.
pub(crate) const SEED: &str = "ZKRS_SIM_SEED";
/// With [`SEED`]: the faults to leave out (`3,5`), as a shrink printed them.
pub(crate) const SKIP: &str = "ZKRS_SIM_SKIP";
/// Real time after which no seed starts: `90` or `90s`, `5m`, `2h`.
pub(crate) const BUDGET: &str = "ZKRS_SIM_BUDGET";
/// Threads running seeds.
pub(crate) const JOBS: &str = "ZKRS_SIM_JOBS";

/// Which seeds a runner runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seeds {
    Range(Range<u64>),
    /// From this seed on, until the budget ends.
    From(u64),
    List(Vec<u64>),
}

impl Seeds {
    pub(crate) fn into_iter(self) -> Box<dyn Iterator<Item = u64> + Send> {
        match self {
            Seeds::Range(r) => Box::new(r),
            Seeds::From(first) => Box::new(first..),
            Seeds::List(list) => Box::new(list.into_iter()),
        }
    }
}

/// The environment's settings; `None` where it says nothing.
#[derive(Debug, Default)]
pub(crate) struct EnvSettings {
    pub(crate) seeds: Option<Seeds>,
    pub(crate) replay: Option<(u64, Vec<usize>)>,
    pub(crate) budget: Option<Duration>,
    pub(crate) jobs: Option<usize>,
}

impl EnvSettings {
    /// Reads the variables; `first` is the runner's own first seed (a count starts there).
    pub(crate) fn read(first: u64) -> Result<EnvSettings, RunnerError> {
        EnvSettings::from_lookup(first, |name| std::env::var(name).ok())
    }

    pub(crate) fn from_lookup(
        first: u64,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<EnvSettings, RunnerError> {
        let mut settings = EnvSettings::default();
        if let Some(v) = var(SEEDS) {
            settings.seeds = Some(parse_seeds(first, &v).ok_or_else(|| {
                bad(
                    SEEDS,
                    &v,
                    "a count (100), a range (100..200, 100..), or a list (3,17,42)",
                )
            })?);
        }
        if let Some(v) = var(SEED) {
            let seed = v
                .trim()
                .parse()
                .map_err(|_| bad(SEED, &v, "one seed (42)"))?;
            let skip = match var(SKIP) {
                Some(list) => parse_list(&list)
                    .ok_or_else(|| bad(SKIP, &list, "fault numbers (3,5)"))?
                    .into_iter()
                    .map(|n| n as usize)
                    .collect(),
                None => Vec::new(),
            };
            settings.replay = Some((seed, skip));
        }
        if let Some(v) = var(BUDGET) {
            settings.budget = Some(
                parse_duration(&v).ok_or_else(|| bad(BUDGET, &v, "seconds (90, 90s, 5m, 2h)"))?,
            );
        }
        if let Some(v) = var(JOBS) {
            settings.jobs = Some(
                v.trim()
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad(JOBS, &v, "a number of threads, at least 1"))?,
            );
        }
        Ok(settings)
    }
}

fn bad(variable: &'static str, value: &str, expected: &'static str) -> RunnerError {
    RunnerError::Environment {
        variable,
        value: value.to_owned(),
        expected,
    }
}

fn parse_seeds(first: u64, text: &str) -> Option<Seeds> {
    let text = text.trim();
    if let Some((a, b)) = text.split_once("..") {
        let a: u64 = a.trim().parse().ok()?;
        let b = b.trim();
        if b.is_empty() {
            return Some(Seeds::From(a));
        }
        let b: u64 = b.parse().ok()?;
        return (a < b).then_some(Seeds::Range(a..b));
    }
    if text.contains(',') {
        return parse_list(text).map(Seeds::List);
    }
    let count: u64 = text.parse().ok()?;
    Some(Seeds::Range(first..first.checked_add(count)?))
}

fn parse_list(text: &str) -> Option<Vec<u64>> {
    text.split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().ok())
        .collect()
}

fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = number.parse().ok()?;
    let seconds = match unit.trim() {
        "s" => n,
        "m" => n.checked_mul(60)?,
        "h" => n.checked_mul(3600)?,
        _ => return None,
    };
    Some(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<EnvSettings, RunnerError> {
        EnvSettings::from_lookup(10, |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn each_form_of_the_variables_reads() {
        let s = read(&[]).unwrap();
        assert!(s.seeds.is_none() && s.replay.is_none() && s.budget.is_none());
        assert_eq!(
            read(&[(SEEDS, "5")]).unwrap().seeds,
            Some(Seeds::Range(10..15))
        );
        assert_eq!(
            read(&[(SEEDS, "100..200")]).unwrap().seeds,
            Some(Seeds::Range(100..200))
        );
        assert_eq!(read(&[(SEEDS, "7..")]).unwrap().seeds, Some(Seeds::From(7)));
        assert_eq!(
            read(&[(SEEDS, "3, 17,42")]).unwrap().seeds,
            Some(Seeds::List(vec![3, 17, 42]))
        );
        let s = read(&[(SEED, "42"), (SKIP, "3,5"), (BUDGET, "5m"), (JOBS, "2")]).unwrap();
        assert_eq!(s.replay, Some((42, vec![3, 5])));
        assert_eq!(s.budget, Some(Duration::from_secs(300)));
        assert_eq!(s.jobs, Some(2));
        assert_eq!(
            read(&[(BUDGET, "90")]).unwrap().budget,
            Some(Duration::from_secs(90))
        );
    }

    #[test]
    fn a_value_that_does_not_parse_names_its_variable() {
        for (name, value) in [
            (SEEDS, "many"),
            (SEEDS, "9..3"),
            (SEED, "x"),
            (BUDGET, "5 fortnights"),
            (JOBS, "0"),
        ] {
            match read(&[(name, value)]) {
                Err(RunnerError::Environment {
                    variable, value: v, ..
                }) => assert_eq!((variable, v.as_str()), (name, value)),
                other => panic!("{name}={value}: {other:?}"),
            }
        }
    }
}
