//! `kiln reflect`: placeholder until the reflection CLI lands.
use std::process::ExitCode;

pub fn main(args: &[String]) -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        match kiln::ShaderModule::from_file(path) {
            Ok(m) => println!("{path}: {:#?}", m.reflection()),
            Err(e) => {
                eprintln!("{path}: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
