//! Which command lines run a command of the user's, parsed or not: their failures take the
//! codes out of CMD's way (`crate::failure::Codes`).

use super::*;

fn words(s: &str) -> Vec<String> {
    s.split(' ').map(String::from).collect()
}

#[test]
fn unparsed_command_lines() {
    for line in [
        "lock /l --bogus -- true",
        "lock /l",
        "--server h:1 lock /l --timeout x -- true",
        "--server=h:1 -v elect /e -- true",
        "--output json barrier /b --count x -- true",
        "member /g id data extra",
        "--session-timeout 100 service --server h:1 register /s n --port x -- true",
    ] {
        assert!(runs_command_in(&words(line)), "{line}");
    }
    for line in [
        "ls /l --bogus",
        "get lock",
        "--server lock ls /",
        "service register /s n --port x",
        "service list /s -- x",
        "queue take /q --timeout x",
        "-- lock /l true",
        "frobnicate",
    ] {
        assert!(!runs_command_in(&words(line)), "{line}");
    }
}

#[test]
fn parsed_commands() {
    let parsed = |line: &str| match parse(&words(line), None).unwrap() {
        Action::Run(_, command) => command.runs_command(),
        other => panic!("{other:?}"),
    };
    assert!(parsed("lock /l -- true"));
    assert!(parsed("elect /e true"));
    assert!(parsed("barrier /b --count 2 -- true"));
    assert!(parsed("member /g id -- true"));
    assert!(parsed("service register /s n --address a --port 1 -- true"));
    assert!(!parsed(
        "service register /s n --address a --port 1 --type permanent"
    ));
    assert!(!parsed("queue take /q --timeout 10"));
    assert!(!parsed("get /lock"));
}
