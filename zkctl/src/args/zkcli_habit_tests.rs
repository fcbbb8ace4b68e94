//! zkCli.sh's flags and commands parse to the zkctl commands of the same meaning.

use std::time::Duration;

use super::*;

fn command(line: &str) -> Command {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    match parse(&args, None) {
        Ok(Action::Run(_, c)) => c,
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

#[test]
fn zkcli_habits_mean_what_they_mean_in_zkcli() {
    // `ls -R` prints every path of the subtree, as `find` does (commands/data.rs).
    assert!(matches!(
        command("ls -R /"),
        Command::Ls(LsArgs {
            recursive: true,
            ..
        })
    ));
    assert!(matches!(
        command("ls -s /a"),
        Command::Ls(LsArgs { stat: true, .. })
    ));
    assert!(error("ls -R -s /").contains("cannot be used with"));
    let c = command("create -e -s /x data");
    assert!(
        matches!(&c, Command::Create(a)
            if a.ephemeral && a.sequential && a.data.as_deref() == Some("data")),
        "{c:?}"
    );
    assert!(matches!(command("create -c /x"), Command::Create(a) if a.container));
    assert!(matches!(command("create -t 5000 /x"),
                 Command::Create(a) if a.ttl == Some(Duration::from_millis(5000))));
    assert!(matches!(
        command("get -s -w /a"),
        Command::Get(GetArgs {
            stat: true,
            watch: true,
            ..
        })
    ));
    assert!(matches!(
        command("stat -w /a"),
        Command::Stat(StatArgs { watch: true, .. })
    ));
    assert!(matches!(command("deleteall /a"), Command::Deleteall(a) if a.path == "/a"));
}
