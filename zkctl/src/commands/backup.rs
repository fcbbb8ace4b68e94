//! `export` and `import` (the format: [`super::export_format`]); [`run`] also dispatches
//! `diff`, `find` and `du`.

use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::time::Duration;

use zkrs_client::{AclEntry, Client, CreateMode, CreateOptions, Op};
use zkrs_recipes::framework::parent;

use crate::args::backup::{BackupSub, Existing};
use crate::commands::export_format::{path_order, under, Mode, Record};
use crate::commands::snapshot::{persistent_nodes, read_file, record, report_ephemerals};
use crate::commands::walk::{windowed, WINDOW};
use crate::commands::{diff, du, find};
use crate::failure::{Failure, Outcome};
use crate::pipeline;

/// The most bytes one import transaction carries (estimated as sent): half of ZooKeeper's
/// default `jute.maxbuffer` (1 MiB), so a chroot or the frame's headers never push it over.
pub const MAX_BATCH_BYTES: usize = 512 * 1024;
/// The most operations in one import transaction.
pub const MAX_BATCH_OPS: usize = 2000;
/// How many transactions an import keeps in flight.
const BATCHES_IN_FLIGHT: usize = 8;

/// Runs a backup or search command on a connected client.
pub async fn run(client: &Client, command: BackupSub) -> Outcome {
    match command {
        BackupSub::Export { path, out } => export(client, &path, out.as_deref()).await,
        BackupSub::Import {
            file,
            at,
            existing,
            dry_run,
        } => import(client, &file, &at, existing, dry_run).await,
        BackupSub::Diff { left, right } => diff::run(client, &left, &right).await,
        BackupSub::Find { path, name, data } => {
            find::run(client, &path, name.as_deref(), data.as_deref()).await
        }
        BackupSub::Du { path } => du::run(client, &path).await,
    }
}

async fn export(client: &Client, root: &str, out: Option<&str>) -> Outcome {
    // Each node becomes its line and is dropped as it is written: the tree is held once.
    let (nodes, ephemerals) = persistent_nodes(client, root).await?;
    // The file is made only once the tree is read: a failed export leaves no partial file.
    let sink: Box<dyn Write> = match out {
        Some(file) => Box::new(private_file(file)?),
        None => Box::new(crate::output::stdout()),
    };
    let mut sink = BufWriter::with_capacity(1 << 16, sink);
    for node in nodes {
        sink.write_all(record(root, node).to_line().as_bytes())?;
        sink.write_all(b"\n")?;
    }
    sink.flush()?;
    report_ephemerals("export", ephemerals);
    Ok(0)
}

/// `export --out FILE`: created 0600 (the ACLs hold digest ids, hashes of passwords), an
/// existing file truncated and made 0600 too, and never through a symlink (`O_NOFOLLOW`:
/// a link planted at FILE would send the export wherever it points).
fn private_file(file: &str) -> Result<std::fs::File, Failure> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file);
    let file_handle = match opened {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Failure::msg(format!(
                "cannot write {file}: it is a symbolic link (zkctl does not follow one there; \
                 name the file itself)"
            )))
        }
        Err(e) => return Err(Failure::msg(format!("cannot write {file}: {e}"))),
    };
    let is_file = file_handle.metadata().map(|m| m.is_file()).unwrap_or(false);
    if is_file {
        file_handle
            .set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Failure::msg(format!("cannot make {file} private (0600): {e}")))?;
    }
    Ok(file_handle)
}

/// Checks that the records form one tree: a root line, no path twice, every other node's
/// parent present. Sorts them in path order (parents first).
fn check_tree(records: &mut [Record], file: &str) -> Result<(), Failure> {
    records.sort_by(|a, b| path_order(&a.path, &b.path));
    if records.first().map(|r| r.path.as_str()) != Some("/") {
        return Err(Failure::msg(format!(
            "{file}: no line for the export's root (path \"/\")"
        )));
    }
    let mut seen: HashSet<&str> = HashSet::with_capacity(records.len());
    for r in records.iter() {
        if r.path != "/" && !seen.contains(parent(&r.path)) {
            return Err(Failure::msg(format!(
                "{file}: {} has no parent line ({})",
                r.path,
                parent(&r.path)
            )));
        }
        if !seen.insert(&r.path) {
            return Err(Failure::msg(format!("{file}: {} appears twice", r.path)));
        }
    }
    Ok(())
}

