//! The data commands: `ls`, `get`, `stat`, `set`, `create`, `delete`, `tree`.

use std::io::Write;

use zkrs_client::{
    AclEntry, Client, ConnectionState, CreateMode, CreateOptions, ErrorCode, Result,
};
use zkrs_recipes::framework::{create_parents, join, parent, ParentMode};

use crate::args::{Command, CreateArgs, GetArgs, LsArgs, StatArgs, TreeArgs};
use crate::commands::{acl, find};
use crate::failure::{Failure, Outcome};
use crate::json_records as rec;
use crate::output::{self, note};
use crate::output_json;
use crate::pipeline;
use crate::signals::Shutdown;

/// Runs one data command on a connected client.
pub async fn run(client: &Client, command: Command) -> Outcome {
    let mut out = crate::output::stdout();
    match command {
        Command::Ls(a) => return ls(client, &a, out).await,
        Command::Get(a) => return get(client, &a, out).await,
        Command::Stat(a) => return stat(client, &a, out).await,
        Command::Set(a) => {
            client
                .set_data(&a.path, a.data.as_bytes(), a.version)
                .await?;
        }
        Command::Create(a) => {
            drop(out); // `create --ephemeral` prints, then waits: flush per line.
            return create(client, &a).await;
        }
        Command::Delete(a) => delete(client, &a.path, a.recursive, a.version).await?,
        Command::Deleteall(a) => delete(client, &a.path, true, None).await?,
        Command::Tree(TreeArgs { path }) => {
            // Check the root first, so a missing node is an error, not an empty tree.
            client.get_children(&path).await?;
            if output_json::on() {
                output_json::line(
                    &mut out,
                    &rec::TreeNode {
                        path: &path,
                        depth: 0,
                    },
                )?;
            } else {
                writeln!(out, "{path}")?;
            }
            tree(client, &path, &mut Vec::new(), &mut out).await?;
        }
        other => unreachable!("not a data command: {other:?}"),
    }
    out.flush()?;
    Ok(0)
}

/// `ls PATH [-s]`: the children's names, sorted (and the Stat). `-R` is zkCli.sh's every path
/// of the subtree, which `find` prints.
async fn ls(client: &Client, a: &LsArgs, mut out: impl Write) -> Outcome {
    let path = &a.path;
    if a.recursive {
        return find::run(client, path, None, None).await;
    }
    let children = if a.stat {
        client.get_children2(path).await?
    } else {
        client.get_children(path).await?
    };
    let mut names: Vec<&str> = children.iter().collect();
    names.sort_unstable();
    for name in names {
        if output_json::on() {
            let child = join(path, name);
            output_json::line(&mut out, &rec::Child { path: &child, name })?;
        } else {
            writeln!(out, "{name}")?;
        }
    }
    if let Some(stat) = children.stat() {
        print_stat(&mut out, path, stat)?;
    }
    out.flush()?;
    Ok(0)
}

/// `delete PATH [--recursive] [--version V]`, `deleteall PATH`.
async fn delete(
    client: &Client,
    path: &str,
    recursive: bool,
    version: Option<i32>,
) -> Result<(), Failure> {
    if !recursive {
        client.delete(path, version).await?;
    } else if path == "/" {
        return Err(Failure::Usage(
            "refusing to delete / recursively (it holds /zookeeper)".into(),
        ));
    } else {
        delete_tree(client, path, version).await?;
    }
    Ok(())
}

