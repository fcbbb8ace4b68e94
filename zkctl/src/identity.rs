//! Who this process is, for election ids and lock node data: `<hostname>-<pid>`.

/// The host name: the kernel's (`/proc/sys/kernel/hostname`), else `$HOSTNAME`, else the
/// `hostname` command's output, else `localhost`. Each source is only asked if the one
/// before gave nothing.
pub fn hostname() -> String {
    let usable = |h: String| Some(h.trim().to_string()).filter(|h| !h.is_empty());
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .and_then(usable)
        .or_else(|| std::env::var("HOSTNAME").ok().and_then(usable))
        .or_else(|| {
            std::process::Command::new("hostname")
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8(o.stdout).ok())
                .and_then(usable)
        })
        .unwrap_or_else(|| "localhost".to_string())
}

/// `<hostname>-<pid>`: unique among live processes of a host, and readable in `ls` output.
pub fn default_id() -> String {
    format!("{}-{}", hostname(), std::process::id())
}
