//! `kiln bench [--quick] [--json] [--size-log2 N]`: kiln against a raw-`ash` baseline doing
//! the same work, interleaved in one process, one row per measurement.
//!
//! Rows (issue 6): dispatch recording, round trip, SAXPY bandwidth (GPU timestamps),
//! pipeline creation cold/warm through kiln's persisted pipeline cache, reflection + layout
//! derivation over the corpus, descriptor sets, staging transfers; (issue 12) transfers from
//! pinned memory, imported memory and a `Vec` at two sizes, and a chunked stream overlapped
//! over three queues vs serial; (issue 15) dependent chains recorded once (1000 tiny
//! dispatches, 100 × `y += x` over 2^20 floats) with the barrier-flavour notes; (issue 25)
//! the graphics rows: 10 000 draws recorded with a set bind and push constants each, a
//! GPU-driven frame of 100 000 instances culled by a compute pass into an indirect count
//! draw, an MSAA 4x resolve and `generate_mips` (`draws.rs`, `draws_gpu.rs`). Each row
//! prints the kiln figure, the raw figure and kiln/raw. See docs/benchmarks/ (ROWS.md, RESULTS.md) for results and
//! how to read them.
//!
//! The bench sets `MESA_SHADER_CACHE_DISABLE=true` and `__GL_SHADER_DISK_CACHE=0` for itself
//! (driver disk caches off, so "cold" is cold) and points `KILN_PIPELINE_CACHE_DIR` at a
//! temporary folder it deletes at the end (the user's own cache is never touched).
//! `KILN_BENCH_ONLY=dispatch|chain|bandwidth|pipelines|reflection|transfers|queues|draws|handoff` runs one
//! group; `KILN_BENCH_ONLY=barriers` runs issue 15's barrier sweep (notes only, never in the
//! default run: see `barriers.rs`); `KILN_BENCH_ONLY=hostmem` runs the host-memory sweep
//! (memory types, imported huge/small pages, copy shapes, which queues copy concurrently:
//! `hostmem/`), which a plain `kiln bench` leaves out too;
//! `KILN_BENCH_SWEEP=1` adds the staging sweep to the queue rows.
//!
//! With the cargo feature `bench-wgpu`, rows 1–3 and the draw recording also run through
//! `wgpu` (Vulkan backend, same driver; `wgpu_draws.rs`), interleaved with the other two; the table gains `wgpu` and `kiln/wgpu`
//! columns and the JSON rows `wgpu` and `ratio_wgpu` fields.
//!
//! This crate is the bench behind the `kiln` tool (crate `kiln-cli`), which calls [`main`]
//! with the arguments after `bench`; it is not published. Its shaders are in
//! `kiln-bench/shaders/`, compiled by its `build.rs`.

mod barriers;
mod chain;
mod descriptor_sets;
mod dispatch;
mod draws;
mod draws_gpu;
mod floors;
mod handoff;
mod hostmem;
mod parallel_pipelines;
mod pipelines;
mod queues;
#[doc(hidden)] // for the profile examples (`raw_profile`)
pub mod raw;
mod scopes;
mod stream;
mod transfer;
#[cfg(feature = "bench-wgpu")]
mod wgpu_draws;
#[cfg(feature = "bench-wgpu")]
mod wgpu_peer;

#[cfg(feature = "bench-wgpu")]
pub use wgpu_peer::Peer;

use std::process::ExitCode;
use std::time::Instant;

pub type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// No peer without the `bench-wgpu` feature: the type has no values, so the row code's
/// `if let Some(peer)` branches are dead and its methods never run.
#[cfg(not(feature = "bench-wgpu"))]
pub enum Peer {}

#[cfg(not(feature = "bench-wgpu"))]
impl Peer {
    pub fn record(&mut self, _seq: &[(usize, usize)], _params: &[u8]) -> BenchResult<f64> {
        match *self {}
    }
    pub fn round_trip(&mut self, _params: &[u8]) -> BenchResult<()> {
        match *self {}
    }
    pub fn s5(&self) -> BenchResult<f32> {
        match *self {}
    }
    pub fn saxpy_setup(&mut self, _n: u64) -> BenchResult<()> {
        match *self {}
    }
    pub fn saxpy(&mut self, _vec4: bool, _groups: (u32, u32), _params: &[u8]) -> BenchResult<f64> {
        match *self {}
    }
    pub fn saxpy_finish(&mut self) -> BenchResult<()> {
        match *self {}
    }
    pub fn draws_setup(&mut self, _size: u32, _tints: &[[f32; 4]]) -> BenchResult<()> {
        match *self {}
    }
    pub fn draws_record(&mut self, _stream: &[draws::DrawPush]) -> BenchResult<f64> {
        match *self {}
    }
    pub fn draws_image(&mut self) -> BenchResult<Vec<u8>> {
        match *self {}
    }
}

