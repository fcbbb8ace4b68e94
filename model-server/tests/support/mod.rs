//! The `zkrs-model` binary as a test runs it: a child process whose first stdout line is
//! the connect string, its stderr collected, stopped with a signal; and four-letter words.
#![allow(dead_code)] // each test file uses some of these

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// For anything that should happen (the machine may be busy).
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_zkrs-model");

/// A running `zkrs-model`. Killed on drop.
pub struct Model {
    child: Child,
    /// The connect string, its first stdout line.
    pub connect: String,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<thread::JoinHandle<()>>,
}

impl Model {
    /// Starts `zkrs-model ARGS` and waits for its connect string.
    pub fn start(args: &[&str]) -> Model {
        let mut command = Command::new(BIN);
        command.args(args);
        Model::spawn(command)
    }

    /// Starts `command` (one that runs `zkrs-model`) and waits for its connect string.
    pub fn spawn(mut command: Command) -> Model {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start zkrs-model");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let mut err = child.stderr.take().expect("piped stderr");
        let stderr_reader = thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]);
                sink.lock().unwrap().push_str(&text);
            }
        });
        let out = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(DEADLINE).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("no connect string within {DEADLINE:?}")
        });
        let connect = line.trim_end().to_owned();
        assert!(
            !connect.is_empty(),
            "zkrs-model printed no connect string; stderr:\n{}",
            stderr.lock().unwrap()
        );
        Model {
            child,
            connect,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// The members' addresses.
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.connect
            .split(',')
            .map(|a| a.parse().expect("host:port"))
            .collect()
    }

    /// What it wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends `signal` (`TERM`, `INT`) and waits for the exit.
    pub fn signal(mut self, signal: &str) -> (ExitStatus, String) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} failed");
        let status = wait(&mut self.child);
        // The stderr reader ends at the end of the process's stderr.
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        (status, self.stderr())
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` to exit, at most [`DEADLINE`].
pub fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("zkrs-model did not exit within {DEADLINE:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Sends a four-letter word and reads the answer until the server closes the connection.
pub fn four_letter_word(addr: SocketAddr, word: &str) -> String {
    let mut stream = TcpStream::connect_timeout(&addr, DEADLINE).expect("connect");
    stream.set_read_timeout(Some(DEADLINE)).unwrap();
    stream.write_all(word.as_bytes()).unwrap();
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .unwrap_or_else(|e| panic!("{word} to {addr}: {e}"));
    answer
}
