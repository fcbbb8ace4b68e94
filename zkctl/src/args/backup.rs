//! `export`, `import`, `diff`, `find` and `du`: their arguments and flags (flattened into
//! [`super::cli::Command`] as one variant, to keep that enum's merges small), which
//! `commands/backup.rs` takes as they are.

use clap::{Subcommand, ValueEnum};

/// What `import` does with a node that exists already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Existing {
    /// Stop before writing anything (exit 1)
    Error,
    /// Leave it as it is (its data and ACL too); create the rest
    Skip,
    /// Set its data and ACL to the file's
    Overwrite,
}

/// The backup and search commands, as clap sees them.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum BackupSub {
    /// Write a subtree as JSON lines (data, ACL, mode), one node per line
    #[command(after_help = "\
One JSON object per line, in path order (parents first): {\"path\": \"/a/b\"
(relative to PATH; PATH itself is \"/\"), \"mode\": \"persistent\", \"acl\":
[{\"perms\": \"cdrwa\", \"scheme\": \"world\", \"id\": \"anyone\"}], \"encoding\":
\"utf8\" or \"base64\", \"data\": ...}. Ephemeral nodes are left out (a line on
stderr counts them), and so is /zookeeper. The server hides container and TTL
markers from clients, so every node is written as persistent. Reads are
pipelined; the export is not a snapshot (each node is read once, as it was).
Needs READ on every node (--auth-file with digest:super:... for all).")]
    Export {
        /// The root of the subtree
        path: String,
        /// Write to FILE instead of stdout: made 0600 (an existing one truncated and made
        /// 0600), never through a symbolic link
        #[arg(long, value_name = "FILE")]
        out: Option<String>,
    },
    /// Create the nodes of an export file under --at (pipelined multis)
    #[command(after_help = "\
FILE is an export (- for stdin). Nodes are created parents first, in
transactions (multi) of at most 512 KiB, several in flight. The parent of
--at must exist; --at itself may exist (/ always does): it is kept as it is,
or with --existing overwrite gets the file's data and ACL. By default nothing
is written if any node below it exists already (exit 1, naming it);
--existing skip leaves existing nodes as they are, --existing overwrite sets
their data and ACL. Each transaction is atomic, the
import as a whole is not: on an error, the line says how many nodes were
created (a rerun with --existing skip completes it). --dry-run prints
`create PATH`, `skip PATH` or `overwrite PATH` per node and writes nothing.
Prints `created N, skipped N, overwritten N` at the end.")]
    Import {
        /// The export file (- for stdin)
        file: String,
        /// Where the export's root goes
        #[arg(long, value_name = "PATH", default_value = "/")]
        at: String,
        /// What to do with a node that exists already
        #[arg(long, value_name = "WHAT", value_enum, default_value_t = Existing::Error)]
        existing: Existing,
        /// Print what would be done; write nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// List the differences between two subtrees (or export files)
    #[command(after_help = "\
LEFT and RIGHT are ZooKeeper paths (starting with /) or export files
(file:NAME, or any argument not starting with /; - for stdin). Compares what
`export` writes: ephemeral nodes and /zookeeper are left out. One line per
difference, in path order, paths relative to each root: `only-left PATH`,
`only-right PATH`, `data PATH`, `acl PATH` (as sets), `mode PATH`.
Exit codes: 0 equal, 1 different (as diff(1)); errors are 1 too, with a
`zkctl:` line on stderr.")]
    Diff {
        /// The left side
        left: String,
        /// The right side
        right: String,
    },
    /// Print the paths of the subtree's nodes that match, in path order
    #[command(after_help = "\
--name matches the node's name (the last part of its path) against a glob:
`*` any run of characters, `?` one character. --data matches the data
against a regular expression (regex-lite syntax, anywhere in the data; data
that is not UTF-8 is matched with U+FFFD in place of its bad bytes). With
both, a node must match both; with neither, every node matches. PATH itself
is a candidate.")]
    Find {
        /// The root of the subtree
        path: String,
        /// A glob on node names
        #[arg(long, value_name = "GLOB")]
        name: Option<String>,
        /// A regular expression on node data
        #[arg(long, value_name = "REGEX")]
        data: Option<String>,
    },
    /// Bytes and nodes under each child of PATH, largest first, then the total
    #[command(after_help = "\
A header line `BYTES<TAB>NODES<TAB>PATH`, then one such line per child of
PATH: the data bytes and the node count of the child's subtree (the child
included), sorted by bytes, then nodes (descending), then path. The last line
is PATH itself: the totals, its own data and node included (as du(1) ends).")]
    Du {
        /// The root of the subtree
        path: String,
    },
}
