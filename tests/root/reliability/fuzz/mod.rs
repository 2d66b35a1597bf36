//! The API-sequence fuzzer (issue 17, part 3a; issue 24, point 8): proptest generates
//! small programs over kiln's public API and runs them on one device under the validation
//! layer (with synchronization validation): create and drop buffers, images, sets and
//! pipelines; write sets (sometimes wrongly); upload and read back; record dispatches,
//! fills, copies, image copies, transitions, barriers and rendering scopes, and run them
//! once (`execute`), asynchronously (`submit`, waited for later or dropped) or recorded
//! once and resubmitted; some cases run two programs on two threads at once.
//!
//! **Several queues.** Under a validation layer that follows timeline semaphores (1.3.296
//! and later: Debian 13's 1.4.309) the device is `common::emulated_device()`: a compute and
//! a transfer queue of their own (on a device with one queue, lavapipe's, kiln queues with
//! timelines of their own on the main `VkQueue`), so kiln's cross-queue ordering runs.
//! An older layer (Debian 12's 1.3.239) reports the accesses kiln's timeline waits order as
//! submit-time hazards, and where the emulated queues share one `VkQueue` its messages
//! cannot be matched to the waits (`[kiln: ordered]` needs a `VkQueue` per kiln queue):
//! there the device is `common::device()`, whose kinds fall back to the main queue where
//! the device has no family for them (lavapipe; the H200 keeps its queues). Then:
//! each recording goes to the device's own path (the main queue), to
//! `Device::queue(QueueKind::Compute)` or to `QueueKind::Transfer`, and kiln's uploads and
//! readbacks go to the transfer queue. A command the queue cannot run (a dispatch on the
//! transfer queue, a rendering scope on either) must make the recording `KILN-E120`,
//! nothing else. The model applies each submission's effects in submission order, which is
//! the GPU's order wherever two submissions use one resource (`src/queue/submit.rs`: a
//! submission waits on the other queues' timelines for the last write of what it reads and
//! the last use of what it writes).
//!
//! **Draws.** A rendering scope clears (or loads) an 8×8 RGBA8 image and draws one
//! full-screen triangle (`tests/shaders/fuzz_*`) twice (the second repeats the first's
//! reads: the recorder's draw fast path), whose every pixel is a 32-bit word's four
//! bytes: a push constant, the vertex attribute of a buffer the program writes (bound as
//! the vertex buffer) or an element of one read by the fragment shader (a storage-buffer
//! set), so the automatic barriers between transfer, compute and graphics work (and
//! across queues) are exercised, and copies and readbacks of the image check every pixel.
//!
//! A model of every buffer's and image's contents runs beside the GPU (all values are the
//! bits of small whole floats, so additions are exact), and after every step the fuzzer
//! checks: no panic, every failure is one of the coded errors the step may return
//! (anything else fails, a `KILN-E104`/`E105`/`E106` included), every readback equals the
//! model, zero validation messages; after every program, that the device's live
//! allocations are back where they started; at teardown, the object tracker and
//! gpu-allocator report nothing.
//!
//! `KILN_FUZZ_PROGRAMS=n` sets the batch (default 10 000 in CI), `KILN_FUZZ_LONG=1` runs
//! 200 000, `KILN_FUZZ_SEED=hex` replays a seed (the seed is printed first, the shrunk
//! failing program at a failure).
//!
//! Files: `program.rs` (what is generated), `world.rs` (the steps), `run.rs` (a recording
//! on a queue), `record.rs` (its commands), `model.rs` (the model and the effects).

mod model;
mod program;
mod record;
mod run;
mod world;

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use common::add::vector_add;
use common::draw::RGBA8;
use common::{allocator_warnings, assert_watch_clean, emulated_device};
use kiln::VertexBufferLayout;
use kiln::{vk, ComputePipeline, Device, GraphicsPipeline, GraphicsPipelineDesc, ShaderModule};
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use program::{case, Program};
use world::run_program;

/// Elements (f32) of every buffer: 256 bytes, the size of an 8×8 RGBA8 image.
const LEN: usize = 64;
const BUFS: usize = 4;
const SETS: usize = 2;
const IMGS: usize = 2;

