//! SIGINT, SIGTERM and SIGHUP as a future, for the commands that must clean up before they
//! exit (a lock holder must stop its command before releasing; an ephemeral node's holder
//! closes its session so the node goes at once).
//!
//! Installing replaces the default "die at once" for the rest of the process, so only those
//! commands install it; the others keep the default.

use std::io;

use tokio::signal::unix::{signal, Signal, SignalKind};

/// A termination request to zkctl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terminate {
    /// The signal number (2, 15 or 1).
    pub number: u8,
    /// Its name.
    pub name: &'static str,
}

impl Terminate {
    /// The exit code shells use for a process ended by this signal (128 + N).
    pub fn exit_code(self) -> u8 {
        128 + self.number
    }
}

/// Listens for SIGINT, SIGTERM and SIGHUP.
#[derive(Debug)]
pub struct Shutdown {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Shutdown {
    /// Starts listening (needs a tokio runtime with signals enabled).
    pub fn install() -> io::Result<Shutdown> {
        Ok(Shutdown {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next termination request. Cancel-safe: a signal is not lost if this future is
    /// dropped (tokio keeps it pending).
    pub async fn recv(&mut self) -> Terminate {
        tokio::select! {
            _ = self.interrupt.recv() => Terminate { number: 2, name: "SIGINT" },
            _ = self.terminate.recv() => Terminate { number: 15, name: "SIGTERM" },
            _ = self.hangup.recv() => Terminate { number: 1, name: "SIGHUP" },
        }
    }
}
