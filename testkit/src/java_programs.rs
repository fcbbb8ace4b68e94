//! Java programs that tests run beside a server (Curator peers): a JDK's `javac` and `java`,
//! Curator of the chosen version from the jar cache (or jars from Debian's layout), and
//! sources compiled once per content.
//!
//! The interop tests and benches compile their peers (`tests/java/*.java`) against Curator's
//! jars and talk to them over stdin/stdout; this is the part they share.

use std::collections::hash_map::DefaultHasher;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::locate::Installation;
use crate::versions::Distribution;

/// Overrides the classpath built from Debian's jars (give every jar the programs need).
pub const CURATOR_CLASSPATH_ENV: &str = "ZKR_CURATOR_CLASSPATH";
/// Overrides the `javac` looked for under `JAVA_HOME` and on the `PATH`.
pub const JAVAC_ENV: &str = "ZKR_JAVAC";
/// Where Debian puts its jars.
const JAR_DIR: &str = "/usr/share/java";

/// Compiled Java programs, ready to run.
///
/// ```no_run
/// use zkrs_testkit::JavaPrograms;
/// let classpath = JavaPrograms::debian_classpath(&["curator-recipes", "zookeeper"], &[])?;
/// // In an integration test, `env!("CARGO_TARGET_TMPDIR")` is a good place for the classes.
/// let programs = JavaPrograms::compile(
///     &["tests/java/Peer.java".into()],
///     &classpath,
///     &std::env::temp_dir(),
///     "peer",
/// )?;
/// let child = programs.command(&["-Xmx128m"], "Peer").arg("127.0.0.1:2181").spawn();
/// # Ok::<(), zkrs_testkit::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct JavaPrograms {
    java: PathBuf,
    classpath: OsString,
}

