//! `counter PATH get|add N|set N|cas OLD NEW [--int]`: Curator's counters from a shell. An
//! 8-byte `DistributedAtomicLong` by default, a 4-byte `SharedCount` with `--int`.

use std::time::Duration;

use zkrs_client::Client;
use zkrs_recipes::counter::{DistributedAtomicLong, SharedCount};
use zkrs_recipes::framework::RetryPolicy;

use crate::args::{CounterAction, Globals};
use crate::connection::{close, connect};
use crate::failure::{Failure, Outcome, EXIT_ERROR};
use crate::output::say;

/// Runs the action; prints the value after it.
pub async fn run(g: &Globals, path: &str, action: CounterAction, int: bool) -> Outcome {
    zkrs_client::validate_path(path)?;
    let client = connect(g).await?;
    let result = if int {
        count(&client, path, action).await
    } else {
        long(&client, path, action).await
    };
    close(&client).await;
    let (value, applied) = result?;
    if crate::output_json::on() {
        let record = crate::json_records::Counter { path, value };
        crate::output_json::say(&record).map_err(Failure::from)?;
    } else {
        say(value).map_err(Failure::from)?;
    }
    match action {
        CounterAction::Cas(old, _) if !applied => Err(Failure::Message(
            format!("{path}: not set: the value was not {old} (the value read is printed)"),
            EXIT_ERROR,
        )),
        _ if !applied => Err(Failure::msg(format!("{path}: the change did not apply"))),
        _ => Ok(0),
    }
}

/// Contention is retried until the change applies: a shell user asked for it.
fn retry() -> RetryPolicy {
    RetryPolicy::Forever {
        sleep: Duration::from_millis(5),
    }
}

async fn long(client: &Client, path: &str, action: CounterAction) -> Result<(i64, bool), Failure> {
    let counter = DistributedAtomicLong::builder(client, path)
        .retry(retry())
        .build()?;
    Ok(match action {
        CounterAction::Get => (counter.get().await?.post_value, true),
        CounterAction::Add(n) => {
            let r = counter.add(n).await?;
            (r.post_value, r.succeeded)
        }
        CounterAction::Set(n) => {
            counter.force_set(n).await?;
            (n, true)
        }
        CounterAction::Cas(old, new) => {
            let r = counter.compare_and_set(old, new).await?;
            (r.post_value, r.succeeded)
        }
    })
}

async fn count(client: &Client, path: &str, action: CounterAction) -> Result<(i64, bool), Failure> {
    let narrow =
        |n: i64| i32::try_from(n).map_err(|_| Failure::msg(format!("{n} is not a 32-bit count")));
    let count = SharedCount::builder(client, path).start()?;
    count.initialized().await?;
    let result = match action {
        CounterAction::Get => (count.count(), true),
        CounterAction::Add(n) => {
            let n = narrow(n)?;
            loop {
                let seen = count.versioned_value();
                let next = seen.value.wrapping_add(n);
                if count.try_set_count(&seen, next).await? {
                    break (next, true);
                }
            }
        }
        CounterAction::Set(n) => {
            let n = narrow(n)?;
            count.set_count(n).await?;
            (n, true)
        }
        CounterAction::Cas(old, new) => {
            let (old, new) = (narrow(old)?, narrow(new)?);
            let seen = count.versioned_value();
            if seen.value == old && count.try_set_count(&seen, new).await? {
                (new, true)
            } else {
                (count.count(), false)
            }
        }
    };
    count.close().await;
    Ok((i64::from(result.0), result.1))
}
