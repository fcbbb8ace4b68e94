//! A reply over the client's reply limit from a real server (ZOOKEEPER-3593): a node of
//! 2 MiB, written by a client whose request limit allows it to a server whose
//! `jute.maxbuffer` does, read by a client with the default limits. Only that read fails,
//! with a kind a caller can match, not retryable; the connection stays, so a lock held on the
//! same client is not lost, every other request goes on, and no reconnect happens (before,
//! the connection dropped, every request in flight failed as retryable, and a retrying caller
//! reconnected forever).

use std::time::Duration;

use zkrs_client::{Client, ClientBuilder, CreateMode, ErrorKind};
use zkrs_recipes::lock::InterProcessMutex;
use zkrs_testkit::{ServerOptions, TestingServer};

mod support;
use support::*;

const BIG: usize = 2 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2_mib_reply_fails_its_read_alone_and_the_lock_holds() {
    let options = ServerOptions::new().system_property("jute.maxbuffer", (4 * BIG).to_string());
    let zk = TestingServer::start_with(options).unwrap();
    let writer = ClientBuilder::new(zk.connect_string())
        .max_frame_len(4 * BIG)
        .connect()
        .await
        .unwrap();
    writer
        .create("/big", &vec![0x5A; BIG], CreateMode::Persistent)
        .await
        .unwrap();
    writer
        .create("/small", b"fine", CreateMode::Persistent)
        .await
        .unwrap();

    let client = Client::connect(&zk.connect_string()).await.unwrap();
    let mutex = InterProcessMutex::builder(&client, "/locks/big")
        .build()
        .unwrap();
    let guard = within("acquire", mutex.acquire()).await.unwrap();
    let connections = client.metrics().connections;

    // The big read and a small one in flight together: only the big one fails.
    let (big, small) = within("the reads", async {
        tokio::join!(client.get_data("/big"), client.get_data("/small"))
    })
    .await;
    let e = big.expect_err("a reply over the limit is an error");
    assert_eq!(e.kind(), ErrorKind::ReplyTooLarge, "{e}");
    assert!(!e.is_retryable(), "{e}");
    let text = e.to_string();
    assert!(text.contains("1114111"), "names the limit: {text}");
    assert!(text.contains("/big"), "names the path: {text}");
    let (data, _) = small.expect("the other read goes on");
    assert_eq!(&data[..], b"fine");

    // Again, and the session carries on: a write, a read, the lock still held.
    let again = within("the read again", client.get_data("/big")).await;
    assert_eq!(again.unwrap_err().kind(), ErrorKind::ReplyTooLarge);
    within("a write after", client.set_data("/small", b"still", None))
        .await
        .unwrap();
    let stat = within("exists", client.exists("/big")).await.unwrap();
    assert!(stat.is_some());
    assert!(guard.is_held(), "the lock was reported lost");
    assert!(client.state().is_connected(), "{:?}", client.state());
    assert_eq!(
        client.metrics().connections,
        connections,
        "the client reconnected"
    );

    // A client whose reply limit allows it reads the node.
    let roomy = ClientBuilder::new(zk.connect_string())
        .session_timeout(Duration::from_secs(10))
        .max_reply_len(BIG + 1024)
        .connect()
        .await
        .unwrap();
    let (data, _) = within("a roomy read", roomy.get_data("/big"))
        .await
        .unwrap();
    assert_eq!(data.len(), BIG);

    within("release", guard.release()).await.unwrap();
}
