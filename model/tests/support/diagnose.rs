//! What both servers held when a script stopped on a wait rather than on a difference (a
//! server that did not answer, a session that did not expire): the steps' durations on each
//! side, the sessions each run made, the real server's own view (`cons`, `dump`, `mntr`, its
//! log's last lines) and the model's live sessions.

use std::net::SocketAddr;
use std::time::Duration;

use zkrs_model::TcpServer;
use zkrs_testkit::{four_letter_word, TestingServer};

/// How long each side took over one step.
#[derive(Debug, Clone, Copy)]
pub struct StepTime {
    pub step: usize,
    pub model: Duration,
    pub real: Duration,
}

/// Prints what both servers held; `model_sessions` and `real_sessions` are the runs' own
/// lists (session ids in order of creation).
pub fn report(
    real: &TestingServer,
    model: &TcpServer,
    runtime: &tokio::runtime::Runtime,
    times: &[StepTime],
    model_sessions: &[i64],
    real_sessions: &[i64],
) {
    print_times(times);
    eprintln!("--- the model: run's sessions {}", hex(model_sessions));
    let live = runtime.block_on(model.with_server(|s, _| s.session_ids()));
    eprintln!(
        "    live sessions: {}",
        live.map_or("?".into(), |l| hex(&l))
    );
    eprintln!("--- ZooKeeper: run's sessions {}", hex(real_sessions));
    word(real.address(), "cons");
    word(real.address(), "dump");
    word(real.address(), "mntr");
    let log = std::fs::read_to_string(real.log_path()).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    eprintln!("--- ZooKeeper's log, last lines:");
    for line in &lines[lines.len().saturating_sub(40)..] {
        eprintln!("  {line}");
    }
}

/// The durations of the script's last steps on each side: a stall of one server shows here.
pub fn print_times(times: &[StepTime]) {
    let from = times.len().saturating_sub(8);
    eprintln!("--- the script's last steps (model, real):");
    for t in &times[from..] {
        eprintln!("  step {}: {:?}, {:?}", t.step, t.model, t.real);
    }
}

fn word(addr: SocketAddr, w: &str) {
    match four_letter_word(addr, w, Duration::from_secs(10)) {
        Ok(answer) => eprintln!("--- ZooKeeper `{w}`:\n{answer}"),
        Err(e) => eprintln!("--- ZooKeeper `{w}`: {e}"),
    }
}

fn hex(ids: &[i64]) -> String {
    let shown: Vec<String> = ids.iter().map(|i| format!("{i:#x}")).collect();
    shown.join(" ")
}
