//! `-v`: the client's and the recipes' structured events (target `zkrs`) printed on stderr,
//! one line each, so an operator sees why a session was lost or who got a lock.
//!
//! A small `tracing` subscriber of our own rather than `tracing-subscriber`: zkctl prints
//! events only (the library emits no spans), in one fixed format, so a few lines do what
//! that crate's dozen dependencies would.

use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Prints events of the `zkr` target at `level` and above.
struct StderrEvents {
    level: Level,
    start: Instant,
}

/// Starts printing: `-v` shows connects, disconnects and recipe decisions (info and warn),
/// `-vv` adds connection attempts and lock details (debug).
pub fn enable(verbosity: u8) {
    let level = match verbosity {
        0 => return,
        1 => Level::INFO,
        _ => Level::DEBUG,
    };
    let subscriber = StderrEvents {
        level,
        start: Instant::now(),
    };
    // Only fails if one is already set, which zkctl never does twice.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

impl Subscriber for StderrEvents {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && *metadata.level() <= self.level && metadata.target() == "zkrs"
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(self.level.into())
    }

    fn event(&self, event: &Event<'_>) {
        let mut line = Line::default();
        event.record(&mut line);
        let elapsed = self.start.elapsed();
        let text = format!(
            "zkctl: {:>4}.{:03}s {:<5} {}{}\n",
            elapsed.as_secs(),
            elapsed.subsec_millis(),
            event.metadata().level(),
            line.message,
            line.fields
        );
        // One write per line, so lines from several threads do not interleave.
        let _ = crate::output::stderr().write_all(text.as_bytes());
    }

    // The library emits no spans; these keep the trait's contract without tracking any.
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// One event's message and ` name=value` fields.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
}
