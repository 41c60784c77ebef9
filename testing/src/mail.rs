//! Owns the tests' mail server: a real SMTP server on loopback
//! (`testing/mail_sink.py`, on PyPI's `aiosmtpd`) that keeps every message
//! it accepts, parsed by Python's email package, for a test to read.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{eventually, runs, tool_available};
use hado_core::config::SmtpConfig;

const SINK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/mail_sink.py");

/// The SMTP server, and every message it accepted, in order.
pub struct MailSink {
    port: u16,
    received: Arc<Mutex<Vec<Mail>>>,
    _process: tokio::process::Child,
}

impl MailSink {
    /// The server on a free port, or none (with a line saying why, and a
    /// failure under CI) when `aiosmtpd` is not installed.
    pub async fn start(test: &str) -> Option<Self> {
        let found = runs("python3", &["-c", "import aiosmtpd"]);
        if !tool_available(test, found, "pip install aiosmtpd") {
            return None;
        }
        let mut process = tokio::process::Command::new("python3")
            .arg(SINK)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the SMTP sink starts");
        let mut lines = BufReader::new(process.stdout.take().expect("its output")).lines();
        let port = lines
            .next_line()
            .await
            .expect("the sink's output")
            .expect("the sink says its port")
            .parse()
            .expect("a port number");
        let received = Arc::new(Mutex::new(Vec::new()));
        let keep = received.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let message = serde_json::from_str(&line).expect("the sink writes JSON");
                keep.lock().expect("the mailbox").push(Mail(message));
            }
        });
        Some(Self { port, received, _process: process })
    }

    /// How core reaches this server: plain SMTP on loopback, from `from`.
    pub fn config(&self, from: &str) -> SmtpConfig {
        SmtpConfig::read(&format!("smtp://127.0.0.1:{}", self.port), from)
            .expect("a loopback mail server URL")
    }

    /// Every message accepted so far.
    pub fn received(&self) -> Vec<Mail> {
        self.received.lock().expect("the mailbox").clone()
    }

    /// Waits (a few seconds at most) until `count` messages have arrived,
    /// and returns them all.
    pub async fn wait_for(&self, count: usize) -> Vec<Mail> {
        eventually(&format!("{count} messages"), || {
            let received = self.received();
            std::future::ready((received.len() >= count).then_some(received))
        })
        .await
    }
}

/// One message as Python's email package read it.
#[derive(Clone, Debug)]
pub struct Mail(pub Value);

impl Mail {
    /// A header's first value (`name` in lower case), decoded.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.0["headers"][name][0].as_str()
    }

    /// A header's first value as it was written, before any decoding and
    /// with its folding.
    pub fn raw_header(&self, name: &str) -> Option<&str> {
        self.0["raw_headers"][name][0].as_str()
    }

    /// The envelope's recipients, as `RCPT TO` named them.
    pub fn recipients(&self) -> Vec<&str> {
        let recipients = self.0["to"].as_array().expect("the envelope's recipients");
        recipients.iter().filter_map(Value::as_str).collect()
    }

    /// The text of the part of MIME type `kind`.
    pub fn part(&self, kind: &str) -> &str {
        self.0["parts"]
            .as_array()
            .expect("the parts")
            .iter()
            .find(|part| part["type"] == kind)
            .and_then(|part| part["text"].as_str())
            .unwrap_or_else(|| panic!("no {kind} part in {}", self.0))
    }

    /// The MIME types of its parts, outermost first.
    pub fn kinds(&self) -> Vec<&str> {
        let parts = self.0["parts"].as_array().expect("the parts");
        parts.iter().filter_map(|part| part["type"].as_str()).collect()
    }

    /// The addresses in the text part whose path starts with `path` (`/c/`,
    /// `/a/`), in order, each whole.
    pub fn links(&self, path: &str) -> Vec<String> {
        let text = self.part("text/plain");
        let links: Vec<String> = text
            .split_whitespace()
            .filter(|word| word.starts_with("http") && word.contains(path))
            .map(str::to_owned)
            .collect();
        assert!(!links.is_empty(), "no link to {path} in {text}");
        links
    }
}