/// Counters printed at the end: steps run, GPU executions whose effects were applied
/// (and of those, per queue: main, compute, transfer), draws among them, buffer and image
/// readbacks compared with the model, coded errors expected and seen, and of those the
/// recordings a queue refused (`KILN-E120`).
static STEPS: AtomicU64 = AtomicU64::new(0);
static EXECUTIONS: AtomicU64 = AtomicU64::new(0);
static RUNS: [AtomicU64; 3] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
static DRAWS: AtomicU64 = AtomicU64::new(0);
static CHECKED_READS: AtomicU64 = AtomicU64::new(0);
static CODED_ERRORS: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

/// A step's result: `Ok`, or an error whose code is one of `allowed`.
fn expect<T, E: Into<kiln::Error>>(
    r: Result<T, E>,
    allowed: &[&str],
    step: &str,
) -> Result<Option<T>, TestCaseError> {
    match r.map_err(Into::into) {
        Ok(v) => Ok(Some(v)),
        Err(e) if allowed.contains(&e.code()) => {
            CODED_ERRORS.fetch_add(1, Ordering::Relaxed);
            Ok(None)
        }
        Err(e) => Err(TestCaseError::fail(format!("{step}: unexpected error {e}"))),
    }
}

static PROGRAMS: AtomicU64 = AtomicU64::new(0);

/// The pipelines the programs share: vector_add, and the three draws of the full-screen
/// triangle into RGBA8 (`program::Draw`).
struct Pipelines {
    add: ComputePipeline,
    /// `test/fuzz_fullscreen.vert` + `fuzz_push_word.frag`: a push-constant word.
    push_word: GraphicsPipeline,
    /// `test/fuzz_word.{vert,frag}`: an R32_UINT vertex attribute (vertex buffer 0).
    vertex_word: GraphicsPipeline,
    /// `test/fuzz_fullscreen.vert` + `fuzz_storage_word.frag`: a storage buffer's element
    /// (set 0 binding 0; the index a push constant).
    storage_word: GraphicsPipeline,
}

impl Pipelines {
    fn new(device: &Device) -> Pipelines {
        let module =
            |m: Result<ShaderModule, kiln::ShaderError>| m.expect("the fuzzer's shaders load");
        let full = module(kiln::include_spirv!("test/fuzz_fullscreen.vert"));
        let word_vs = module(kiln::include_spirv!("test/fuzz_word.vert"));
        let word_fs = module(kiln::include_spirv!("test/fuzz_word.frag"));
        let push_fs = module(kiln::include_spirv!("test/fuzz_push_word.frag"));
        let storage_fs = module(kiln::include_spirv!("test/fuzz_storage_word.frag"));
        let graphics = |vs, fs, vertex: Option<VertexBufferLayout>| {
            let mut desc = GraphicsPipelineDesc::new(vs, fs);
            desc.vertex_buffers.extend(vertex);
            desc.color_formats = vec![RGBA8];
            device
                .graphics_pipeline(&desc)
                .expect("the fuzzer's draw pipelines build")
        };
        let word = VertexBufferLayout::packed(&[(0, vk::Format::R32_UINT)]);
        Pipelines {
            add: vector_add(device),
            push_word: graphics(&full, &push_fs, None),
            vertex_word: graphics(&word_vs, &word_fs, Some(word)),
            storage_word: graphics(&full, &storage_fs, None),
        }
    }
}

/// The device the cases share, its pipelines and its live allocations with no case
/// running. Replaced by a new one after a case that left validation messages (so that
/// shrinking sees each smaller program on a clean device).
struct Fixture {
    device: Device,
    pipes: Pipelines,
    baseline: usize,
    watch: kiln::ValidationWatch,
}

impl Fixture {
    fn new() -> Fixture {
        let device = fuzz_device();
        let watch = device.validation_watch();
        let pipes = Pipelines::new(&device);
        device.release_staging_memory();
        let baseline = device.memory_report().allocations;
        Fixture {
            device,
            pipes,
            baseline,
            watch,
        }
    }
}

/// The fuzzer's device (module docs: several queues).
fn fuzz_device() -> Device {
    let device = emulated_device();
    if device.validation_report().layer_version >= common::LAYER_FOLLOWS_TIMELINES {
        return device;
    }
    drop(device);
    common::device()
}

