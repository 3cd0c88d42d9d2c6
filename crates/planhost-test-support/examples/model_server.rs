//! A scripted model server for trying an agent by hand: every line of stdin is one reply (text,
//! or `tool NAME {json-args}`); the base URL is printed first.
//!
//! `cargo run -p planhost-test-support --example model_server`
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;

use planhost_test_support::{ModelServer, Reply};

fn main() {
    let server = ModelServer::start().expect("start the model server");
    println!("{}", server.base_url());
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let reply = match line.strip_prefix("tool ") {
            Some(rest) => {
                let (name, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
                Reply::tool(name, serde_json::from_str(args).expect("JSON arguments"))
            }
            None => Reply::text(&line.replace("\\n", "\n")),
        };
        server.push(reply);
    }
    std::thread::park();
}
