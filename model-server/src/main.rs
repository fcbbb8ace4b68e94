//! `zkrs-model`: the ZooKeeper model (`zkrs-model`) as a program, for tests in any language.
//!
//! It serves a standalone server ([`TcpServer`]) or an ensemble ([`TcpEnsemble`]) on the
//! ports asked for, prints its settings on stderr and then the connect string as one line on
//! stdout (flushed: a script reads that line and goes), and stops on SIGINT or SIGTERM. The
//! model's core answers the four-letter words probes send (`ruok`, `srvr`, ...). See
//! `zkrs-model --help` ([`args::HELP`]).

#![forbid(unsafe_code)]

mod args;
mod banner;

use std::io::Write;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use zkrs_model::{TcpEnsemble, TcpServer};

use crate::args::{Command, Options, UsageError};

fn main() -> ExitCode {
    match args::parse(std::env::args_os().skip(1)) {
        Ok(Command::Serve(options)) => serve(&options),
        Ok(Command::Help) => {
            print!("{}", args::HELP);
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!(
                "zkrs-model {} (a ZooKeeper 3.8.0 model)",
                env!("CARGO_PKG_VERSION")
            );
            ExitCode::SUCCESS
        }
        Err(UsageError(message)) => {
            eprintln!("zkrs-model: {message} (see zkrs-model --help)");
            ExitCode::from(2)
        }
    }
}

/// What is served: one server, or an ensemble.
enum Served {
    Standalone(TcpServer),
    Ensemble(TcpEnsemble),
}

fn serve(options: &Options) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("zkrs-model: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        // Before anything is printed: a script may signal as soon as it read the line.
        let stop = match Stop::listen() {
            Ok(stop) => stop,
            Err(e) => {
                eprintln!("zkrs-model: cannot listen for signals: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut config = options.config();
        // Real wall-clock times in ctime/mtime (the model's core reads no clock itself).
        config.epoch_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let started = match options.addrs.as_slice() {
            [addr] => TcpServer::start_at(*addr, config)
                .await
                .map(Served::Standalone),
            addrs => TcpEnsemble::start_at(addrs, config)
                .await
                .map(Served::Ensemble),
        };
        let served = match started {
            Ok(served) => served,
            Err(e) => {
                let addrs: Vec<String> = options.addrs.iter().map(|a| a.to_string()).collect();
                eprintln!(
                    "zkrs-model: cannot listen on {}: {e} (--port 0 picks a free port)",
                    addrs.join(",")
                );
                return ExitCode::FAILURE;
            }
        };
        let (connect, listening) = match &served {
            Served::Standalone(s) => (s.connect_string(), vec![s.addr()]),
            Served::Ensemble(e) => (
                e.connect_string(),
                (0..options.addrs.len()).map(|m| e.addr(m)).collect(),
            ),
        };
        eprint!("{}", banner::settings(options, &listening));
        if let Some(warning) = banner::exposure(&listening) {
            eprint!("{warning}");
        }
        // The one line on stdout. A reader that went away is no reason to stop serving.
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{connect}");
        let _ = stdout.flush();
        drop(stdout);
        let signal = stop.received().await;
        match served {
            Served::Standalone(mut server) => server.stop().await,
            Served::Ensemble(ensemble) => drop(ensemble),
        }
        eprintln!("zkrs-model: stopped ({signal})");
        ExitCode::SUCCESS
    })
}

/// SIGINT and SIGTERM, listened for from the start.
struct Stop {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Stop {
    fn listen() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Stop {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Stop {})
        }
    }

    /// Waits for a signal; its name.
    async fn received(mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.terminate.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            // Elsewhere Ctrl-C only, listened for from here on.
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
