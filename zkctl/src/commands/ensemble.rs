//! `config` and `reconfig`: the ensemble's membership, read and changed.

use std::io::Write;

use zkrs_client::{Client, Reconfig};

use crate::args::{Change, ReconfigArgs};
use crate::failure::Outcome;

/// `config`: the configuration as ZooKeeper writes it, then a line break.
pub async fn config(client: &Client) -> Outcome {
    let config = client.get_config().await?.0;
    print(&config)
}

/// `reconfig`: changes the membership and prints the new configuration as `config` does.
pub async fn reconfig(client: &Client, a: &ReconfigArgs) -> Outcome {
    // Checked by the parser; read again here.
    let Change {
        add,
        remove,
        members,
    } = a.change()?;
    let mut change = if members.is_empty() {
        Reconfig::incremental()
    } else {
        Reconfig::bulk(members)
    };
    for spec in add {
        change = change.add_member(spec);
    }
    for id in remove {
        change = change.remove_member(id);
    }
    if let Some(version) = a.from_version {
        change = change.from_config(version);
    }
    let config = client.reconfig(&change).await?.0;
    print(&config)
}

/// The configuration as ZooKeeper writes it (text), or its JSON record.
fn print(config: &impl std::fmt::Display) -> Outcome {
    let mut out = crate::output::stdout();
    if crate::output_json::on() {
        let text = config.to_string();
        crate::output_json::line(&mut out, &crate::json_records::Config::parse(&text))?;
    } else {
        writeln!(out, "{config}")?;
    }
    out.flush()?;
    Ok(0)
}
