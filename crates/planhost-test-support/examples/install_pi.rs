//! Installs both pi versions the end-to-end tests drive (`cargo run -p planhost-test-support
//! --example install_pi`), so CI can do it once before the tests, and prints where they are.

#![allow(clippy::print_stdout)]

use planhost_test_support::{Version, ensure_pi, pi_install::e2e_root};

fn main() {
    println!("installing under {}", e2e_root().display());
    for version in Version::ALL {
        let install = ensure_pi(version);
        println!("{version}: pi {}", install.pi_bin.display());
        match &install.node_bin_dir {
            Some(dir) => println!("{version}: node {}", dir.join("node").display()),
            None => println!("{version}: node from PATH"),
        }
    }
}
