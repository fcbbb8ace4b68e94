//! zkrs-client against the model over TCP: the adapter and the core serve a real client.

use std::time::Duration;

use tokio::time::timeout;
use zkrs_client::{Client, ErrorCode};
use zkrs_codec::{CreateMode, EventType};
use zkrs_model::TcpServer;

const DEADLINE: Duration = Duration::from_secs(10);

#[tokio::test]
async fn client_round_trip_with_watches_and_ephemerals() {
    let server = TcpServer::start().await.unwrap();
    let a = timeout(DEADLINE, Client::connect(&server.connect_string()))
        .await
        .unwrap()
        .unwrap();
    let b = timeout(DEADLINE, Client::connect(&server.connect_string()))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(a.session_id(), b.session_id());

    a.create("/app", b"v0", CreateMode::Persistent)
        .await
        .unwrap();
    let seq = a
        .create("/app/job-", b"", CreateMode::PersistentSequential)
        .await
        .unwrap();
    assert_eq!(seq, "/app/job-0000000000");
    let err = a
        .create("/app", b"", CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NodeExists));
    let err = a
        .create("/none/x", b"", CreateMode::Persistent)
        .await
        .unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NoNode));

    let (data, stat, watch) = a.get_data_and_watch("/app").await.unwrap();
    assert_eq!(&data[..], b"v0");
    assert_eq!(stat.version, 0);
    b.set_data("/app", b"v1", Some(0)).await.unwrap();
    let event = timeout(DEADLINE, watch).await.unwrap();
    assert_eq!(event.event_type, EventType::NodeDataChanged);
    let err = b.set_data("/app", b"v2", Some(0)).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::BadVersion));

    b.create("/app/eph", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    let (found, gone) = a.exists_and_watch("/app/eph").await.unwrap();
    assert_eq!(found.unwrap().ephemeral_owner, b.session_id());
    b.close().await.unwrap();
    let event = timeout(DEADLINE, gone).await.unwrap();
    assert_eq!(event.event_type, EventType::NodeDeleted);
    assert!(a.exists("/app/eph").await.unwrap().is_none());
    assert_eq!(a.get_children("/app").await.unwrap().len(), 1);
}

/// `stop` closes every connection and the listener; `restart` serves the same tree and
/// sessions on the same port, so the client reconnects with its session and its ephemeral.
#[tokio::test]
async fn stop_and_restart_keep_the_state_and_the_port() {
    let mut server = TcpServer::start().await.unwrap();
    let addr = server.addr();
    let client = timeout(DEADLINE, Client::connect(&server.connect_string()))
        .await
        .unwrap()
        .unwrap();
    client
        .create("/kept", b"v", CreateMode::Persistent)
        .await
        .unwrap();
    client
        .create("/mine", b"", CreateMode::Ephemeral)
        .await
        .unwrap();
    server.stop().await;
    assert!(!server.is_serving());
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    assert!(server.with_server(|_, _| ()).await.is_none());
    server.restart().await.unwrap();
    assert_eq!(server.addr(), addr);
    let (data, _) = timeout(DEADLINE, client.get_data("/kept"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&data[..], b"v");
    let owner = client
        .exists("/mine")
        .await
        .unwrap()
        .unwrap()
        .ephemeral_owner;
    assert_eq!(owner, client.session_id());
}