/// Options from the command line.
#[derive(Clone, Debug)]
pub struct Opts {
    pub quick: bool,
    pub json: bool,
    /// log2 of the SAXPY element count.
    pub size_log2: Option<u32>,
}

/// One line of the table.
pub struct Row {
    pub name: String,
    pub unit: &'static str,
    pub kiln: f64,
    pub raw: f64,
    /// The same work through wgpu (feature `bench-wgpu`, rows 1–3).
    pub wgpu: Option<f64>,
    /// Whether larger values are better (GB/s, speedups).
    pub higher_is_better: bool,
}

impl Row {
    pub fn new(name: &str, unit: &'static str, kiln: f64, raw: f64) -> Row {
        Row {
            name: name.into(),
            unit,
            kiln,
            raw,
            wgpu: None,
            higher_is_better: matches!(unit, "GB/s" | "x"),
        }
    }
    /// Adds the wgpu figure when there is one.
    pub fn with_wgpu(mut self, wgpu: Option<f64>) -> Row {
        self.wgpu = wgpu;
        self
    }
    fn ratio(&self) -> f64 {
        ratio(self.kiln, self.raw)
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        f64::NAN
    } else {
        a / b
    }
}

static NOTES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// A line of diagnostics: printed to stderr now and kept for the `notes` of `--json`.
pub fn note(line: String) {
    eprintln!("kiln bench: {line}");
    if let Ok(mut n) = NOTES.lock() {
        n.push(line);
    }
}