/// What import does with one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Create,
    Skip,
    Overwrite,
}

/// What is sent: a transaction of creates and setData, or a TTL create (not allowed in a
/// multi).
enum Unit {
    Multi { ops: Vec<Op>, creates: usize },
    Ttl(usize),
}

async fn import(
    client: &Client,
    file: &str,
    at: &str,
    existing: Existing,
    dry_run: bool,
) -> Outcome {
    let mut records = read_file(file)?;
    check_tree(&mut records, if file == "-" { "stdin" } else { file })?;
    zkrs_client::validate_path(at)?;
    if at != "/" {
        let p = parent(at);
        if client.exists(p).await?.is_none() {
            return Err(Failure::msg(format!(
                "NoNode: {p} (the parent of --at {at} must exist)"
            )));
        }
    }
    let targets: Vec<String> = records.iter().map(|r| under(at, &r.path)).collect();
    let plans = plan(client, at, &targets, existing).await?;
    if dry_run {
        return print_plans(&targets, &plans);
    }
    let created = apply(client, &records, &targets, &plans).await?;
    let overwrite: Vec<usize> = (0..records.len())
        .filter(|&i| plans[i] == Plan::Overwrite)
        .collect();
    for result in windowed(overwrite.len(), WINDOW, |k| {
        let i = overwrite[k];
        let (client, target, acl) = (client.clone(), targets[i].clone(), records[i].acl_entries());
        async move { client.set_acl(&target, &acl, None).await }
    })
    .await
    {
        result?;
    }
    let count = |p: Plan| plans.iter().filter(|&&x| x == p).count();
    if crate::output_json::on() {
        crate::output_json::say(&crate::json_records::Imported {
            created,
            skipped: count(Plan::Skip),
            overwritten: count(Plan::Overwrite),
        })?;
    } else {
        crate::output::say(format!(
            "created {created}, skipped {}, overwritten {}",
            count(Plan::Skip),
            count(Plan::Overwrite)
        ))?;
    }
    Ok(0)
}

/// What import does with each target, from which of them exist and `--existing`; refused
/// (nothing written) when a node below the first exists and `--existing` is `error`.
async fn plan(
    client: &Client,
    at: &str,
    targets: &[String],
    existing: Existing,
) -> Result<Vec<Plan>, Failure> {
    // Nothing under --at exists if --at does not (short of a race): one read, not one per node.
    let exists: Vec<bool> = if client.exists(at).await?.is_none() {
        vec![false; targets.len()]
    } else {
        let found = windowed(targets.len(), WINDOW, |i| {
            let (client, target) = (client.clone(), targets[i].clone());
            async move { client.exists(&target).await }
        })
        .await;
        found
            .into_iter()
            .map(|r| r.map(|s| s.is_some()))
            .collect::<Result<_, _>>()?
    };
    if existing == Existing::Error {
        if let Some(i) = exists.iter().skip(1).position(|&e| e).map(|i| i + 1) {
            let n = exists.iter().skip(1).filter(|&&e| e).count();
            return Err(Failure::msg(format!(
                "NodeExists: {} ({n} of the file's nodes exist; nothing was written; \
                 --existing skip or overwrite)",
                targets[i]
            )));
        }
    }
    // The --at node itself may exist (`/` always does): it is kept, or overwritten with
    // --existing overwrite; only the nodes below it are refused by default.
    Ok(exists
        .iter()
        .map(|&e| match (e, existing) {
            (false, _) => Plan::Create,
            (true, Existing::Overwrite) => Plan::Overwrite,
            (true, Existing::Skip | Existing::Error) => Plan::Skip,
        })
        .collect())
}

