//! Our recipes against the model, with what a real server cannot do on demand: a session
//! expired at a chosen moment, in milliseconds, without a JVM.

use std::time::Duration;

use tokio::time::timeout;
use zkrs_client::Client;
use zkrs_model::TcpServer;
use zkrs_recipes::{
    leader::{LeaderLatch, LeadershipEvent},
    lock::InterProcessMutex,
};

const DEADLINE: Duration = Duration::from_secs(20);

async fn connect(model: &TcpServer) -> Client {
    timeout(DEADLINE, Client::connect(&model.connect_string()))
        .await
        .expect("connect in time")
        .expect("connect")
}

async fn expire(model: &TcpServer, session: i64) {
    model
        .with_server(move |server, now| server.expire_session(session, now))
        .await
        .expect("the model runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_leaders_latch_passes_to_the_next_in_line() {
    let model = TcpServer::start().await.unwrap();
    let (a, b) = (connect(&model).await, connect(&model).await);
    let first = LeaderLatch::builder(&a, "/election")
        .id("a")
        .start()
        .unwrap();
    timeout(DEADLINE, first.await_leadership())
        .await
        .unwrap()
        .unwrap();
    let mut first_events = first.events();
    let second = LeaderLatch::builder(&b, "/election")
        .id("b")
        .start()
        .unwrap();
    assert!(!second.is_leader());

    expire(&model, a.session_id()).await;
    timeout(DEADLINE, second.await_leadership())
        .await
        .expect("b leads once a's session expired")
        .unwrap();
    let mut lost = false;
    while !lost {
        match timeout(DEADLINE, first_events.next())
            .await
            .expect("a hears it lost")
        {
            Some(LeadershipEvent::Lost) => lost = true,
            Some(_) => {}
            None => panic!("a's events ended"),
        }
    }
    assert!(!first.is_leader());
    first.close().await.unwrap();
    second.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_whose_session_expires_is_lost_and_taken_by_the_waiter() {
    let model = TcpServer::start().await.unwrap();
    let (a, b) = (connect(&model).await, connect(&model).await);
    let held = timeout(
        DEADLINE,
        InterProcessMutex::builder(&a, "/lock")
            .build()
            .unwrap()
            .acquire(),
    )
    .await
    .unwrap()
    .unwrap();
    let waiter = {
        let mutex = InterProcessMutex::builder(&b, "/lock").build().unwrap();
        tokio::spawn(async move { mutex.acquire().await })
    };
    // The waiter's node is there before the holder's session goes.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let (children, watch) = a.get_children_and_watch("/lock").await.unwrap();
        if children.len() == 2 {
            break;
        }
        tokio::time::timeout_at(deadline, watch)
            .await
            .expect("the waiter queues");
    }
    expire(&model, a.session_id()).await;
    timeout(DEADLINE, held.lost())
        .await
        .expect("the holder learns it lost the lock");
    let taken = timeout(DEADLINE, waiter)
        .await
        .expect("the waiter gets the lock")
        .unwrap()
        .unwrap();
    taken.release().await.unwrap();
}
