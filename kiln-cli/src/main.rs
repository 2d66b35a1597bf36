//! The `kiln` command-line tool.
//!
//! - `kiln reflect FILE.spv [FILE.spv ...] [--json] [--entry NAME] [--all-bindings]`
//! - `kiln bench [--quick] [--json]`
//! - `kiln devices`
//!
//! Install it with `cargo install --path kiln-cli`. The benchmark itself lives in the
//! `kiln-bench` crate.

mod reflect;

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!(
        "usage:\n  kiln reflect FILE.spv [FILE.spv ...] [--json] [--entry NAME] [--all-bindings]\n  \
         kiln bench [--quick] [--json] [--size-log2 N]\n  kiln devices"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let _ = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .try_init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("reflect") => reflect::main(&args[1..]),
        Some("bench") => kiln_bench::main(&args[1..]),
        Some("devices") => match kiln::Device::new() {
            Ok(d) => {
                println!("{}", d.info());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        _ => usage(),
    }
}
