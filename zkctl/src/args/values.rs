//! Value parsers for clap: each turns one argument into its typed value, or says what it
//! needed (clap prints `invalid value 'X' for '--flag <V>': <what this returns>`).

use std::time::Duration;

/// `--server`: a connect string, not empty.
pub fn connect_string(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        // Found by the zkctl_args fuzz target: an empty --server used to be taken as is.
        return Err("a connect string (host:port,...) is needed, not an empty value".into());
    }
    Ok(s.to_string())
}

/// A value that must not be empty (or blank).
pub fn non_empty(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("an empty value".into());
    }
    Ok(s.to_string())
}

/// Milliseconds, 0 or more.
pub fn millis(s: &str) -> Result<Duration, String> {
    s.parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| "not a number of milliseconds".into())
}

/// Milliseconds, at least 1.
pub fn positive_millis(s: &str) -> Result<Duration, String> {
    match millis(s)? {
        d if d.is_zero() => Err("must be positive".into()),
        d => Ok(d),
    }
}

/// A count of at least 1.
pub fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a positive number".into()),
    }
}

/// `demo --participants`: the story needs a leader and someone to take over.
pub fn at_least_two(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 2 => Ok(n),
        Ok(_) => Err("must be at least 2".into()),
        Err(_) => Err("not a number".into()),
    }
}

/// `cache --depth`: levels, 0 or more.
pub fn levels(s: &str) -> Result<usize, String> {
    s.parse()
        .map_err(|_| "not a number of levels (0 or more)".into())
}

/// `--port`, `--ssl-port`: 1 to 65535.
pub fn port(s: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err("not a port number (1-65535)".into()),
    }
}

/// One node name: not empty, no `/`, not `.` or `..`.
fn node_name(what: &str, name: &str) -> Result<String, String> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(format!(
            "{what} is a node name (not empty, no '/', not . or ..)"
        ));
    }
    Ok(name.to_string())
}

/// `member`'s ID.
pub fn member_id(s: &str) -> Result<String, String> {
    node_name("a member id", s)
}

/// A service's NAME.
pub fn service_name(s: &str) -> Result<String, String> {
    node_name("a service name", s)
}

/// A service instance's ID.
pub fn instance_id(s: &str) -> Result<String, String> {
    node_name("an instance id", s)
}
