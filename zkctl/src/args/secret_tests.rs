//! The secrets of the command line: read from files, never shown by `Debug`, never
//! repeated by an error.

use super::secrets::{Resume, SecretFile};
use super::*;

const PASSWORD: &str = "hunter2-zkrs";

fn globals(line: &str) -> Globals {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    match parse(&args, None) {
        Ok(Action::Run(g, _)) => *g,
        other => panic!("{line}: {other:?}"),
    }
}

fn error(line: &str) -> String {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    match parse(&args, None) {
        Err(e) => e.0,
        other => panic!("{line}: expected an error, got {other:?}"),
    }
}

fn assert_hidden(debug: &str, secret: &str) {
    assert!(!debug.contains(secret), "{secret} shows: {debug}");
    let bytes = format!("{:?}", secret.as_bytes());
    let bytes = bytes.trim_matches(|c| c == '[' || c == ']');
    assert!(!debug.contains(bytes), "{secret}'s bytes show: {debug}");
}

/// A file in a folder of its own, removed at drop.
struct Files(std::path::PathBuf);

impl Files {
    fn new(name: &str) -> Files {
        let dir = std::env::temp_dir().join(format!("zkctl-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Files(dir)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn globals_debug_hides_every_secret() {
    let files = Files::new("debug");
    let auth = files.write("auth", &format!("digest:user:{PASSWORD}\r\nsecond line\n"));
    let sasl = files.write("sasl", &format!("{PASSWORD}\n"));
    // "hunter2-zkrs" in hex.
    let resume = files.write("resume", "68756e746572322d7a6b7273");
    let mut g = globals(&format!(
        "--auth-file {auth} --sasl-digest ops --sasl-password-file {sasl} \
         --resume 0x1234 --resume-password-file {resume} ls /"
    ));
    g.read_secrets().unwrap();
    assert_eq!(g.auth.len(), 1);
    assert_eq!(g.auth[0].0, "digest");
    assert_eq!(g.auth[0].1.expose(), format!("user:{PASSWORD}").as_bytes());
    let sasl = g.sasl_digest.as_ref().unwrap();
    assert_eq!(sasl.password.value().expose(), PASSWORD.as_bytes());
    let resume = g.resume.as_ref().unwrap();
    assert_eq!(resume.password.value().expose(), PASSWORD.as_bytes());

    let debug = format!("{g:?}");
    assert_hidden(&debug, PASSWORD);
    assert_hidden(&debug, "68756e746572322d7a6b7273");
    assert_hidden(&format!("{:?}", g.sasl_digest), PASSWORD);
    assert!(debug.contains("digest") && debug.contains("ops"), "{debug}");
}

#[test]
fn what_is_wrong_with_a_file_is_said_without_its_content() {
    let files = Files::new("errors");
    let bad_auth = files.write("auth", PASSWORD);
    let bad_hex = files.write("resume", &format!("{PASSWORD}\n"));
    for (line, says) in [
        (
            format!("--auth-file {bad_auth} ls /"),
            "is not SCHEME:CREDENTIALS",
        ),
        (
            format!("--resume 1 --resume-password-file {bad_hex} ls /"),
            "is not a hex password",
        ),
        (
            "--auth-file /no/such/file ls /".to_string(),
            "cannot read --auth-file /no/such/file",
        ),
    ] {
        let mut g = globals(&line);
        let e = g.read_secrets().unwrap_err();
        assert!(e.contains(says), "{line}: {e}");
        assert!(!e.contains(PASSWORD), "{line}: {e}");
    }
}

#[test]
fn resume_takes_an_id_and_a_password_file() {
    let file = |path: &str| SecretFile::new("--resume-password-file", path.into());
    let g = globals("--resume 0x10a --resume-password-file /p ls /");
    assert_eq!(
        g.resume,
        Some(Resume {
            id: 0x10a,
            password: file("/p")
        })
    );
    let g = globals("ls / --resume=266 --resume-password-file=/q");
    assert_eq!(
        g.resume,
        Some(Resume {
            id: 266,
            password: file("/q")
        })
    );
    assert_eq!(globals("ls /").resume, None);
    for bad in ["x", "0", "0x", "-"] {
        let e = error(&format!("--resume {bad} --resume-password-file /p ls /"));
        assert!(e.contains("not a session id"), "{bad}: {e}");
    }
    assert!(error("--resume 0x10a ls /").contains("needs --resume-password-file FILE"));
    assert!(error("--resume-password-file /p ls /").contains("needs --resume ID"));
    let inline = error("--resume 0x10a:00ff10 --resume-password-file /p ls /");
    assert!(
        inline.contains("--resume ID --resume-password-file FILE"),
        "{inline}"
    );
    assert!(!inline.contains("00ff10"), "{inline}");
    assert!(error("--resume 0x1 --resume-password-file /p bench get").contains("one session"));
}
