//! `server WORD [--json]`: ZooKeeper's four-letter words (`ruok`, `srvr`, `mntr`, ...) over
//! the client port: a plain TCP connection, the four letters, the answer read to its end
//! (at most [`MAX_REPLY`] bytes).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use serde_json::{json, Number, Value};
use zkrs_client::ConnectString;

use crate::args::{Globals, Word};
use crate::failure::{Failure, Outcome};

/// How long the exchange may take when `--connect-timeout` is not given.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest answer zkctl reads. Whatever listens at the address given may send without
/// end, and an answer is held whole (it is parsed, or printed after the whitelist check): so
/// zkctl fails naming the limit rather than grow without bound until the timeout. 16 MiB is
/// thousands of times `mntr`, `srvr`, `conf` or `envi`; `cons`, `wchc` and `wchp` grow with
/// connections and watches (a line of some 50 to 150 bytes each), and reach it only past a
/// hundred thousand of those, more than one server holds.
const MAX_REPLY: usize = 16 << 20;

/// What a server answers for a word left out of `4lw.commands.whitelist`.
const NOT_WHITELISTED: &str = "is not executed because it is not in the whitelist.";

/// Sends the word to the first host of the connect string and prints the answer.
pub fn run(g: &Globals, word: Word, json: bool) -> Outcome {
    let (server, reply) = exchange(g, word)?;
    let letters = word.letters();
    let mut out = crate::output::stdout();
    match (word, json) {
        (Word::Mntr, true) => {
            for (key, value) in mntr(&reply) {
                writeln!(out, "{}", json!({ "key": key, "value": value }))?;
            }
        }
        (_, true) => writeln!(
            out,
            "{}",
            json!({ "server": server, "word": letters, "reply": reply })
        )?,
        (_, false) => {
            out.write_all(reply.as_bytes())?;
            if !reply.ends_with('\n') {
                writeln!(out)?;
            }
        }
    }
    out.flush()?;
    Ok(0)
}

/// Asks the first host of the connect string for `word`: the host asked and its answer, or
/// a one-line failure (a refusal, no answer).
pub fn exchange(g: &Globals, word: Word) -> Result<(String, String), Failure> {
    if g.tls.is_some() {
        // ZooKeeper answers four-letter words on its plain client port only.
        return Err(Failure::Usage(
            "'server' sends the word over plain TCP: give the plain client port, without --tls"
                .into(),
        ));
    }
    let hosts = ConnectString::parse(&g.server)?.hosts;
    let (host, port) = hosts.first().expect("a connect string has a host");
    let server = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let timeout = g.connect_timeout.unwrap_or(DEFAULT_TIMEOUT);
    let letters = word.letters();
    let reply = ask(&server, letters, timeout)
        .map_err(|e| Failure::msg(format!("{letters} to {server}: {e}")))?;
    check(letters, &server, &reply)?;
    Ok((server, reply))
}

/// The server's refusals, as one-line errors (exit 1).
fn check(letters: &str, server: &str, reply: &str) -> Result<(), Failure> {
    let first = reply.lines().next().unwrap_or("").trim();
    if first.ends_with(NOT_WHITELISTED) {
        return Err(Failure::msg(format!(
            "{server} does not allow '{letters}': it is not in the server's \
             4lw.commands.whitelist"
        )));
    }
    if first.starts_with("This ZooKeeper instance is not currently serving requests") {
        return Err(Failure::msg(format!("{server}: {first}")));
    }
    if letters == "ruok" && first != "imok" {
        return Err(Failure::msg(format!(
            "{server} did not answer imok to ruok (it is not serving)"
        )));
    }
    Ok(())
}

/// Connects, sends, and reads until the server closes the connection, within `timeout` and
/// [`MAX_REPLY`] bytes.
fn ask(server: &str, letters: &str, timeout: Duration) -> std::io::Result<String> {
    let deadline = Instant::now() + timeout;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {} ms", timeout.as_millis()),
                )
            })
    };
    let addrs: Vec<SocketAddr> = server.to_socket_addrs()?.collect();
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, left()?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = e,
        }
    }
    let mut stream = stream.ok_or(last)?;
    stream.set_write_timeout(Some(left()?))?;
    stream.write_all(letters.as_bytes())?;
    // Half-close, as ZooKeeper's FourLetterWordMain and nc do; the server answers and closes.
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        stream.set_read_timeout(Some(left()?))?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) if answer.len() + n > MAX_REPLY => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the answer is longer than {MAX_REPLY} bytes (16 MiB), zkctl's limit for \
                         a four-letter word"
                    ),
                ))
            }
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// `mntr`'s `KEY<TAB>VALUE` lines as fields, in the server's order; a value that is a
/// number (integer or decimal) becomes a JSON number.
pub fn mntr(reply: &str) -> Vec<(String, Value)> {
    reply
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(key, value)| (key.trim().to_string(), number_or_text(value.trim())))
        .collect()
}

fn number_or_text(text: &str) -> Value {
    if let Ok(n) = text.parse::<i64>() {
        return Value::from(n);
    }
    if let Ok(n) = text.parse::<u64>() {
        return Value::from(n);
    }
    let numeric = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    match text.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(n) if numeric => Value::Number(n),
        _ => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mntr_fields() {
        let reply = "zk_version\t3.8.0-abc, built on 2022\nzk_avg_latency\t0.25\n\
                     zk_max_latency\t7\nzk_server_state\tstandalone\nzk_nan\tNaN\n";
        let fields = mntr(reply);
        assert_eq!(fields[0].1, Value::from("3.8.0-abc, built on 2022"));
        assert_eq!(fields[1].1, json!(0.25));
        assert_eq!(fields[2].1, json!(7));
        assert_eq!(fields[3].1, json!("standalone"));
        assert_eq!(fields[4].1, json!("NaN"));
    }
}
