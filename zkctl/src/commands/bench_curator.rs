//! `bench lock|latch --curator`: Curator 5.4's side of the contended loop, in a JVM running
//! `tests/java/CuratorContentionBench.java` (built into zkctl, so the binary needs no source
//! tree), compiled and started through the test kit's `JavaPrograms` against Debian's
//! Curator jars, as the interop tests' peers are. It contends on the same server with the
//! same number of sessions and hand-offs as ours, times them inside the JVM, and prints them
//! on one line.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use zkrs_testkit::JavaPrograms;

use crate::args::Globals;
use crate::commands::bench_contention::Recipe;
use crate::commands::bench_timing::{Handoffs, Latencies};
use crate::failure::Failure;

/// The program's source.
const SOURCE: &str = include_str!("../../../tests/java/CuratorContentionBench.java");
/// Its class.
const CLASS: &str = "CuratorContentionBench";
/// The jars it needs (each `/usr/share/java/<name>.jar`, or `<name>-<version>.jar`), and
/// those added when present: guava's split-out class, a logger for Curator's warnings.
const REQUIRED_JARS: &[&str] = &[
    "curator-recipes",
    "curator-framework",
    "curator-client",
    "zookeeper",
    "zookeeper-jute",
    "guava",
    "slf4j-api",
];
const OPTIONAL_JARS: &[&str] = &["failureaccess", "slf4j-simple"];
/// The full JIT, a heap for many sessions, Curator's warnings on stderr.
const JVM: &[&str] = &[
    "-Xmx512m",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.logFile=System.err",
];
/// The JIT's warm-up: Curator's side runs unmeasured hand-offs for at least this long.
pub const JIT_WARMUP: Duration = Duration::from_secs(1);
/// How long the JVM may take in all (its own loop gives up after two minutes).
const DEADLINE: Duration = Duration::from_secs(180);
const INSTALL_HINT: &str = "--curator needs a JDK (javac) and Curator 5.4's jars: run \
     scripts/install-zookeeper.sh, or set ZKR_CURATOR_CLASSPATH / ZKR_JAVAC";

/// Compiles the program (once per content: the classes stay in the temporary folder).
fn compile() -> Result<JavaPrograms, String> {
    let classpath =
        JavaPrograms::debian_classpath(REQUIRED_JARS, OPTIONAL_JARS).map_err(|e| e.to_string())?;
    let base = std::env::temp_dir().join("zkctl-java");
    // The source goes to a folder of this process's own, so concurrent runs never read a
    // half-written file; the classes are shared by content.
    let folder = base.join(format!("source-{}", std::process::id()));
    let source: PathBuf = folder.join(format!("{CLASS}.java"));
    std::fs::create_dir_all(&folder)
        .and_then(|()| std::fs::write(&source, SOURCE))
        .map_err(|e| format!("writing {}: {e}", source.display()))?;
    let compiled = JavaPrograms::compile(&[source], &classpath, &base, "curator-contention-bench");
    let _ = std::fs::remove_dir_all(&folder);
    compiled.map_err(|e| e.to_string())
}

/// Runs Curator's `contenders` sessions on `recipe` at `path`: `warmup` hand-offs and at least
/// [`JIT_WARMUP`] unmeasured, then `rounds` measured.
pub async fn run(
    g: &Globals,
    recipe: Recipe,
    path: &str,
    contenders: usize,
    warmup: usize,
    rounds: usize,
) -> Result<Handoffs, Failure> {
    if g.tls.is_some() || g.sasl_digest.is_some() || g.kerberos.is_some() || !g.auth.is_empty() {
        return Err(Failure::Usage(
            "--curator connects without TLS or authentication; leave those flags out".into(),
        ));
    }
    let programs = tokio::task::spawn_blocking(compile)
        .await
        .map_err(|e| Failure::msg(format!("compiling Curator's side: {e}")))?
        .map_err(|e| Failure::msg(format!("{e}\n{INSTALL_HINT}")))?;
    let mut command = tokio::process::Command::from(programs.command(JVM, CLASS));
    command
        .arg(&g.server)
        .arg(g.session_timeout.as_millis().to_string())
        .arg(recipe.name())
        .arg(path)
        .arg(contenders.to_string())
        .arg(warmup.to_string())
        .arg(JIT_WARMUP.as_millis().to_string())
        .arg(rounds.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|e| Failure::msg(format!("starting {}: {e}", programs.java().display())))?;
    let output = tokio::time::timeout(DEADLINE, child.wait_with_output())
        .await
        .map_err(|_| Failure::msg(format!("Curator's side took over {DEADLINE:?}")))?
        .map_err(|e| Failure::msg(format!("running Curator's side: {e}")))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.lines().find_map(|l| l.strip_prefix("HANDOFFS ")) {
        Some(line) if output.status.success() => parse(line).ok_or_else(|| {
            Failure::msg(format!("Curator's side printed an unreadable line: {line}"))
        }),
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            Err(Failure::msg(format!(
                "Curator's side failed ({}): {} {}",
                output.status,
                stdout.trim(),
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )))
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