/// The smallest value: the estimator for CPU-bound rounds, where preemption by other
/// processes only ever adds time.
pub fn best(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn median(v: &mut [f64]) -> f64 {
    percentile(v, 0.5)
}

/// Nearest-rank percentile (`q` in 0..=1) of `v` (sorted in place).
pub fn percentile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

/// Nanoseconds since `t`.
pub fn ns_since(t: Instant) -> f64 {
    t.elapsed().as_nanos() as f64
}

/// CPU time this thread has used, in nanoseconds (Linux `CLOCK_THREAD_CPUTIME_ID`; 0
/// elsewhere).
#[cfg(target_os = "linux")]
pub fn thread_cpu_ns() -> f64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec (64-bit Linux layout) for the call.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

#[cfg(not(target_os = "linux"))]
pub fn thread_cpu_ns() -> f64 {
    0.0
}

/// The descriptor types of `six.comp`'s six bindings, in binding order (the dispatch
/// fixture's, the raw rows' and the profile examples' set layout).
pub const SIX_TYPES: [ash::vk::DescriptorType; 6] = dispatch::TYPES;

/// `n` buffers of 256 bytes (uniform and storage, GPU-only) labelled `label`: what
/// `six.comp`'s six bindings are written with in the dispatch and descriptor rows and their
/// profile examples (`tracker_profile`, `descriptor_profile`).
pub fn six_buffers(
    device: &kiln::Device,
    label: &str,
    n: usize,
) -> kiln::Result<Vec<kiln::Buffer>> {
    let desc = kiln::BufferDesc::default()
        .label(label)
        .size(256)
        .usage(
            ash::vk::BufferUsageFlags::UNIFORM_BUFFER | ash::vk::BufferUsageFlags::STORAGE_BUFFER,
        )
        .location(kiln::MemoryLocation::GpuOnly);
    (0..n).map(|_| Ok(device.buffer(&desc)?)).collect()
}

/// Writes the six bindings of `six.comp`'s set `set` in one `write_buffers` (like raw's
/// single `vkUpdateDescriptorSets`): binding `j` gets `bufs[(i + j) % bufs.len()]`.
pub fn write_six(
    set: &mut kiln::DescriptorSet,
    bufs: &[kiln::Buffer],
    i: usize,
) -> kiln::Result<()> {
    let b = |j: usize| &bufs[(i + j) % bufs.len()];
    Ok(set.write_buffers(&[
        (0, b(0)),
        (1, b(1)),
        (2, b(2)),
        (3, b(3)),
        (4, b(4)),
        (5, b(5)),
    ])?)
}

/// `six.comp`'s 4 pipelines (specialization constant 0 = 0..4) and 8 sets over `bufs` (set
/// `s` written by [`write_six`]): the kiln side of the dispatch rows' stream, for the
/// profile examples.
pub fn six_pipelines_and_sets(
    device: &kiln::Device,
    module: &kiln::ShaderModule,
    bufs: &[kiln::Buffer],
) -> kiln::Result<(Vec<kiln::ComputePipeline>, Vec<kiln::DescriptorSet>)> {
    let mut pipes = Vec::new();
    for v in 0..dispatch::PIPES as u32 {
        pipes.push(device.compute_pipeline_with(
            &kiln::ComputePipelineDesc::new(module, "main").spec(&[(0, kiln::SpecValue::U32(v))]),
        )?);
    }
    let mut sets = Vec::new();
    for s in 0..dispatch::SETS {
        let mut set = pipes[0].descriptor_set(0)?;
        write_six(&mut set, bufs, s)?;
        sets.push(set);
    }
    Ok((pipes, sets))
}

/// Where kiln's automatic mode records a barrier in `seq` (pipeline, set; each dispatch
/// pushing `push` at offset 0), and its masks as recorded (`None`: no barrier before that
/// dispatch): the automatic row's first pass (`dispatch.rs`), also the profile examples'.
/// Submitted and waited for, so that the validation layer checks those barriers at
/// submission too.
pub fn barrier_places<P: bytemuck::Pod>(
    device: &kiln::Device,
    (pipes, sets): (&[kiln::ComputePipeline], &[kiln::DescriptorSet]),
    seq: &[(usize, usize)],
    push: &P,
) -> kiln::Result<Vec<Option<raw::BarrierMasks>>> {
    let mut places = Vec::with_capacity(seq.len());
    device.execute(|r| {
        for &(pi, si) in seq {
            r.bind_pipeline(&pipes[pi])?;
            r.bind_set(0, &sets[si])?;
            r.push(0, push)?;
            let before = r.barrier_count();
            r.dispatch(1, 1, 1)?;
            places.push((r.barrier_count() > before).then(|| r.debug_last_barrier()));
        }
        Ok(())
    })?;
    Ok(places)
}

/// The dispatch rows' pseudo-random (pipeline, set) stream of `n` dispatches over 4
/// pipelines and 8 sets (`dispatch.rs`'s `stream`), for the profile examples.
pub fn profile_stream(n: usize) -> Vec<(usize, usize)> {
    dispatch::stream(n)
}

/// A profile example's round count: its first argument, else `default`.
pub fn rounds_arg(default: usize) -> usize {
    std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        quick: false,
        json: false,
        size_log2: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--json" => o.json = true,
            "--size-log2" => {
                let v = it.next().ok_or("--size-log2 needs a number")?;
                let n: u32 = v
                    .parse()
                    .map_err(|_| format!("--size-log2: `{v}` is not a number"))?;
                if !(10..=30).contains(&n) {
                    return Err(format!("--size-log2 {n}: use 10..=30"));
                }
                o.size_log2 = Some(n);
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    Ok(o)
}

/// `kiln bench ARGS`: parses the options, runs the rows and prints them; the exit status
/// is a failure when the validation layer reported anything (2 for a usage error).
pub fn main(args: &[String]) -> ExitCode {
    let opts = match parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("kiln bench: {e}\nusage: kiln bench [--quick] [--json] [--size-log2 N]");
            return ExitCode::from(2);
        }
    };
    // Driver shader caches off and kiln's pipeline cache in a private folder, before any
    // Vulkan call loads the driver.
    let cache_dir = std::env::temp_dir().join(format!("kiln-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache_dir);
    std::env::set_var("MESA_SHADER_CACHE_DISABLE", "true");
    std::env::set_var("__GL_SHADER_DISK_CACHE", "0");
    std::env::set_var("KILN_PIPELINE_CACHE_DIR", &cache_dir);
    std::env::remove_var("KILN_PIPELINE_CACHE");
    let result = run(&opts);
    let _ = std::fs::remove_dir_all(&cache_dir);
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("kiln bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every row; returns false when the validation layer reported anything.
fn run(opts: &Opts) -> BenchResult<bool> {
    let device = kiln::Device::new()?;
    let info = device.info().clone();
    let driver = format!(
        "{} {} (driverVersion {:#x}, Vulkan {}.{}.{})",
        info.driver_name,
        info.driver_info,
        info.driver_version,
        kiln::vk::api_version_major(info.api_version),
        kiln::vk::api_version_minor(info.api_version),
        kiln::vk::api_version_patch(info.api_version)
    );
    eprintln!("kiln bench: {} / {driver}", info.name);
    let raw = raw::Raw::new(&device);
    #[cfg(feature = "bench-wgpu")]
    let mut peer = Some(Peer::new(&info.name).map_err(|e| format!("wgpu peer: {e}"))?);
    #[cfg(not(feature = "bench-wgpu"))]
    let mut peer: Option<Peer> = None;
    note(format!(
        "KILN_SPIN_US={} (unset: kiln polls the fence up to 200 us on GPUs, not at all on CPU devices)",
        std::env::var("KILN_SPIN_US").unwrap_or_else(|_| "unset".into())
    ));
    let mut rows = Vec::new();
    // The last steps are opt-in sweeps: run only when `KILN_BENCH_ONLY` names them.
    let steps: [(&str, RowFn); 12] = [
        ("dispatch", dispatch::rows),
        ("chain", chain::rows),
        ("bandwidth", transfer::bandwidth_rows),
        ("pipelines", pipelines::creation_rows),
        ("pipelines", parallel_pipelines::rows),
        ("reflection", pipelines::reflection_rows),
        ("transfers", transfer::transfer_rows),
        ("queues", queues::rows),
        ("draws", draws::rows),
        // Issue 28: kiln's timeline semaphore through CUDA and back (a note without CUDA).
        ("handoff", handoff::rows),
        // Opt-in only (KILN_BENCH_ONLY=barriers): about a minute on a GPU, long on a CPU.
        ("barriers", barriers::rows),
        // Opt-in only (KILN_BENCH_ONLY=hostmem): the host-memory sweep.
        ("hostmem", hostmem::rows),
    ];
    let only = std::env::var("KILN_BENCH_ONLY").ok();
    for (what, f) in steps {
        let opt_in = matches!(what, "barriers" | "hostmem");
        if only.as_deref().is_some_and(|o| o != what) || (opt_in && only.is_none()) {
            continue;
        }
        let t = Instant::now();
        let new = f(&device, &raw, peer.as_mut(), opts).map_err(|e| format!("{what}: {e}"))?;
        eprintln!(
            "kiln bench: {what} done in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        rows.extend(new);
    }
    let report = device.validation_report();
    print_rows(opts, &info.name, &driver, &rows);
    if !report.is_clean() {
        eprintln!(
            "kiln bench: validation reported {} error(s), {} warning(s):\n{}",
            report.errors,
            report.warnings,
            report.messages.join("\n")
        );
        return Ok(false);
    }
    Ok(true)
}

type RowFn = fn(&kiln::Device, &raw::Raw, Option<&mut Peer>, &Opts) -> BenchResult<Vec<Row>>;

fn print_rows(opts: &Opts, device: &str, driver: &str, rows: &[Row]) {
    if opts.json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let mut v = serde_json::json!({
                    "name": r.name, "unit": r.unit, "kiln": r.kiln, "raw": r.raw,
                    "ratio": r.ratio(),
                });
                if let (Some(w), Some(o)) = (r.wgpu, v.as_object_mut()) {
                    o.insert("wgpu".into(), w.into());
                    o.insert("ratio_wgpu".into(), ratio(r.kiln, w).into());
                }
                v
            })
            .collect();
        let notes = NOTES.lock().map(|n| n.clone()).unwrap_or_default();
        let doc = serde_json::json!({
            "schema_version": 1,
            "device": device, "driver": driver, "rows": rows, "notes": notes,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("\"{e}\""))
        );
        return;
    }
    println!("device: {device}\ndriver: {driver}");
    let peer = cfg!(feature = "bench-wgpu");
    println!(
        "{:<44} {:>7} {:>12} {:>12} {:>9}{}",
        "row",
        "unit",
        "kiln",
        "raw",
        "kiln/raw",
        if peer {
            format!(" {:>12} {:>9}", "wgpu", "kiln/wgpu")
        } else {
            String::new()
        }
    );
    for r in rows {
        let wgpu = match r.wgpu {
            Some(w) => format!(" {w:>12.3} {:>9.3}", ratio(r.kiln, w)),
            None if peer => format!(" {:>12} {:>9}", "-", "-"),
            None => String::new(),
        };
        println!(
            "{:<44} {:>7} {:>12.3} {:>12.3} {:>8.3}{wgpu}{}",
            r.name,
            r.unit,
            r.kiln,
            r.raw,
            r.ratio(),
            if r.higher_is_better {
                " (higher is better)"
            } else {
                ""
            }
        );
    }
}
