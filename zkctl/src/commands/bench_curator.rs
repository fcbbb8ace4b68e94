//! `bench lock|latch --curator`: Curator 5.4's side of the contended loop, a JVM program
//! (`tests/java/CuratorContentionBench.java`) that `zkctl-bench` compiles and starts through
//! the test kit's `JavaPrograms` ([`crate::lab::Lab::curator_side`]); the shipped zkctl has
//! no test kit, and refuses `--curator`. It contends on the same server with the same number
//! of sessions as ours, one chunk of hand-offs (or of uncontended cycles, each locker on a
//! lock of its own) at a time when told on stdin (chunks alternate with ours), times them
//! inside the JVM, and answers each on one line.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::args::Globals;
use crate::commands::bench_contention::Recipe;
use crate::commands::bench_timing::{Handoffs, Latencies};
use crate::failure::Failure;
use crate::lab;

/// The JIT's warm-up: Curator's side runs unmeasured hand-offs for at least this long.
pub const JIT_WARMUP: Duration = Duration::from_secs(1);
/// How long the JVM may take to start and connect, or to answer one chunk (its own loop
/// gives up after two minutes).
const DEADLINE: Duration = Duration::from_secs(180);

/// Curator's side, running: its sessions connected, waiting for a chunk to run. Killed when
/// dropped.
pub struct CuratorSide {
    /// Its sessions.
    sessions: usize,
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl CuratorSide {
    /// Compiles and starts the program: `contenders` Curator sessions on `recipe` at `path`.
    pub async fn start(
        g: &Globals,
        recipe: Recipe,
        path: &str,
        contenders: usize,
    ) -> Result<CuratorSide, Failure> {
        if g.tls.is_some() || g.sasl_digest.is_some() || g.kerberos.is_some() || !g.auth.is_empty()
        {
            return Err(Failure::Usage(
                "--curator connects without TLS or authentication; leave those flags out".into(),
            ));
        }
        let Some(curator_side) = lab::get().curator_side else {
            return Err(Failure::Usage(lab::needs_bench("--curator")));
        };
        let mut command = tokio::task::spawn_blocking(curator_side)
            .await
            .map_err(|e| Failure::msg(format!("compiling Curator's side: {e}")))?
            .map(tokio::process::Command::from)
            .map_err(Failure::msg)?;
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        command
            .arg(&g.server)
            .arg(g.session_timeout.as_millis().to_string())
            .arg(recipe.name())
            .arg(path)
            .arg(contenders.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // Curator's warnings (and the JVM's) pass through.
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .map_err(|e| Failure::msg(format!("starting {program}: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Failure::msg("Curator's side has no pipes"));
        };
        let mut side = CuratorSide {
            sessions: contenders,
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
        };
        match side.answer().await? {
            line if line == "READY" => Ok(side),
            other => Err(side.failed(&other).await),
        }
    }

    /// The next line the program prints, at most [`DEADLINE`] from now.
    async fn answer(&mut self) -> Result<String, Failure> {
        match tokio::time::timeout(DEADLINE, self.stdout.next_line()).await {
            Err(_) => Err(Failure::msg(format!(
                "Curator's side did not answer within {DEADLINE:?}"
            ))),
            Ok(Err(e)) => Err(Failure::msg(format!("reading Curator's side: {e}"))),
            Ok(Ok(Some(line))) => Ok(line),
            Ok(Ok(None)) => Ok(String::new()),
        }
    }

    /// The failure for an unexpected answer (`ERROR ...`, or the end of its output).
    async fn failed(&mut self, line: &str) -> Failure {
        let _ = self.child.start_kill();
        let status = match tokio::time::timeout(DEADLINE, self.child.wait()).await {
            Ok(Ok(status)) => status.to_string(),
            _ => "no exit status".to_string(),
        };
        let what = if line.is_empty() { "no answer" } else { line };
        Failure::msg(format!("Curator's side failed ({status}): {what}"))
    }

    /// One chunk: `warmup` hand-offs and at least `warmup_time` unmeasured, then `rounds`.
    pub async fn chunk(
        &mut self,
        warmup: usize,
        warmup_time: Duration,
        rounds: usize,
    ) -> Result<Handoffs, Failure> {
        let command = format!("run {warmup} {} {rounds}", warmup_time.as_millis());
        self.ask(&command, "HANDOFFS ").await
    }

    /// One chunk of uncontended cycles: `lockers` threads on the first `sessions` sessions
    /// (at most the side's own), each on a lock (latch) of its own, `warmup` cycles and at
    /// least `warmup_time` unmeasured, then `cycles`; the latencies are the cycles' and the
    /// window their wall time.
    pub async fn cycles(
        &mut self,
        sessions: usize,
        lockers: usize,
        warmup: usize,
        warmup_time: Duration,
        cycles: usize,
    ) -> Result<Handoffs, Failure> {
        let sessions = sessions.clamp(1, self.sessions);
        let command = format!(
            "cycles {sessions} {lockers} {warmup} {} {cycles}",
            warmup_time.as_millis()
        );
        self.ask(&command, "CYCLES ").await
    }

    /// Sends one command and reads its answer, which starts with `answer`.
    async fn ask(&mut self, command: &str, answer: &str) -> Result<Handoffs, Failure> {
        if let Err(e) = self
            .stdin
            .write_all(format!("{command}\n").as_bytes())
            .await
        {
            return Err(Failure::msg(format!("writing to Curator's side: {e}")));
        }
        let line = self.answer().await?;
        match line.strip_prefix(answer) {
            Some(figures) => parse(figures).ok_or_else(|| {
                Failure::msg(format!("Curator's side printed an unreadable line: {line}"))
            }),
            None => Err(self.failed(&line).await),
        }
    }

    /// Tells the program to close its sessions and waits for it to exit.
    pub async fn close(mut self) {
        let _ = self.stdin.write_all(b"exit\n").await;
        if tokio::time::timeout(DEADLINE, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.start_kill();
        }
    }
}

/// `window_ns W latencies_ns L1,L2,...`
fn parse(line: &str) -> Option<Handoffs> {
    let mut words = line.split(' ');
    let window = match (words.next()?, words.next()?) {
        ("window_ns", w) => Duration::from_nanos(w.parse().ok()?),
        _ => return None,
    };
    let latencies = match (words.next()?, words.next().unwrap_or("")) {
        ("latencies_ns", "") => Vec::new(),
        ("latencies_ns", all) => all
            .split(',')
            .map(|l| l.parse().ok())
            .collect::<Option<Vec<u64>>>()?,
        _ => return None,
    };
    Some(Handoffs {
        latencies: Latencies::new(latencies),
        window,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_line_is_read() {
        let run = parse("window_ns 2000000000 latencies_ns 300000,100000,200000").unwrap();
        assert_eq!(run.window, Duration::from_secs(2));
        assert_eq!(run.latencies.len(), 3);
        assert_eq!(run.latencies.percentile_us(0.5), 200);
        assert_eq!(run.rate(), 1.5);
        assert!(parse("window_ns x latencies_ns 1").is_none());
        assert!(parse("latencies_ns 1 window_ns 2").is_none());
        assert!(parse("window_ns 1 latencies_ns 1,,2").is_none());
    }
}