/// `import --dry-run`: one `create|skip|overwrite PATH` line (or JSON record) per node.
fn print_plans(targets: &[String], plans: &[Plan]) -> Outcome {
    let mut out = crate::output::stdout();
    for (t, p) in targets.iter().zip(plans) {
        let verb = match p {
            Plan::Create => "create",
            Plan::Skip => "skip",
            Plan::Overwrite => "overwrite",
        };
        if crate::output_json::on() {
            let record = crate::json_records::Planned {
                action: verb,
                path: t,
            };
            crate::output_json::line(&mut out, &record)?;
        } else {
            writeln!(out, "{verb} {t}")?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// Sends the creates and setData of the plans, [`BATCHES_IN_FLIGHT`] transactions at a
/// time; the number of nodes created. After a failure no further chunk is sent.
async fn apply(
    client: &Client,
    records: &[Record],
    targets: &[String],
    plans: &[Plan],
) -> Result<usize, Failure> {
    let mut created = 0;
    let mut failure = None;
    let mut from = 0;
    loop {
        let chunk = next_units(records, targets, plans, &mut from, BATCHES_IN_FLIGHT);
        if chunk.is_empty() {
            break;
        }
        let results = pipeline::all(chunk.iter().map(|u| send(client, u, records, targets))).await;
        for result in results {
            match result {
                Ok(n) => created += n,
                Err(e) if failure.is_none() => failure = Some(e),
                Err(_) => {}
            }
        }
        if failure.is_some() {
            break;
        }
    }
    match failure {
        None => Ok(created),
        Some(e) => Err(Failure::msg(format!(
            "import: {e} (nodes created: {created} of {}; each transaction is all or \
             nothing; a rerun with --existing skip completes the import)",
            plans.iter().filter(|&&p| p == Plan::Create).count()
        ))),
    }
}

/// The bytes an operation takes in a multi request, about (headers, path, data, ACL).
fn op_size(target: &str, data_len: usize, r: &Record) -> usize {
    let acl: usize = r.acl.iter().map(|a| 12 + a.scheme.len() + a.id.len()).sum();
    40 + target.len() + data_len + acl
}

/// The next units to send (at most `max`), from record `*from` on, in path order, so every
/// parent is created before its children (a session's requests are applied in the order
/// sent); `*from` moves past the records they hold. Made a few at a time, so the operations
/// (copies of the records' data) are not all held at once.
fn next_units(
    records: &[Record],
    targets: &[String],
    plans: &[Plan],
    from: &mut usize,
    max: usize,
) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut ops = Vec::new();
    let mut creates = 0;
    let mut bytes = 0;
    while *from < records.len() {
        let i = *from;
        let r = &records[i];
        let size = op_size(&targets[i], r.data.len(), r);
        let full = (plans[i] == Plan::Create && r.mode == Mode::Ttl)
            || bytes + size > MAX_BATCH_BYTES
            || ops.len() >= MAX_BATCH_OPS;
        if full && !ops.is_empty() {
            units.push(Unit::Multi {
                ops: std::mem::take(&mut ops),
                creates: std::mem::take(&mut creates),
            });
            bytes = 0;
        }
        if units.len() == max {
            return units;
        }
        *from += 1;
        let op = match (plans[i], r.mode) {
            (Plan::Skip, _) => continue,
            (Plan::Overwrite, _) => Op::SetData {
                path: targets[i].clone(),
                data: r.bytes(),
                version: None,
            },
            (Plan::Create, Mode::Ttl) => {
                units.push(Unit::Ttl(i));
                continue;
            }
            (Plan::Create, mode) => Op::Create {
                path: targets[i].clone(),
                data: r.bytes(),
                mode: if mode == Mode::Container {
                    CreateMode::Container
                } else {
                    CreateMode::Persistent
                },
                acl: r.acl_entries(),
                stat: false,
            },
        };
        if matches!(op, Op::Create { .. }) {
            creates += 1;
        }
        bytes += size;
        ops.push(op);
    }
    if !ops.is_empty() {
        units.push(Unit::Multi { ops, creates });
    }
    units
}

/// Sends one unit; the number of nodes it created.
async fn send(
    client: &Client,
    unit: &Unit,
    records: &[Record],
    targets: &[String],
) -> zkrs_client::Result<usize> {
    match unit {
        Unit::Multi { ops, creates } => client.multi(ops).await.map(|_| *creates),
        Unit::Ttl(i) => {
            let r = &records[*i];
            let acl: Vec<AclEntry> = r.acl_entries();
            let ttl = Duration::from_millis(r.ttl_ms.unwrap_or(1));
            let options = CreateOptions::new(CreateMode::PersistentWithTtl)
                .acl(&acl)
                .ttl(ttl);
            client
                .create_with(&targets[*i], &r.bytes(), &options)
                .await
                .map(|_| 1)
        }
    }
}
