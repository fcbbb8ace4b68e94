//! Serves a model ZooKeeper on 127.0.0.1 until interrupted, for zkCli.sh, Curator or any
//! client: `cargo run -p zkrs-model --example serve [PORT]` (PORT 0 or none: a free port).

use std::time::Duration;

use zkrs_model::{ServerConfig, TcpServer};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let mut config = ServerConfig::default();
    // zkCli.sh asks for 30 s; allow it (the default is the test kit's 4 s maximum).
    config.max_session_timeout = Some(Duration::from_secs(60));
    // Real wall-clock times in ctime/mtime (the core itself never reads a clock).
    config.epoch_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let server = TcpServer::start_on(port, config).await?;
    println!("model ZooKeeper 3.8 serving on {}", server.connect_string());
    tokio::signal::ctrl_c().await?;
    Ok(())
}
