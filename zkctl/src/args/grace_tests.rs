//! `--grace`'s default: inside the margin the session-deadline policy leaves.

use std::time::Duration;

use super::*;

fn command(line: &str) -> Command {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    match parse(&args, None) {
        Ok(Action::Run(_, c)) => c,
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn grace_defaults_to_a_twentieth_of_the_session_timeout() {
    let grace = |line: &str| match command(line) {
        Command::Lock { grace, .. } | Command::Elect { grace, .. } => grace,
        other => panic!("{other:?}"),
    };
    // Below the tenth the help asks for, whatever the session timeout.
    assert_eq!(grace("lock /l -- true"), Duration::from_millis(500));
    assert_eq!(
        grace("--session-timeout 30000 elect /e -- true"),
        Duration::from_millis(1500)
    );
    assert_eq!(
        grace("lock /l --session-timeout 4000 -- true"),
        Duration::from_millis(200)
    );
    assert_eq!(
        grace("lock /l --grace 3000 -- true"),
        Duration::from_secs(3)
    );
}
