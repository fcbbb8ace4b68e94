//! `acl get PATH` and `acl set PATH ACL... [--version V]`, and the ACL of `create --acl`:
//! entries in zkCli.sh's `scheme:id:perms` form.

use std::io::Write;

use zkrs_client::{AclEntry, Client, Perms};

use crate::args::{perm_string, AclSpec};
use crate::failure::Outcome;

/// The client's entry for a parsed one.
pub fn entry(spec: &AclSpec) -> AclEntry {
    AclEntry::new(Perms::from_code(spec.perms), &spec.scheme, &spec.id)
}

/// `scheme:id:perms`, perms in zkCli.sh's order (`cdrwa`).
pub fn line(entry: &AclEntry) -> String {
    format!(
        "{}:{}:{}",
        entry.scheme,
        entry.id,
        perm_string(entry.perms.code())
    )
}

/// `acl get PATH`: one line per entry, in the server's order.
pub async fn get(client: &Client, path: &str) -> Outcome {
    let (acl, _) = client.get_acl(path).await?;
    let mut out = crate::output::stdout();
    for e in &acl {
        if crate::output_json::on() {
            let record = crate::json_records::AclLine {
                scheme: &e.scheme,
                id: &e.id,
                perms: perm_string(e.perms.code()),
            };
            crate::output_json::line(&mut out, &record)?;
        } else {
            writeln!(out, "{}", line(e))?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// `acl set PATH ACL... [--version V]`: prints nothing.
pub async fn set(client: &Client, path: &str, acl: &[AclSpec], version: Option<i32>) -> Outcome {
    let entries: Vec<AclEntry> = acl.iter().map(entry).collect();
    client.set_acl(path, &entries, version).await?;
    Ok(0)
}