impl JavaPrograms {
    /// The classpath of the Curator the peers run: `ZKR_CURATOR_CLASSPATH` when it is set,
    /// else the version `ZKRS_TEST_CURATOR` names (default
    /// [`DEFAULT_CURATOR`](crate::DEFAULT_CURATOR)) from the jar cache: curator-recipes,
    /// curator-x-discovery, curator-x-async (`ModeledFramework`) and jackson-databind, with
    /// their dependencies and the ZooKeeper client that Curator was released with; against a
    /// 3.5 server (`ZKRS_TEST_ZOOKEEPER=3.5.x`), that server's client library first, as
    /// Curator 5's compatibility mode wants it.
    ///
    /// # Errors
    ///
    /// [`Error::NotFetched`] naming the command that fetches a version the cache lacks;
    /// [`Error::InvalidArgument`] for `debian` (Debian packages no `curator-x-async`: choose
    /// `5.4.0`, the same Curator, from the cache) or a value that is not a version.
    pub fn curator_classpath() -> Result<OsString> {
        if let Some(cp) = std::env::var_os(CURATOR_CLASSPATH_ENV).filter(|v| !v.is_empty()) {
            return Ok(cp);
        }
        let curator = Distribution::curator_from_env()?;
        let jars = curator
            .cached_classpath("curator")?
            .ok_or_else(|| Error::InvalidArgument {
                message: "ZKRS_TEST_CURATOR=debian: Debian packages no curator-x-async, which \
                          the peers need; choose 5.4.0 (the same Curator) from the jar cache"
                    .into(),
            })?;
        // Curator 5 talks to a 3.5 server in its compatibility mode: with the 3.5 client
        // library instead of its own, it finds no persistent watches (no `AddWatchMode`
        // class) and its caches use one-shot watches (Curator's own advice for 3.5). Its own
        // ZooKeeper jars must go: the class loader would find `AddWatchMode` in them.
        match Distribution::zookeeper_from_env()? {
            Some(ref server @ Distribution::Maven(ref version)) if version.starts_with("3.5.") => {
                let client = server.cached_classpath("zookeeper")?.unwrap_or_default();
                let folder = PathBuf::from(&jars);
                let folder = folder.parent().unwrap_or(Path::new("."));
                let mut entries = std::env::split_paths(&client).collect::<Vec<_>>();
                let listing = fs::read_dir(folder)
                    .map_err(|e| Error::io(format!("listing {}", folder.display()), e))?;
                let mut curator: Vec<PathBuf> = listing
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.ends_with(".jar") && !n.starts_with("zookeeper-"))
                    })
                    .collect();
                curator.sort();
                entries.extend(curator);
                std::env::join_paths(entries).map_err(|e| Error::JavaSetup {
                    message: e.to_string(),
                })
            }
            _ => Ok(jars),
        }
    }

    /// The version of Curator [`curator_classpath`](Self::curator_classpath) gives, for
    /// what a test prints (`classpath` when `ZKR_CURATOR_CLASSPATH` chose it).
    pub fn curator_version() -> String {
        if std::env::var_os(CURATOR_CLASSPATH_ENV).is_some_and(|v| !v.is_empty()) {
            return "classpath".into();
        }
        Distribution::curator_from_env()
            .map(|d| d.to_string())
            .unwrap_or_else(|e| e.to_string())
    }

    /// The jars `required` (each `/usr/share/java/<name>.jar`, or the newest
    /// `<name>-<version>.jar`) and those of `optional` that exist, as a classpath; or
    /// `ZKR_CURATOR_CLASSPATH` when it is set. Fails naming every missing required jar.
    pub fn debian_classpath(required: &[&str], optional: &[&str]) -> Result<OsString> {
        if let Some(cp) = std::env::var_os(CURATOR_CLASSPATH_ENV).filter(|v| !v.is_empty()) {
            return Ok(cp);
        }
        let mut jars = Vec::new();
        let mut missing = Vec::new();
        for name in required {
            match find_jar(name) {
                Some(jar) => jars.push(jar),
                None => missing.push(format!("{JAR_DIR}/{name}.jar")),
            }
        }
        if !missing.is_empty() {
            return Err(Error::JavaSetup {
                message: format!("missing {}", missing.join(", ")),
            });
        }
        jars.extend(optional.iter().filter_map(|name| find_jar(name)));
        std::env::join_paths(jars).map_err(|e| Error::JavaSetup {
            message: e.to_string(),
        })
    }

    /// Compiles `sources` (in one `javac` run) against `classpath` into a folder of `base`
    /// named after `label`, the sources and the classpath, so each content is compiled once
    /// (javac is slow). The folder appears whole (compiled elsewhere, then renamed), so
    /// concurrent runs never see half-written classes. `java` is the one beside `javac`, else
    /// the one the test kit runs ZooKeeper with.
    pub fn compile(
        sources: &[PathBuf],
        classpath: &OsStr,
        base: &Path,
        label: &str,
    ) -> Result<JavaPrograms> {
        let javac = find_javac()?;
        let sibling = fs::canonicalize(&javac)
            .ok()
            .and_then(|p| p.parent().map(|d| d.join("java")))
            .filter(|p| p.is_file());
        let java = match sibling {
            Some(java) => java,
            None => Installation::detect()?.java().to_path_buf(),
        };
        let classes = compile_once(&javac, sources, classpath, base, label)?;
        let mut entries = vec![classes];
        entries.extend(std::env::split_paths(classpath));
        let classpath = std::env::join_paths(entries).map_err(|e| Error::JavaSetup {
            message: e.to_string(),
        })?;
        Ok(JavaPrograms { java, classpath })
    }

    /// `java <jvm flags> -cp <the classes and jars> <class>`, for the caller to add arguments
    /// and pipes to.
    pub fn command(&self, jvm: &[&str], class: &str) -> Command {
        let mut command = Command::new(&self.java);
        command.args(jvm).arg("-cp").arg(&self.classpath).arg(class);
        command
    }

    /// The `java` binary.
    pub fn java(&self) -> &Path {
        &self.java
    }

    /// The compiled classes, then the jars.
    pub fn classpath(&self) -> &OsStr {
        &self.classpath
    }
}

