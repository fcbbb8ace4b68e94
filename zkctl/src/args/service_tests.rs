//! `service`'s command lines: what each means, and what each mistake says.

use std::time::Duration;

use super::hold::Grace;
use super::service::{PickArgs, ServiceListArgs, ServiceWatchArgs, UnregisterArgs};
use super::*;

fn command(line: &str) -> (Globals, Command) {
    let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    match parse(&args, None) {
        Ok(Action::Run(g, c)) => (*g, c),
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
fn service_actions() {
    let (_, c) = command(
        "service register /services api --address 10.0.0.5 --port 8080 --ssl-port 8443 \
         --id i-1 --payload {\"zone\":\"a\"} --type static --enabled false \
         --uri-spec {scheme}://{address}:{port} --grace 500 -- ./serve --port 80",
    );
    assert_eq!(
        c,
        Command::Service(ServiceSub::Register(Box::new(RegisterArgs {
            base: "/services".into(),
            name: "api".into(),
            id: Some("i-1".into()),
            address: "10.0.0.5".into(),
            port: Some(8080),
            ssl_port: Some(8443),
            payload: Some(r#"{"zone":"a"}"#.into()),
            kind: ServiceKind::Static,
            enabled: Some(false),
            uri_spec: Some("{scheme}://{address}:{port}".into()),
            grace: Grace {
                grace: Some(Duration::from_millis(500))
            },
            extra: vec![],
            command: vec!["./serve".into(), "--port".into(), "80".into()],
        })))
    );
    // A permanent instance needs no command; --ssl-port alone will do.
    let (_, c) = command("service register /s api --address h --ssl-port 443 --type permanent");
    let Command::Service(ServiceSub::Register(r)) = c else {
        panic!("{c:?}")
    };
    assert_eq!(
        (r.port, r.ssl_port, r.kind),
        (None, Some(443), ServiceKind::Permanent)
    );
    assert!(r.command.is_empty() && r.id.is_none() && r.enabled.is_none());
    let service = |line: &str| match command(line).1 {
        Command::Service(s) => s,
        other => panic!("{line}: {other:?}"),
    };
    let (base, api) = (String::from("/s"), String::from("api"));
    assert_eq!(
        service("service unregister /s api i-1"),
        ServiceSub::Unregister(UnregisterArgs {
            base: base.clone(),
            name: api.clone(),
            id: "i-1".into()
        })
    );
    assert_eq!(
        service("service list /s"),
        ServiceSub::List(ServiceListArgs {
            base: base.clone(),
            name: None
        })
    );
    assert_eq!(
        service("service list /s api"),
        ServiceSub::List(ServiceListArgs {
            base: base.clone(),
            name: Some(api.clone())
        })
    );
    assert_eq!(
        service("service watch /s api --for 1500"),
        ServiceSub::Watch(ServiceWatchArgs {
            base: base.clone(),
            name: api.clone(),
            run_for: Some(Duration::from_millis(1500))
        })
    );
    assert_eq!(
        service("service pick /s api"),
        ServiceSub::Pick(PickArgs {
            base: base.clone(),
            name: api.clone(),
            strategy: PickStrategy::RoundRobin,
            count: 1
        })
    );
    assert_eq!(
        service("service pick /s api --strategy random --count 3"),
        ServiceSub::Pick(PickArgs {
            base,
            name: api,
            strategy: PickStrategy::Random,
            count: 3
        })
    );
}

#[test]
fn service_usage_errors() {
    let register = "service register /s api --address h --port 80";
    assert!(error("service").contains("[subcommands: register, unregister, list, watch, pick"));
    assert!(error("service frob /s").contains("unrecognized subcommand 'frob'"));
    assert!(error("service list").contains("not provided: <BASE>"));
    assert!(error("service watch /s").contains("not provided: <NAME>"));
    assert!(error("service unregister /s api").contains("not provided: <ID>"));
    assert!(error("service list /s a b").contains("unexpected argument 'b'"));
    assert!(error("service pick /s a -- true").contains("unexpected argument 'true'"));
    assert!(error(&format!("{register} ./serve")).contains("needs -- before the command"));
    assert!(error(&format!("{register} ./serve 80")).contains("needs -- before the command"));
    // Dynamic and static instances go when zkctl ends: they need a command.
    assert!(error(register).contains("ephemeral"));
    assert!(error(&format!("{register} --type static")).contains("static"));
    assert_eq!(
        error("service register /s api --port 80 -- true"),
        "the following required arguments were not provided: --address <A>; usage: zkctl \
         service register --address <A> <--port <P>|--ssl-port <P>> <BASE> <NAME> -- <CMD>..."
    );
    assert!(error("service register /s api --address h -- true")
        .contains("not provided: <--port <P>|--ssl-port <P>>"));
    assert!(error("service register /s api --address= --port 1 -- true").contains("empty"));
    for bad in ["0", "65536", "-1", "http"] {
        assert_eq!(
            error(&format!("{register} --port {bad} -- true").replace("--port 80 ", "")),
            format!("invalid value '{bad}' for '--port <P>': not a port number (1-65535)")
        );
    }
    assert!(error(&format!("{register} --ssl-port 70000 -- true")).contains("--ssl-port"));
    assert!(error(&format!("{register} --type forever -- true"))
        .contains("[possible values: dynamic, static, permanent]"));
    assert!(error(&format!("{register} --enabled yes -- true")).contains("'yes'"));
    assert!(error(&format!("{register} --id a/b -- true")).contains("an instance id"));
    assert!(error("service list /s a/b").contains("a service name"));
    assert!(error("service unregister /s a ..").contains("an instance id"));
    // Each action's flags are its own.
    assert_eq!(
        error(&format!("{register} --count 2 -- true")),
        // clap finds the global `--output` similar enough to suggest.
        "unexpected argument '--count' found; a similar argument exists: '--output'"
    );
    assert!(error("service watch /s api --port 1").starts_with("unexpected argument '--port'"));
    assert_eq!(
        error("service pick /s api --for 1"),
        "unexpected argument '--for' found"
    );
    assert!(error("service pick /s api --strategy sticky").contains("'sticky'"));
    assert!(error("service pick /s api --count 0").contains("at least 1"));
    assert!(error("service watch /s api --for soon").contains("milliseconds"));
    assert!(error("service list /s --bogus").contains("unexpected argument '--bogus'"));
}