/// `get PATH [-s] [-w]`: the data (and the Stat), then, with `-w`, the watch's event.
async fn get(client: &Client, a: &GetArgs, mut out: impl Write) -> Outcome {
    let (path, with_stat, watch) = (a.path.as_str(), a.stat, a.watch);
    let (data, node_stat, fired) = if watch {
        let (data, node_stat, fired) = client.get_data_and_watch(path).await?;
        (data, node_stat, Some(fired))
    } else {
        let (data, node_stat) = client.get_data(path).await?;
        (data, node_stat, None)
    };
    if output_json::on() {
        // The record holds the Stat already: `-s` adds nothing to it.
        let node = rec::Node {
            path,
            data: rec::Data::of(&data),
            stat: rec::StatRecord::from(&node_stat),
        };
        output_json::line(&mut out, &node)?;
    } else {
        out.write_all(&data)?;
        if with_stat {
            // zkCli.sh's layout: the data on its own line, then the Stat.
            if !data.ends_with(b"\n") {
                writeln!(out)?;
            }
            out.write_all(output::stat(&node_stat).as_bytes())?;
        }
    }
    match fired {
        Some(fired) => await_watch(out, path, fired).await?,
        None => out.flush()?,
    }
    Ok(0)
}

/// `stat PATH [-w]`: the Stat, then, with `-w`, the watch's event.
async fn stat(client: &Client, a: &StatArgs, mut out: impl Write) -> Outcome {
    let (path, watch) = (a.path.as_str(), a.watch);
    if !watch {
        let (_, stat) = client.get_data(path).await?;
        print_stat(&mut out, path, &stat)?;
        out.flush()?;
        return Ok(0);
    }
    let (stat, fired) = client.exists_and_watch(path).await?;
    let Some(stat) = stat else {
        return Err(zkrs_client::Error::from(ErrorCode::NoNode)
            .with_path(path)
            .into());
    };
    print_stat(&mut out, path, &stat)?;
    await_watch(out, path, fired).await?;
    Ok(0)
}

/// A node's Stat: `name = value` lines, or a `{"path","stat"}` record.
fn print_stat(out: &mut impl Write, path: &str, stat: &zkrs_client::Stat) -> std::io::Result<()> {
    if output_json::on() {
        let stat = rec::StatRecord::from(stat);
        output_json::line(out, &rec::NodeStat { path, stat })
    } else {
        out.write_all(output::stat(stat).as_bytes())
    }
}

/// `get -w`, `stat -w`: what was read is flushed, then the one-shot watch's event is
/// printed as `zkctl watch` prints one, once it fires.
async fn await_watch(
    mut out: impl Write,
    path: &str,
    fired: zkrs_client::OneshotWatch,
) -> std::result::Result<(), Failure> {
    out.flush()?;
    drop(out);
    // On stderr, so scripts (and tests) know when changes start to be seen.
    note!("zkctl: watching {path} (one event)");
    let event = fired.await;
    crate::commands::watch::print(&event)?;
    if event.is_session_event() {
        return Err(Failure::msg(format!(
            "the watch on {path} ended: session {:?}",
            event.state
        )));
    }
    Ok(())
}

/// The create mode for the flags (the parser has refused impossible combinations).
fn mode(a: &CreateArgs) -> CreateMode {
    match (a.ephemeral, a.container, a.ttl.is_some(), a.sequential) {
        (true, _, _, true) => CreateMode::EphemeralSequential,
        (true, _, _, false) => CreateMode::Ephemeral,
        (_, true, _, _) => CreateMode::Container,
        (_, _, true, true) => CreateMode::PersistentSequentialWithTtl,
        (_, _, true, false) => CreateMode::PersistentWithTtl,
        (_, _, _, true) => CreateMode::PersistentSequential,
        _ => CreateMode::Persistent,
    }
}

