//! The secrets zkctl takes, each from the first line of a file, never from the command line
//! (`ps`, `/proc/PID/cmdline`, a `lock -- CMD` child and shell history would show it):
//! `--auth-file FILE` (`SCHEME:CREDENTIALS`), `--sasl-password-file FILE` and
//! `--resume-password-file FILE` (the session password as hex). The parser only notes the
//! files (it does no I/O). Every value read is
//! a [`Secret`], so `Debug` of the settings prints `Secret(***)`, and no error repeats what a
//! file holds. `Globals::read_secrets` reads them all before connecting.

use zkrs_client::Secret;

use super::usage::{printable, usage, UsageError};

/// A secret on the first line of a file given by a flag; `value` once read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretFile {
    /// The flag that named the file, for messages.
    pub flag: &'static str,
    /// The file.
    pub path: String,
    /// Its first line (without the line break), once read.
    pub value: Option<Secret>,
}

impl SecretFile {
    /// The file `path` of `flag`, not read yet.
    pub fn new(flag: &'static str, path: String) -> SecretFile {
        SecretFile {
            flag,
            path,
            value: None,
        }
    }

    /// Reads the first line (`/dev/stdin` and `<(...)` are files too).
    pub fn read(&mut self) -> Result<(), String> {
        let text = std::fs::read(&self.path)
            .map(Secret::from)
            .map_err(|e| format!("cannot read {} {}: {e}", self.flag, self.path))?;
        let bytes = text.expose();
        let end = bytes
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(bytes.len());
        let line = bytes[..end].strip_suffix(b"\r").unwrap_or(&bytes[..end]);
        self.value = Some(Secret::from(line));
        Ok(())
    }

    /// The value read (empty before [`SecretFile::read`]).
    pub fn value(&self) -> Secret {
        self.value.clone().unwrap_or_default()
    }

    /// "the first line of --flag PATH", for what is wrong with it.
    fn first_line(&self) -> String {
        format!("the first line of {} {}", self.flag, self.path)
    }
}

/// `--sasl-digest USER --sasl-password-file FILE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslDigest {
    /// The user name.
    pub user: String,
    /// The password (the file's first line).
    pub password: SecretFile,
}

/// `--resume ID --resume-password-file FILE`: a session to reattach to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// The session id.
    pub id: i64,
    /// The session password: the file's first line, hex; its bytes once read.
    pub password: SecretFile,
}

/// What an inline `--auth` gets: where its credentials go instead. Says nothing of the value.
pub const AUTH_INLINE: &str = "--auth takes no credentials on the command line (ps and shell \
     history show them): put SCHEME:CREDENTIALS (e.g. digest:user:password) on the first line \
     of a file only you can read and pass --auth-file FILE";

/// What `--resume ID:PASSWORD` gets. Says nothing of the password.
pub const RESUME_INLINE: &str = "--resume takes the session id only (ps and shell history \
     would show a password): put the password (hex) on the first line of a file only you can \
     read and pass --resume ID --resume-password-file FILE";

/// `--resume ID` and `--resume-password-file FILE`, checked together. `id` is the raw value
/// of `--resume`, which may hold a password by mistake: no message repeats it.
pub fn resume(
    id: Option<String>,
    password_file: Option<String>,
) -> Result<Option<Resume>, UsageError> {
    match (id, password_file) {
        (None, None) => Ok(None),
        (None, Some(_)) => usage("--resume-password-file needs --resume ID"),
        (Some(id), _) if id.contains(':') => usage(RESUME_INLINE),
        (Some(_), None) => usage(
            "--resume ID needs --resume-password-file FILE (the password, hex, on its first \
             line; never on the command line)",
        ),
        (Some(id), Some(file)) => Ok(Some(Resume {
            id: session_id(&id).map_err(super::usage::UsageError)?,
            password: SecretFile::new("--resume-password-file", file),
        })),
    }
}

/// The identities of `--auth-file`s: each file read, its first line split at its first `:`
/// into scheme and credentials (checked without repeating them).
pub fn read_identities(files: &mut [SecretFile]) -> Result<Vec<(String, Secret)>, String> {
    let mut identities = Vec::with_capacity(files.len());
    for file in files {
        file.read()?;
        let value = file.value();
        let text = std::str::from_utf8(value.expose())
            .map_err(|_| format!("{} is not UTF-8", file.first_line()))?;
        match text.split_once(':') {
            Some((scheme, credentials)) if !scheme.is_empty() => {
                identities.push((scheme.to_string(), Secret::from(credentials)));
            }
            _ => {
                return Err(format!(
                    "{} is not SCHEME:CREDENTIALS (e.g. digest:user:password)",
                    file.first_line()
                ))
            }
        }
    }
    Ok(identities)
}

impl Resume {
    /// Reads the password file: its first line, hex, becomes the password's bytes.
    pub fn read(&mut self) -> Result<(), String> {
        self.password.read()?;
        let hex = self.password.value();
        let bytes = hex_bytes(hex.expose())
            .filter(|b| !b.is_empty())
            .ok_or_else(|| format!("{} is not a hex password", self.password.first_line()))?;
        self.password.value = Some(Secret::from(bytes));
        Ok(())
    }
}

/// `--resume ID`: the id as `0x`-hex (as zkctl and ZooKeeper print it) or decimal, not 0.
/// The password comes from a file.
pub fn session_id(id: &str) -> Result<i64, String> {
    let parsed = match id.strip_prefix("0x").or_else(|| id.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|v| v as i64),
        None => id.parse::<i64>().ok(),
    };
    match parsed {
        Some(id) if id != 0 => Ok(id),
        _ => Err(format!(
            "--resume {}: not a session id (0x-hex or decimal, e.g. 0x100000a2b3c0001)",
            printable(id)
        )),
    }
}

/// Bytes from hex (even length, either case).
pub fn hex_bytes(hex: &[u8]) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 || !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    hex.chunks(2)
        .map(|pair| {
            let pair = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(pair, 16).ok()
        })
        .collect()
}
