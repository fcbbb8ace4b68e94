//! `--grace`'s default: inside the margin the session-deadline policy leaves.

use std::time::Duration;

use super::*;

fn command(line: &str) -> (Globals, Command) {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    match parse(&args, None) {
        Ok(Action::Run(g, c)) => (*g, c),
        other => panic!("{line}: {other:?}"),
    }
}

#[test]
fn grace_defaults_to_a_twentieth_of_the_session_timeout() {
    let grace = |line: &str| match command(line) {
        (g, Command::Lock(LockArgs { grace, .. }) | Command::Elect(ElectArgs { grace, .. })) => {
            grace.or_default(g.session_timeout)
        }
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
