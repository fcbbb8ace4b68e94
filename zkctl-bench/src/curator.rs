//! Curator's side of `bench lock|latch|semaphore --curator`: `tests/java/
//! CuratorContentionBench.java` (built into the binary, so it needs no source tree),
//! compiled through the test kit's `JavaPrograms` against Curator's jars, as the interop
//! tests' peers are. zkctl's `commands/bench_curator.rs` starts it and talks to it.

use std::path::PathBuf;

use zkrs_testkit::JavaPrograms;

/// The program's source.
const SOURCE: &str = include_str!("../../tests/java/CuratorContentionBench.java");
/// Its class.
const CLASS: &str = "CuratorContentionBench";
/// The full JIT, a heap for many sessions, Curator's warnings on stderr (the ZooKeeper
/// client's only when they are errors: it warns of every socket the server closes as the
/// sessions end).
const JVM: &[&str] = &[
    "-Xmx512m",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper=error",
    "-Dorg.slf4j.simpleLogger.logFile=System.err",
];
const INSTALL_HINT: &str = "--curator needs a JDK (javac) and Curator's jars in the jar cache \
     (ZKRS_TEST_CURATOR chooses the version): run scripts/install-zookeeper.sh, or set \
     ZKR_CURATOR_CLASSPATH / ZKR_JAVAC";

/// Compiles the program (once per content: the classes stay in the temporary folder) and
/// returns the JVM's command line for it, without the program's own arguments.
pub fn program() -> Result<std::process::Command, String> {
    compile()
        .map(|programs| programs.command(JVM, CLASS))
        .map_err(|e| format!("{e}\n{INSTALL_HINT}"))
}

fn compile() -> Result<JavaPrograms, String> {
    let classpath = JavaPrograms::curator_classpath().map_err(|e| e.to_string())?;
    let base = std::env::temp_dir().join("zkctl-java");
    // The source goes to a folder of this process's own, so concurrent runs never read a
    // half-written file; the classes are shared by content.
    let folder = base.join(format!("source-{}", std::process::id()));
    let source: PathBuf = folder.join(format!("{CLASS}.java"));
    std::fs::create_dir_all(&folder)
        .and_then(|()| std::fs::write(&source, SOURCE))
        .map_err(|e| format!("writing {}: {e}", source.display()))?;
    let compiled = JavaPrograms::compile(&[source], &classpath, &base, "curator-contention-bench");
    let _ = std::fs::remove_dir_all(&folder);
    compiled.map_err(|e| e.to_string())
}
