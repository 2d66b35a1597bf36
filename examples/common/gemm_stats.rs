//! `gemm --stats`: what the driver compiled each GEMM kernel into (its pipeline executable
//! statistics, VK_KHR_pipeline_executable_properties: registers, shared memory, spills, …
//! as the driver names them; [`kiln::ComputePipeline::executable_statistics`]) and how many
//! workgroups of it fit on one SM of an H200 ([`H200`], [`occupancy`]).
//!
//! The kernels capture statistics only while [`capture_statistics`] is on (the pipeline
//! builders of `gemm.rs`, `gemm_wg.rs` and `coopmat_peak.rs` all go through
//! `gemm::subgroup_pipeline` or `gemm::tiled`, which read it).

use std::sync::atomic::{AtomicBool, Ordering};

use kiln::{ComputePipeline, PipelineExecutable};

static CAPTURE: AtomicBool = AtomicBool::new(false);

/// Makes the GEMM and ceiling kernels built from now on capture their statistics
/// (`ComputePipelineDesc::capture_statistics`; needs `Features::pipeline_executable_info`,
/// else their creation fails with `KILN-E267`).
pub fn capture_statistics(on: bool) {
    CAPTURE.store(on, Ordering::Relaxed);
}

/// Whether [`capture_statistics`] is on.
pub fn capturing() -> bool {
    CAPTURE.load(Ordering::Relaxed)
}

/// The per-SM resources a workgroup (CUDA: block) takes from (CUDA occupancy calculator
/// terms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmLimits {
    /// 32-bit registers per SM.
    pub registers: u32,
    /// Registers are allocated per warp in units of this many.
    pub register_unit: u32,
    /// Shared memory per SM, bytes.
    pub shared_bytes: u32,
    /// Shared memory the driver reserves per workgroup, bytes.
    pub shared_reserved: u32,
    /// Resident threads per SM.
    pub threads: u32,
    /// Resident workgroups per SM.
    pub workgroups: u32,
    /// Threads per warp (the subgroup size).
    pub warp: u32,
}

/// An H200 (Hopper, compute capability 9.0) SM: 65536 registers (allocated per warp in
/// units of 256), 228 KiB shared memory (1 KiB of it reserved per workgroup), 2048
/// threads, 32 workgroups.
pub const H200: SmLimits = SmLimits {
    registers: 65536,
    register_unit: 256,
    shared_bytes: 228 * 1024,
    shared_reserved: 1024,
    threads: 2048,
    workgroups: 32,
    warp: 32,
};

/// How many workgroups of one executable fit on an SM, and what limits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// Workgroups per SM: the smallest of the limits below.
    pub workgroups: u32,
    /// Each limit as `what=n` (registers, shared memory, threads, workgroups), with the
    /// statistic it was computed from.
    pub limits: Vec<String>,
}

/// The statistic of `e` whose name contains `word` (without case) and none of `not`,
/// as (name, value).
fn find(e: &PipelineExecutable, word: &str, not: &[&str]) -> Option<(String, u64)> {
    e.statistics.iter().find_map(|s| {
        let n = s.name.to_ascii_lowercase();
        (n.contains(word) && !not.iter().any(|x| n.contains(x)))
            .then(|| s.value.as_u64().map(|v| (s.name.clone(), v)))
            .flatten()
    })
}

/// Workgroups of `threads` invocations of executable `e` per SM of `sm`: the registers
/// per thread from the first statistic whose name contains "register" (NVIDIA: "Register
/// Count"; not a spill count), the shared memory from the first whose name contains
/// "shared" (bytes), else `declared` (the bytes the kernel declares, where known); a
/// limit with neither is left out (and said so).
pub fn occupancy(
    e: &PipelineExecutable,
    threads: u32,
    declared: Option<u32>,
    sm: &SmLimits,
) -> Occupancy {
    let warps = threads.div_ceil(sm.warp).max(1);
    let mut limits = Vec::new();
    let mut n = sm.workgroups;
    match find(e, "register", &["spill"]) {
        Some((name, regs)) if regs > 0 => {
            let per_warp = (regs as u32 * sm.warp).div_ceil(sm.register_unit) * sm.register_unit;
            let by_regs = sm.registers / per_warp / warps;
            limits.push(format!("registers={by_regs} (\"{name}\" {regs}/thread)"));
            n = n.min(by_regs);
        }
        _ => limits.push("registers=? (no register statistic)".into()),
    }
    let smem = find(e, "shared", &[])
        .map(|(name, bytes)| (format!("\"{name}\""), bytes))
        .or(declared.map(|b| ("declared".to_string(), b as u64)));
    match smem {
        Some((from, bytes)) => {
            let by_smem = sm.shared_bytes / (bytes as u32 + sm.shared_reserved);
            limits.push(format!("smem={by_smem} ({from} {bytes} B)"));
            n = n.min(by_smem);
        }
        None => limits.push("smem=? (no shared-memory statistic)".into()),
    }
    let by_threads = sm.threads / (warps * sm.warp);
    limits.push(format!("threads={by_threads} ({threads}/workgroup)"));
    limits.push(format!("max={}", sm.workgroups));
    Occupancy {
        workgroups: n.min(by_threads),
        limits,
    }
}

/// Bit 36 of NVIDIA's "Local Memory Size" (driver 580.159.04): run F reported every
/// kernel's local memory as 2^36 plus a few hundred bytes at most.
const NV_LOCAL_MEMORY_BIT: u64 = 1 << 36;

/// `name=value`, spaces in the name as `_`; NVIDIA's "Local Memory Size" (the bytes per
/// thread spilled or placed in local memory) without its bit 36, as `Local_Memory_Size=N+2^36`.
fn stat(s: &kiln::PipelineExecutableStatistic) -> String {
    let name = s.name.replace(' ', "_");
    match s.value.as_u64() {
        Some(v) if s.name == "Local Memory Size" && v & NV_LOCAL_MEMORY_BIT != 0 => {
            format!("{name}={}+2^36", v & !NV_LOCAL_MEMORY_BIT)
        }
        _ => format!("{name}={}", s.value),
    }
}

/// One line for kernel `name`: each executable's statistics as `name=value` and its
/// workgroups per H200 SM (`declared`: the shared memory the kernel declares, where the
/// driver names none), or the error (e.g. `KILN-E267` on a device without the feature).
pub fn stats_line(name: &str, pipeline: &ComputePipeline, declared: Option<u32>) -> String {
    let threads: u32 = pipeline.workgroup_size().iter().product();
    match pipeline.executable_statistics() {
        Ok(execs) => execs
            .iter()
            .map(|e| {
                let stats: Vec<String> = e.statistics.iter().map(stat).collect();
                let o = occupancy(e, threads, declared, &H200);
                format!(
                    "stats {name:<40} {threads} threads, subgroup {}: {}  | H200 workgroups/SM {} \
                     [{}]",
                    e.subgroup_size,
                    stats.join(" "),
                    o.workgroups,
                    o.limits.join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Err(e) => format!("stats {name:<40} FAIL: {e}"),
    }
}