async fn create(client: &Client, a: &CreateArgs) -> Outcome {
    // Listen before the node exists, so a signal cannot slip between create and wait.
    let mut shutdown = if a.ephemeral {
        Some(Shutdown::install()?)
    } else {
        None
    };
    // `--acl`: the entries given, else the open ACL.
    let entries: Vec<AclEntry> = a.acl.specs().map(acl::entry).collect();
    let mut options = CreateOptions::new(mode(a));
    if !entries.is_empty() {
        options = options.acl(&entries);
    }
    if let Some(ttl) = a.ttl {
        options = options.ttl(ttl);
    }
    if a.parents {
        // The parent of a sequential prefix `/a/b/job-` is `/a/b`, as for any path.
        let p = parent(&a.path);
        if p != "/" && a.path.starts_with('/') {
            create_parents(client, p, ParentMode::Persistent).await?;
        }
    }
    let data = a.data.as_deref().unwrap_or_default().as_bytes();
    let (path, _) = client.create_with(&a.path, data, &options).await?;
    if output_json::on() {
        output_json::say(&rec::PathOnly { path: &path })?;
    } else {
        output::say(&path)?;
    }
    let Some(shutdown) = shutdown.as_mut() else {
        return Ok(0);
    };
    // An ephemeral node lives as long as this session: hold it until asked to stop.
    note!("zkctl: holding ephemeral {path} until interrupted");
    let mut changes = client.state_changes();
    loop {
        tokio::select! {
            signal = shutdown.recv() => return Ok(signal.exit_code()),
            change = changes.next() => match change.map(|c| c.state) {
                Some(ConnectionState::Lost) | Some(ConnectionState::Closed) | None => {
                    return Err(Failure::msg(format!("session lost: {path} is gone")));
                }
                Some(_) => {}
            },
        }
    }
}

/// Walks the subtree under `path`, printing one line per node.
async fn tree(
    client: &Client,
    path: &str,
    open: &mut Vec<bool>,
    out: &mut impl Write,
) -> std::result::Result<(), Failure> {
    let children = match client.get_children(path).await {
        Ok(c) => c,
        Err(e) if e.code() == Some(ErrorCode::NoNode) => return Ok(()), // deleted meanwhile
        Err(e) => return Err(e.into()),
    };
    let mut names: Vec<String> = children.to_vec();
    names.sort_unstable();
    for (i, name) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        let child = join(path, name);
        if output_json::on() {
            let depth = open.len() + 1;
            output_json::line(
                out,
                &rec::TreeNode {
                    path: &child,
                    depth,
                },
            )?;
        } else {
            writeln!(out, "{}{name}", output::tree_prefix(open, last))?;
        }
        open.push(!last);
        Box::pin(tree(client, &child, open, out)).await?;
        open.pop();
    }
    Ok(())
}

/// Deletes `path` and everything under it: lists level by level, then deletes deepest first,
/// each level pipelined. `version` applies to `path` itself. Nodes that vanish meanwhile are
/// fine; a child created meanwhile (NotEmpty) makes it start over, a few times.
pub async fn delete_tree(client: &Client, path: &str, version: Option<i32>) -> Result<()> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut levels: Vec<Vec<String>> = vec![vec![path.to_string()]];
        loop {
            let last = levels.last().expect("at least the root");
            let listed = pipeline::all_chunked(last, |p| client.get_children(p)).await;
            let mut next = Vec::new();
            for (p, children) in last.iter().zip(listed) {
                match children {
                    Ok(c) => next.extend(c.iter().map(|n| join(p, n))),
                    // Only the root's absence is an error: descendants may vanish meanwhile.
                    Err(e) if e.code() == Some(ErrorCode::NoNode) && levels.len() > 1 => {}
                    Err(e) => return Err(e),
                }
            }
            if next.is_empty() {
                break;
            }
            levels.push(next);
        }
        let mut raced = false;
        for (depth, level) in levels.iter().enumerate().rev() {
            let v = if depth == 0 { version } else { None };
            for result in pipeline::all_chunked(level, |p| client.delete(p, v)).await {
                match result {
                    Ok(()) => {}
                    Err(e) if e.code() == Some(ErrorCode::NoNode) => {}
                    Err(e) if e.code() == Some(ErrorCode::NotEmpty) && attempt < 5 => raced = true,
                    Err(e) => return Err(e),
                }
            }
            if raced {
                break;
            }
        }
        if !raced {
            return Ok(());
        }
    }
}
