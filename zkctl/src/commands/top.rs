//! `top`: a refreshing view of the server's figures, from its `mntr` four-letter word, with
//! rates between refreshes.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::args::{Globals, Word};
use crate::commands::server_words::{exchange, mntr};
use crate::failure::Outcome;
use crate::output_json;

/// The gauges shown as they are, with their labels.
const GAUGES: &[(&str, &str)] = &[
    ("zk_server_state", "state"),
    ("zk_num_alive_connections", "connections"),
    ("zk_outstanding_requests", "outstanding"),
    ("zk_znode_count", "znodes"),
    ("zk_watch_count", "watches"),
    ("zk_ephemerals_count", "ephemerals"),
    ("zk_approximate_data_size", "data bytes"),
    ("zk_avg_latency", "latency avg ms"),
    ("zk_max_latency", "latency max ms"),
];

/// The counters shown as rates per second since the last refresh.
const RATES: &[(&str, &str)] = &[
    ("zk_packets_received", "packets in/s"),
    ("zk_packets_sent", "packets out/s"),
];

/// Refreshes every `interval` until `count` refreshes (or forever).
pub async fn run(g: &Globals, interval: Duration, count: Option<u64>) -> Outcome {
    let redraw = std::io::stdout().is_terminal() && !output_json::on();
    let mut last: Option<(Instant, Map<String, Value>)> = None;
    let mut shown = 0u64;
    loop {
        let (server, reply) = exchange(g, Word::Mntr)?;
        let now = Instant::now();
        let fields: Map<String, Value> = mntr(&reply).into_iter().collect();
        let mut view = Map::new();
        view.insert("server".into(), json!(server));
        for (key, label) in GAUGES {
            if let Some(v) = fields.get(*key) {
                view.insert((*label).into(), v.clone());
            }
        }
        for (key, label) in RATES {
            let rate = last.as_ref().and_then(|(at, before)| {
                let (now_v, then_v) = (fields.get(*key)?.as_f64()?, before.get(*key)?.as_f64()?);
                let secs = now.duration_since(*at).as_secs_f64();
                (secs > 0.0).then(|| ((now_v - then_v).max(0.0) / secs).round())
            });
            view.insert((*label).into(), rate.map_or(Value::Null, |r| json!(r)));
        }
        print_view(&view, redraw)?;
        last = Some((now, fields));
        shown += 1;
        if count.is_some_and(|c| shown >= c) {
            return Ok(0);
        }
        tokio::time::sleep(interval).await;
    }
}

fn print_view(view: &Map<String, Value>, redraw: bool) -> std::io::Result<()> {
    let mut out = crate::output::stdout();
    if output_json::on() {
        output_json::line(&mut out, view)?;
        return out.flush();
    }
    if redraw {
        // Home, clear: the view stays in place. zkctl's own sequence, so written raw; the
        // server's strings below are escaped on the terminal.
        out.raw(b"\x1b[H\x1b[2J")?;
    }
    for (label, value) in view {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Null => "-".into(),
            other => other.to_string(),
        };
        writeln!(out, "{label:>15}  {text}")?;
    }
    if !redraw {
        writeln!(out)?;
    }
    out.flush()
}
