//! The `kiln` command-line tool.
//!
//! - `kiln reflect FILE.spv [FILE.spv ...] [--json] [--entry NAME] [--all-bindings]`
//! - `kiln diagnose [--json] [--profile vulkan-min | --device] FILE.spv[+FILE.spv...] ...`
//! - `kiln bench [--quick] [--json]` (feature `bench`)
//! - `kiln devices` (the chosen device, its subgroups, compute limits and cooperative-matrix
//!   configurations)
//!
//! Install it with `cargo install kiln-cli` (`--features bench` for `kiln bench`, whose
//! `kiln-bench` crate compiles its shaders with glslc). The JSON of `reflect` and
//! `diagnose` is described, versioned by `schema_version`, in `kiln-cli/README.md`.

mod diagnose;
mod reflect;

use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!(
        "usage:\n  kiln reflect FILE.spv [FILE.spv ...] [--json] [--entry NAME] [--all-bindings]\n  \
         kiln diagnose [--json] [--profile vulkan-min | --device] FILE.spv[+FILE.spv...] ...\n  \
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
        Some("diagnose") => diagnose::main(&args[1..]),
        #[cfg(feature = "bench")]
        Some("bench") => kiln_bench::main(&args[1..]),
        #[cfg(not(feature = "bench"))]
        Some("bench") => {
            eprintln!(
                "kiln: this kiln was built without the benchmark; install it with \
                 `cargo install kiln-cli --features bench` (in kiln's checkout: \
                 `cargo run --release -p kiln-cli --features bench -- bench`)"
            );
            ExitCode::from(2)
        }
        Some("devices") => match kiln::Device::new() {
            Ok(d) => {
                println!("{}", d.info());
                let p = d.compute_properties();
                println!(
                    "  subgroups: size {} (range {}..={}, size control {}, full subgroups {}), \
                     operations {:?}, stages {:?}",
                    p.subgroup_size,
                    p.min_subgroup_size,
                    p.max_subgroup_size,
                    p.subgroup_size_control,
                    p.compute_full_subgroups,
                    p.subgroup_operations,
                    p.subgroup_stages
                );
                println!(
                    "  shared memory {} B, workgroup {:?} / {} invocations, maxBufferSize {} B, \
                     maxStorageBufferRange {} B, device addresses {}, push descriptors {} (max {})",
                    p.max_compute_shared_memory_size,
                    p.max_compute_work_group_size,
                    p.max_compute_work_group_invocations,
                    p.max_buffer_size,
                    p.max_storage_buffer_range,
                    p.buffer_device_address,
                    p.push_descriptor,
                    p.max_push_descriptors
                );
                if p.cooperative_matrix.is_empty() {
                    println!("  cooperative matrices: none");
                }
                for c in &p.cooperative_matrix {
                    println!(
                        "  cooperative matrix {}x{}x{}: A {:?} B {:?} C {:?} result {:?}, {:?}",
                        c.m, c.n, c.k, c.a_type, c.b_type, c.c_type, c.result_type, c.scope
                    );
                }
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
