//! Structured events for operators, through the `tracing` crate when the `tracing` feature
//! is on (off by default: then these expand to nothing and cost nothing).
//!
//! Events use the target `zkrs` and these fields: `host` (`name:port`), `session` (the
//! session id in hex), `timeout_ms`, `error` (the cause of a lost connection), `path`.

/// `__log!(info, field = value, ...; "message")` forwards to `tracing::info!` (or `warn`,
/// `debug`) with the target `zkrs`, when the `tracing` feature is on. For the workspace's
/// crates (its name says so: exported macros live at the crate root), with no promise.
#[doc(hidden)]
#[macro_export]
macro_rules! __log {
    ($level:ident, $($arg:tt)+) => {{
        // Checked in the calling crate: each has a `tracing` feature that turns on this one's.
        #[cfg(feature = "tracing")]
        {
            $crate::__private::tracing::$level!(target: "zkrs", $($arg)+);
        }
    }};
}