fn find_jar(name: &str) -> Option<PathBuf> {
    let plain = Path::new(JAR_DIR).join(format!("{name}.jar"));
    if plain.is_file() {
        return Some(plain);
    }
    // A versioned jar without the unversioned link: `<name>-<digit>...jar`.
    let prefix = format!("{name}-");
    let mut found: Vec<PathBuf> = fs::read_dir(JAR_DIR)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.ends_with(".jar")
                    && n.strip_prefix(&prefix)
                        .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
            })
        })
        .collect();
    found.sort();
    found.pop()
}

/// `$ZKR_JAVAC`, else `$JAVA_HOME/bin/javac`, else `javac` on the `PATH`.
fn find_javac() -> Result<PathBuf> {
    if let Some(tool) = std::env::var_os(JAVAC_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(tool));
    }
    let mut candidates = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        candidates.push(Path::new(&home).join("bin").join("javac"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join("javac")));
    }
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| Error::JavaSetup {
            message: format!("no javac (set {JAVAC_ENV}, JAVA_HOME, or put it on the PATH)"),
        })
}

fn compile_once(
    javac: &Path,
    sources: &[PathBuf],
    classpath: &OsStr,
    base: &Path,
    label: &str,
) -> Result<PathBuf> {
    if sources.is_empty() {
        return Err(Error::InvalidArgument {
            message: "no Java source to compile".into(),
        });
    }
    let mut hasher = DefaultHasher::new();
    for source in sources {
        let text =
            fs::read(source).map_err(|e| Error::io(format!("reading {}", source.display()), e))?;
        source.file_name().hash(&mut hasher);
        text.hash(&mut hasher);
    }
    classpath.hash(&mut hasher);
    let name = format!("{label}-{:016x}", hasher.finish());
    let dir = base.join(&name);
    // The marker is written last: its presence means every class is there.
    let done = dir.join("compiled");
    if done.is_file() {
        return Ok(dir);
    }
    let scratch = base.join(format!("{name}.{}", std::process::id()));
    let _ = fs::remove_dir_all(&scratch);
    fs::create_dir_all(&scratch)
        .map_err(|e| Error::io(format!("creating {}", scratch.display()), e))?;
    let out = Command::new(javac)
        .args(["-encoding", "UTF-8", "-nowarn", "-d"])
        .arg(&scratch)
        .arg("-cp")
        .arg(classpath)
        .args(sources)
        .output()
        .map_err(|e| Error::io(format!("running {}", javac.display()), e))?;
    if !out.status.success() {
        let _ = fs::remove_dir_all(&scratch);
        return Err(Error::JavaSetup {
            message: format!(
                "javac {} failed ({}):\n{}{}",
                sources[0].display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    fs::write(scratch.join("compiled"), b"")
        .map_err(|e| Error::io(format!("writing {}", scratch.display()), e))?;
    if fs::rename(&scratch, &dir).is_err() {
        // Another run got there first.
        let _ = fs::remove_dir_all(&scratch);
        if !done.is_file() {
            return Err(Error::JavaSetup {
                message: format!("could not move the classes to {}", dir.display()),
            });
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_jar_is_named_with_where_it_was_looked_for() {
        let result = JavaPrograms::debian_classpath(&["zookeeper", "no-such-jar-zkrs"], &[]);
        match std::env::var_os(CURATOR_CLASSPATH_ENV).filter(|v| !v.is_empty()) {
            // The override is taken as it is.
            Some(cp) => assert_eq!(result.unwrap(), cp),
            None => {
                let e = result.unwrap_err();
                assert!(matches!(e, Error::JavaSetup { .. }), "{e:?}");
                let text = e.to_string();
                assert!(
                    text.contains("missing /usr/share/java/no-such-jar-zkrs.jar"),
                    "{text}"
                );
                assert!(!text.contains("zookeeper.jar"), "{text}");
            }
        }
    }
}
