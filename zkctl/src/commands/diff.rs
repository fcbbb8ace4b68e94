//! `diff LEFT RIGHT`: the differences between two subtrees, or export files, as `export`
//! writes them (ephemeral nodes and `/zookeeper` left out).

use std::cmp::Ordering;
use std::io::Write;

use zkrs_client::{Client, ErrorCode};

use crate::commands::export_format::{path_order, Record};
use crate::commands::snapshot::{read_file, records, report_ephemerals};
use crate::failure::{Failure, Outcome};

/// Exit code of `diff` when the sides differ (as diff(1)).
pub const EXIT_DIFFERENT: u8 = 1;

/// One side's records, in path order: a ZooKeeper subtree (an argument starting with `/`)
/// or an export file (`file:NAME`, or any other argument).
async fn side(client: &Client, arg: &str) -> Result<Vec<Record>, Failure> {
    let file = match arg.strip_prefix("file:") {
        Some(file) => file,
        None if !arg.starts_with('/') => arg,
        None => {
            return match records(client, arg).await {
                Ok((records, ephemerals)) => {
                    report_ephemerals("diff", ephemerals);
                    Ok(records)
                }
                Err(Failure::Zk(e))
                    if e.code() == Some(ErrorCode::NoNode)
                        && std::path::Path::new(arg).is_file() =>
                {
                    Err(Failure::msg(format!(
                        "NoNode: {arg} (to compare the local file, write file:{arg})"
                    )))
                }
                Err(e) => Err(e),
            };
        }
    };
    let mut records = read_file(file)?;
    records.sort_by(|a, b| path_order(&a.path, &b.path));
    Ok(records)
}

/// The difference lines between two sorted record lists.
pub fn differences(left: &[Record], right: &[Record]) -> Vec<String> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < left.len() || j < right.len() {
        let order = match (left.get(i), right.get(j)) {
            (Some(l), Some(r)) => path_order(&l.path, &r.path),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                out.push(format!("only-left {}", left[i].path));
                i += 1;
            }
            Ordering::Greater => {
                out.push(format!("only-right {}", right[j].path));
                j += 1;
            }
            Ordering::Equal => {
                let (l, r) = (&left[i], &right[j]);
                if l.bytes() != r.bytes() {
                    out.push(format!("data {}", l.path));
                }
                if l.acl_set() != r.acl_set() {
                    out.push(format!("acl {}", l.path));
                }
                if (l.mode, l.ttl_ms) != (r.mode, r.ttl_ms) {
                    out.push(format!("mode {}", l.path));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Prints the differences; exit 0 when there are none, [`EXIT_DIFFERENT`] otherwise.
pub async fn run(client: &Client, left: &str, right: &str) -> Outcome {
    let l = side(client, left).await?;
    let r = side(client, right).await?;
    let lines = differences(&l, &r);
    let mut out = crate::output::stdout();
    for line in &lines {
        if crate::output_json::on() {
            // `KIND PATH`: the kind has no space, the path may.
            let (kind, path) = line.split_once(' ').unwrap_or((line, ""));
            crate::output_json::line(&mut out, &crate::json_records::Difference { kind, path })?;
        } else {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(if lines.is_empty() { 0 } else { EXIT_DIFFERENT })
}
