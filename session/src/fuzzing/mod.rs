//! The body of the `session` fuzz target (`fuzz/fuzz_targets/session.rs`), kept in the library
//! so the seed corpus is replayed by an ordinary `cargo test` on stable
//! (`session/tests/session_fuzz_seeds.rs`). Built only with the `fuzzing` feature.
//!
//! [`session`] builds a `Session<u32>` on virtual time and reads its input as a script: each
//! step is an action byte and its arguments (submit a request, feed raw or well-formed server
//! bytes, let time pass, connect, disconnect, close, forget a watcher, add an identity, ...).
//! A small server model reads what the core transmits and answers the oldest request it got,
//! like a real server. After every step the events are drained and these invariants checked
//! (a failed one panics, and is a bug in the core):
//!
//! - no panic anywhere;
//! - every token is answered at most once, and only tokens that were handed in;
//! - after [`Event::Closed`](crate::Event::Closed) nothing more is emitted, except the
//!   immediate answers to calls made after it; `Closed` comes once;
//! - `in_flight()` never exceeds the requests handed in and not answered yet, plus the
//!   requests the core sends by itself (closeSession, removeWatches);
//! - no busy loop: after `handle_timeout(now)`, `poll_timeout()` is later than `now`;
//! - at most one connection at a time: no `Connect` until the previous one was ended by a
//!   `Disconnect`; hosts are in range;
//! - the client's bytes are well-formed: a ConnectRequest first on each connection, then
//!   request frames with a known opcode, special xids only for ping/auth/setWatches, and
//!   ordinary xids strictly increasing over the whole session;
//! - a one-shot watcher fires at most once, and never after `WatcherUnused`;
//! - a notification reaches a [`WatcherGroup`](crate::WatcherGroup) once: reads with `& 0x20`
//!   register through one group, and no run of equal watch events (one notification) gives
//!   it two `Watch` events;
//! - the abandoned-watch sweep ([`Session::sweep_abandoned`](crate::Session::sweep_abandoned),
//!   called after every submit that hands in a watcher, with every third watcher's receiver
//!   taken as dropped) forgets only abandoned one-shot watchers;
//! - a session that was reported `Lost` never comes back in a later state change, and state
//!   changes follow the documented transitions (`Suspended` only from a connected state, ...);
//! - a successful reply's body decodes as its request's reply record;
//! - SetWatches comes before any ordinary request on a connection;
//! - at the end of the script, `close` then time passing answers every token exactly once, and
//!   every watcher handed in was either released (`WatcherUnused`) or told something.
//!
//! [`session`] looks past the known bugs listed in [`KNOWN_BUGS`] (so that the fuzzer finds
//! new ones); [`session_strict`] does not; [`session_trace`] prints what a script does.
//!
//! Script format (once the input runs out, missing bytes read as 0): three bytes of settings
//! (flags: `& 3` + 1 hosts, `& 4` read-only allowed, `& 8` one identity in the config, `& 16`
//! 8-byte SetWatches batches, `& 32` 64-byte frame limit; session timeout in 100 ms units minus
//! one; host shuffle seed), then actions, `byte % 16`:
//!
//! | byte | action | argument bytes |
//! | --- | --- | --- |
//! | 0 | submit | opcode selector (`& 16`: with a watch, `& 32` on a read: through the group), path index |
//! | 1 | raw server bytes | count (`% 64`), the bytes |
//! | 2 | server answers its oldest request | mode (`& 15`: 0-7 ok, 8-9 NoNode, 10 error, 11 garbage body, 12 truncated body, 13-15 extra bytes; `>> 6`: zxid), more by mode |
//! | 3 | server connect response | flags (`& 7` timeout, `& 0x18` session: resume/0/new, `& 0x20` no read-only byte, `& 0x40` read-only, `& 0x80` truncated) |
//! | 4 | server notification | event type and path |
//! | 5 | time passes, then `handle_timeout` if due | `>> 6`: ms, ×50 ms, s, to the next deadline; `& 63`: amount |
//! | 6 | `handle_timeout` now | |
//! | 7, 8, 9 | `handle_connected`, `handle_closed`, `handle_closed` with an error | |
//! | 10 | `close` (`& 16`: with a token) | |
//! | 11 | `forget_watcher` | watcher index |
//! | 12 | `add_auth` (`& 16`: with a token) | |
//! | 13 | `handle_read_write_found` | host |
//! | 14 | stall writes / write some (when stalled) | (when stalled) u16 byte count |
//! | 15 | server answers its oldest request in two reads | split point, then as 2 |

mod actions;
mod checks;
mod harness;
mod input;
mod known_bugs;
mod script;
mod server;

pub use known_bugs::{KnownBugs, KNOWN_BUGS};

use harness::Harness;
use known_bugs::STRICT;

/// [`session`], where action 13 may also change the host list
/// ([`Session::update_hosts`](crate::Session::update_hosts)) or detach
/// ([`Session::detach`](crate::Session::detach)): the same invariants must hold.
pub fn session_with_host_updates(data: &[u8]) {
    let mut h = Harness::new(data, KNOWN_BUGS);
    h.host_updates = true;
    let mut steps = 0;
    while !h.input.is_empty() && steps < 4096 {
        h.step();
        steps += 1;
    }
    h.finish();
}

/// The `session` fuzz target: see the module documentation.
pub fn session(data: &[u8]) {
    run(data, KNOWN_BUGS, None);
}

/// [`session`] without looking past any known bug (see [`KnownBugs`]).
pub fn session_strict(data: &[u8]) {
    run(data, STRICT, None);
}

/// Runs [`session_strict`] and returns what happened, one line per action and event (to read
/// a reproducer). Panics like it does; the lines up to then are printed first.
pub fn session_trace(data: &[u8]) -> Vec<String> {
    run(data, STRICT, Some(Vec::new())).unwrap_or_default()
}

fn run(data: &[u8], tolerate: KnownBugs, trace: Option<Vec<String>>) -> Option<Vec<String>> {
    let mut h = Harness::new(data, tolerate);
    let script = |h: &mut Harness<'_>| {
        let mut steps = 0;
        while !h.input.is_empty() && steps < 4096 {
            h.step();
            steps += 1;
        }
        h.finish();
    };
    if trace.is_none() {
        script(&mut h);
        return None;
    }
    h.trace = trace;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| script(&mut h)));
    if let Err(panic) = outcome {
        for line in h.trace.iter().flatten() {
            eprintln!("{line}");
        }
        std::panic::resume_unwind(panic);
    }
    h.trace.take()
}
