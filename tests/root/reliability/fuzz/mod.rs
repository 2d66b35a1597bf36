//! The API-sequence fuzzer (issue 17, part 3a): proptest generates small programs over
//! kiln's public API and runs them on one device under the validation layer (with
//! synchronization validation): create and drop buffers, images, sets and pipelines;
//! write sets (sometimes wrongly); upload and read back; record dispatches, fills, copies,
//! image copies, transitions and barriers, and run them once (`execute`), asynchronously
//! (`submit`, waited for later or dropped) or recorded once and resubmitted; some cases
//! run two programs on two threads at once.
//!
//! A model of every buffer's and image's contents runs beside the GPU (all values are small
//! whole floats, so additions are exact), and after every step the fuzzer checks: no panic,
//! every failure is one of the coded errors the step may return (anything else fails, a
//! `KILN-E104`/`E105`/`E106` included), every readback equals the model, zero validation
//! messages; after every program, that the device's live allocations are back where they
//! started; at teardown, the object tracker and gpu-allocator report nothing.
//!
//! `KILN_FUZZ_PROGRAMS=n` sets the batch (default 10 000 in CI), `KILN_FUZZ_LONG=1` runs
//! 200 000, `KILN_FUZZ_SEED=hex` replays a seed (the seed is printed first, the shrunk
//! failing program at a failure).

mod model;
mod program;
mod record;
mod world;

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use common::add::vector_add;
use common::{allocator_warnings, assert_watch_clean, device};
use kiln::{ComputePipeline, Device};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use program::{case, Program};
use world::run_program;

/// Elements (f32) of every buffer: 256 bytes, the size of an 8×8 RGBA8 image.
const LEN: usize = 64;
const BUFS: usize = 4;
const SETS: usize = 2;
const IMGS: usize = 2;

/// Counters printed at the end: steps run, GPU executions whose effects were applied,
/// buffer and image readbacks compared with the model, coded errors expected and seen.
static STEPS: AtomicU64 = AtomicU64::new(0);
static EXECUTIONS: AtomicU64 = AtomicU64::new(0);
static CHECKED_READS: AtomicU64 = AtomicU64::new(0);
static CODED_ERRORS: AtomicU64 = AtomicU64::new(0);

/// A step's result: `Ok`, or an error whose code is one of `allowed`.
fn expect<T>(r: kiln::Result<T>, allowed: &[&str], step: &str) -> Result<Option<T>, TestCaseError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if allowed.contains(&e.code()) => {
            CODED_ERRORS.fetch_add(1, Ordering::Relaxed);
            Ok(None)
        }
        Err(e) => Err(TestCaseError::fail(format!("{step}: unexpected error {e}"))),
    }
}

static PROGRAMS: AtomicU64 = AtomicU64::new(0);

/// The device the cases share, its vector_add pipeline and its live allocations with no
/// case running. Replaced by a new one after a case that left validation messages (so
/// that shrinking sees each smaller program on a clean device).
struct Fixture {
    device: Device,
    pipeline: ComputePipeline,
    baseline: usize,
    watch: kiln::ValidationWatch,
}

impl Fixture {
    fn new() -> Fixture {
        let device = device();
        let watch = device.validation_watch();
        let pipeline = vector_add(&device);
        device.release_staging_memory();
        let baseline = device.memory_report().allocations;
        Fixture {
            device,
            pipeline,
            baseline,
            watch,
        }
    }
}

/// Runs a case (one program, or two on two threads), then checks that everything the
/// programs made is gone once the device has caught up.
fn run_case(fixture: &Fixture, case: &[Program]) -> Result<(), TestCaseError> {
    let (device, pipeline, baseline) = (&fixture.device, &fixture.pipeline, fixture.baseline);
    let results: Vec<Result<(), TestCaseError>> = std::thread::scope(|s| {
        let handles: Vec<_> = case
            .iter()
            .map(|p| s.spawn(move || run_program(device, pipeline, p)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(TestCaseError::fail("the program panicked")))
            })
            .collect()
    });
    PROGRAMS.fetch_add(case.len() as u64, Ordering::Relaxed);
    for r in results {
        r?;
    }
    // Every dropped object is destroyed once the device caught up (a wait collects). The
    // device wait also tells the validation layer that every batch finished: its
    // submit-time synchronization checks (layer 1.3.239) otherwise take the memory of a
    // buffer or image freed after a timeline value the host saw complete (without a
    // vkWait* call) as still in use by that batch, and report the next resource placed in
    // that memory (a hazard the timeline wait of the next submission does order).
    device
        .execute(|r| r.barrier())
        .map_err(|e| TestCaseError::fail(format!("after the case: {e}")))?;
    device
        .wait_idle()
        .map_err(|e| TestCaseError::fail(format!("after the case: {e}")))?;
    device.release_staging_memory();
    let live = device.memory_report().allocations;
    if live != baseline {
        return Err(TestCaseError::fail(format!(
            "{live} allocations live after the case, {baseline} before: a leak"
        )));
    }
    Ok(())
}

#[test]
fn api_sequences_stay_coded_validation_clean_and_leak_free() {
    let programs: u32 = std::env::var("KILN_FUZZ_PROGRAMS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if std::env::var("KILN_FUZZ_LONG").is_ok_and(|v| v == "1") {
            200_000
        } else {
            10_000
        });
    let seed: [u8; 32] = match std::env::var("KILN_FUZZ_SEED") {
        Ok(hex) => {
            let mut s = [0u8; 32];
            for (i, b) in s.iter_mut().enumerate() {
                *b = hex
                    .get(2 * i..2 * i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .unwrap_or(0);
            }
            s
        }
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let mut s = [0u8; 32];
            s[..16].copy_from_slice(&t.to_le_bytes());
            s
        }
    };
    let hex: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    println!("fuzz: seed {hex} (replay with KILN_FUZZ_SEED={hex})");
    let warnings = allocator_warnings().len();
    let fixture = RefCell::new(Fixture::new());
    let devices = AtomicU64::new(1);
    let config = Config {
        cases: programs,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let start = std::time::Instant::now();
    let result = runner.run(&case(), |c| {
        // A device with messages is replaced, so each case starts clean; one with only
        // known false positives (multi-queue GPUs, layer 1.3.239) is kept until they
        // approach the report's 64 kept messages (a new device per case is slow there).
        let report = fixture.borrow().device.validation_report();
        if !report.is_clean()
            && (!common::only_known_false_positives(&report) || report.messages.len() >= 32)
        {
            let old = fixture.replace(Fixture::new());
            drop(old);
            devices.fetch_add(1, Ordering::Relaxed);
        }
        run_case(&fixture.borrow(), &c)
    });
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    println!(
        "fuzz: {} programs run ({programs} cases), {} steps, {} GPU executions checked \
         against the model, {} readbacks compared, {} coded errors as expected, {} device(s), \
         in {:.1} s",
        n(&PROGRAMS),
        n(&STEPS),
        n(&EXECUTIONS),
        n(&CHECKED_READS),
        n(&CODED_ERRORS),
        n(&devices),
        start.elapsed().as_secs_f64()
    );
    if let Err(e) = result {
        panic!("fuzz: seed {hex}: {e}");
    }
    let Fixture {
        device,
        pipeline,
        watch,
        ..
    } = fixture.into_inner();
    drop(pipeline);
    drop(device);
    assert_watch_clean(&watch);
    let leaks = allocator_warnings().split_off(warnings);
    assert!(leaks.is_empty(), "gpu-allocator reported {leaks:?}");
}