/// Runs a case (one program, or two on two threads), then checks that everything the
/// programs made is gone once the device has caught up.
fn run_case(fixture: &Fixture, case: &[Program]) -> Result<(), TestCaseError> {
    let (device, pipes, baseline) = (&fixture.device, &fixture.pipes, fixture.baseline);
    let results: Vec<Result<(), TestCaseError>> = std::thread::scope(|s| {
        let handles: Vec<_> = case
            .iter()
            .map(|p| s.spawn(move || run_program(device, pipes, p)))
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
        .execute(|r| Ok(r.barrier()?))
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

/// Prints what the batch did.
fn print_summary(programs: u32, devices: u64, cross_waits: u64, secs: f64) {
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    println!(
        "fuzz: {} programs run ({programs} cases), {} steps, {} GPU executions checked \
         against the model ({} recordings run on the main queue, {} on the compute queue, \
         {} on the transfer queue; {} draws; {cross_waits} cross-queue waits), {} readbacks \
         compared, {} coded errors as expected ({} recordings refused by their queue), \
         {devices} device(s), in {secs:.1} s",
        n(&PROGRAMS),
        n(&STEPS),
        n(&EXECUTIONS),
        n(&RUNS[0]),
        n(&RUNS[1]),
        n(&RUNS[2]),
        n(&DRAWS),
        n(&CHECKED_READS),
        n(&CODED_ERRORS),
        n(&REFUSED),
    );
}

/// A batch of 1 000 cases or more ran what the fuzzer is for: recordings on every queue,
/// draws and (on a device with several kiln queues) refusals and submissions ordered after
/// another queue's, so a change to the generator that stops making one of them fails.
fn assert_coverage(cross_waits: u64, several_queues: bool) {
    let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
    for (queue, runs) in ["main", "compute", "transfer"].iter().zip(&RUNS) {
        assert!(n(runs) > 0, "no recording ran on the {queue} queue");
    }
    assert!(
        n(&REFUSED) > 0 || !several_queues,
        "no recording was refused by its queue"
    );
    assert!(n(&DRAWS) > 0, "no draw ran");
    assert!(
        cross_waits > 0 || !several_queues,
        "no submission waited for another queue's"
    );
}

/// The seed: `KILN_FUZZ_SEED` (hex), else from the clock.
fn seed() -> [u8; 32] {
    match std::env::var("KILN_FUZZ_SEED") {
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
    }
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
    let seed = seed();
    let hex: String = seed.iter().map(|b| format!("{b:02x}")).collect();
    // Written to the stderr handle itself, not `println!`: the test harness holds a test's
    // printed output until the test ends, and a crash (a signal) would lose the seed.
    let _ = writeln!(
        std::io::stderr().lock(),
        "fuzz: seed {hex} (replay with KILN_FUZZ_SEED={hex})"
    );
    let warnings = allocator_warnings().len();
    let fixture = RefCell::new(Fixture::new());
    let devices = AtomicU64::new(1);
    // Semaphore waits kiln's submissions made on other queues' timelines, all devices.
    let cross_waits = AtomicU64::new(0);
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
            cross_waits.fetch_add(old.device.debug_cross_queue_waits(), Ordering::Relaxed);
            drop(old);
            devices.fetch_add(1, Ordering::Relaxed);
        }
        run_case(&fixture.borrow(), &c)
    });
    let several_queues = fixture.borrow().device.queue_infos().len() > 1;
    cross_waits.fetch_add(
        fixture.borrow().device.debug_cross_queue_waits(),
        Ordering::Relaxed,
    );
    let (devices, cross_waits) = (devices.into_inner(), cross_waits.into_inner());
    print_summary(
        programs,
        devices,
        cross_waits,
        start.elapsed().as_secs_f64(),
    );
    if let Err(e) = result {
        panic!("fuzz: seed {hex}: {e}");
    }
    if programs >= 1000 {
        assert_coverage(cross_waits, several_queues);
    }
    let Fixture {
        device,
        pipes,
        watch,
        ..
    } = fixture.into_inner();
    drop(pipes);
    drop(device);
    assert_watch_clean(&watch);
    let leaks = allocator_warnings().split_off(warnings);
    assert!(leaks.is_empty(), "gpu-allocator reported {leaks:?}");
}
