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

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::add::vector_add;
use common::{allocator_warnings, assert_watch_clean, device};
use kiln::{vk, Buffer, BufferDesc, ComputePipeline, DescriptorSet, Device, Image, ImageDesc};
use kiln::{MemoryLocation, Recorder, Submission};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// Elements (f32) of every buffer: 256 bytes, the size of an 8×8 RGBA8 image.
const LEN: usize = 64;
const BUFS: usize = 4;
const SETS: usize = 2;
const IMGS: usize = 2;

/// Where a buffer's memory lives.
#[derive(Clone, Copy, Debug)]
enum Loc {
    GpuOnly,
    CpuToGpu,
    GpuToCpu,
}

/// How a recording runs.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// `Device::execute`: recorded, submitted, waited for.
    Execute,
    /// `Device::submit`: the submission is kept and waited for (or dropped) later.
    Submit,
    /// `Device::record` once, then this many `Recording::execute`s (0: never submitted).
    Record(u8),
}

/// A command of one recording.
#[derive(Clone, Debug)]
enum Cmd {
    /// vector_add with set `s` over `LEN` threads (c = a + b).
    Dispatch(usize),
    /// `fill_buffer` with a whole float.
    Fill(usize, u8),
    /// `copy_buffer` of `n` elements between element offsets (maybe out of range).
    Copy {
        src: usize,
        dst: usize,
        so: u8,
        d_o: u8,
        n: u8,
    },
    /// A buffer copied into an image (256 bytes both).
    ToImage(usize, usize),
    /// An image copied into a buffer.
    FromImage(usize, usize),
    /// An image moved to a layout (contents kept).
    Transition(usize, u8),
    Barrier,
    FullBarrier,
    /// Turns the automatic dispatch barriers off, then places a barrier after each dispatch.
    Manual,
}

/// One step of a program.
#[derive(Clone, Debug)]
enum Op {
    NewBuffer(usize, Loc),
    DropBuffer(usize),
    Upload(usize, u8),
    Read(usize),
    /// A set of vector_add (a, b, c from buffer slots), from the shared or an own pipeline.
    NewSet {
        set: usize,
        abc: [usize; 3],
        own_pipeline: bool,
    },
    /// A write that cannot work: a binding the set lacks.
    WrongWrite(usize, u32),
    /// A set left with binding 2 unwritten, bound by a dispatch: refused.
    Unwritten(usize),
    DropSet(usize),
    NewImage(usize),
    UploadImage(usize, u8),
    ReadImage(usize),
    Run(Vec<Cmd>, Mode),
    /// Waits for (or drops) the oldest pending submission.
    Settle(bool),
}

fn loc() -> impl Strategy<Value = Loc> {
    prop_oneof![Just(Loc::GpuOnly), Just(Loc::CpuToGpu), Just(Loc::GpuToCpu)]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let b = 0..BUFS;
    let i = 0..IMGS;
    prop_oneof![
        4 => (0..SETS).prop_map(Cmd::Dispatch),
        2 => (b.clone(), 0u8..8).prop_map(|(b, v)| Cmd::Fill(b, v)),
        3 => (b.clone(), b.clone(), 0u8..70, 0u8..70, 0u8..70)
            .prop_map(|(src, dst, so, d_o, n)| Cmd::Copy { src, dst, so, d_o, n }),
        1 => (b.clone(), i.clone()).prop_map(|(b, i)| Cmd::ToImage(b, i)),
        1 => (i.clone(), b).prop_map(|(i, b)| Cmd::FromImage(i, b)),
        1 => (i, 0u8..3).prop_map(|(i, l)| Cmd::Transition(i, l)),
        1 => Just(Cmd::Barrier),
        1 => Just(Cmd::FullBarrier),
        1 => Just(Cmd::Manual),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        3 => Just(Mode::Execute),
        2 => Just(Mode::Submit),
        2 => (0u8..4).prop_map(Mode::Record),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let b = 0..BUFS;
    let s = 0..SETS;
    let i = 0..IMGS;
    prop_oneof![
        4 => (b.clone(), loc()).prop_map(|(b, l)| Op::NewBuffer(b, l)),
        1 => b.clone().prop_map(Op::DropBuffer),
        2 => (b.clone(), 0u8..8).prop_map(|(b, v)| Op::Upload(b, v)),
        3 => b.clone().prop_map(Op::Read),
        3 => (s.clone(), [b.clone(), b.clone(), b.clone()], prop::bool::weighted(0.05))
            .prop_map(|(set, abc, own_pipeline)| Op::NewSet { set, abc, own_pipeline }),
        1 => (s.clone(), 3u32..6).prop_map(|(s, b)| Op::WrongWrite(s, b)),
        1 => b.prop_map(Op::Unwritten),
        1 => s.prop_map(Op::DropSet),
        1 => i.clone().prop_map(Op::NewImage),
        1 => (i.clone(), 0u8..8).prop_map(|(i, v)| Op::UploadImage(i, v)),
        1 => i.prop_map(Op::ReadImage),
        6 => (prop::collection::vec(cmd(), 1..5), mode()).prop_map(|(c, m)| Op::Run(c, m)),
        1 => any::<bool>().prop_map(Op::Settle),
    ]
}

/// A program: where its four starting buffers live, and its steps. Every program starts
/// with those buffers (zeroed), set 0 over buffers 0, 1, 2 and image 0, and ends by reading
/// every buffer and image back.
type Program = ([Loc; BUFS], Vec<Op>);

/// One case: one program, or two run at once on two threads.
fn case() -> impl Strategy<Value = Vec<Program>> {
    let program = || {
        (
            [loc(), loc(), loc(), loc()],
            prop::collection::vec(op(), 1..9),
        )
    };
    prop_oneof![
        6 => program().prop_map(|p| vec![p]),
        1 => (program(), program()).prop_map(|(a, b)| vec![a, b]),
    ]
}

/// A buffer and the model of its contents (f32 bits), shared with the sets that hold it.
#[derive(Clone)]
struct Buf {
    buffer: Buffer,
    model: Rc<RefCell<Vec<u32>>>,
}

/// A vector_add set and the buffers (a, b, c) it was written with.
struct Set {
    set: DescriptorSet,
    abc: [Buf; 3],
}

/// An 8×8 RGBA8 image and its contents (`None`: undefined).
#[derive(Clone)]
struct Img {
    image: Image,
    model: Rc<RefCell<Option<Vec<u8>>>>,
}

/// What one program has made so far.
struct World<'d> {
    device: &'d Device,
    pipeline: &'d ComputePipeline,
    own_pipelines: Vec<ComputePipeline>,
    bufs: [Option<Buf>; BUFS],
    sets: [Option<Set>; SETS],
    imgs: [Option<Img>; IMGS],
    pending: Vec<Submission>,
}

fn float(v: u8) -> u32 {
    f32::from(v).to_bits()
}

fn add(a: u32, b: u32) -> u32 {
    (f32::from_bits(a) + f32::from_bits(b)).to_bits()
}

fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

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

/// The layouts `Cmd::Transition` picks from.
const LAYOUTS: [vk::ImageLayout; 3] = [
    vk::ImageLayout::GENERAL,
    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
    vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
];

/// What a recording will do to the models once it runs (applied per execution).
enum Effect {
    Add([Buf; 3]),
    Fill(Buf, u32),
    Copy(Buf, usize, Buf, usize, usize),
    ToImage(Buf, Img),
    FromImage(Img, Buf),
}

fn apply(effects: &[Effect]) {
    EXECUTIONS.fetch_add(1, Ordering::Relaxed);
    for e in effects {
        match e {
            Effect::Add([a, b, c]) => {
                let r: Vec<u32> = {
                    let (a, b) = (a.model.borrow(), b.model.borrow());
                    a.iter().zip(b.iter()).map(|(x, y)| add(*x, *y)).collect()
                };
                *c.model.borrow_mut() = r;
            }
            Effect::Fill(b, v) => *b.model.borrow_mut() = vec![*v; LEN],
            Effect::Copy(s, so, d, d_o, n) => {
                let part: Vec<u32> = s.model.borrow()[*so..so + n].to_vec();
                d.model.borrow_mut()[*d_o..d_o + n].copy_from_slice(&part);
            }
            Effect::ToImage(b, i) => *i.model.borrow_mut() = Some(bytes_of(&b.model.borrow())),
            Effect::FromImage(i, b) => {
                // An image of undefined contents gives undefined bytes: the model forgets
                // nothing it can check (reads compare only defined images).
                if let Some(px) = i.model.borrow().as_ref() {
                    *b.model.borrow_mut() = words_of(px);
                }
            }
        }
    }
}

/// Records `cmds` (skipping those whose objects do not exist), noting their effects.
fn record<'a>(
    r: &mut Recorder<'a, '_>,
    w: &'a World<'_>,
    cmds: &[Cmd],
    effects: &mut Vec<Effect>,
) -> kiln::Result<()> {
    let mut manual = false;
    for c in cmds {
        match c {
            Cmd::Dispatch(s) => {
                let Some(set) = &w.sets[*s] else { continue };
                r.bind_pipeline(w.pipeline)?;
                r.bind_set(0, &set.set)?;
                r.dispatch_threads(LEN as u32)?;
                if manual {
                    r.barrier()?;
                }
                effects.push(Effect::Add(set.abc.clone()));
            }
            Cmd::Fill(b, v) => {
                let Some(b) = &w.bufs[*b] else { continue };
                r.fill_buffer(&b.buffer, float(*v))?;
                effects.push(Effect::Fill(b.clone(), float(*v)));
            }
            Cmd::Copy {
                src,
                dst,
                so,
                d_o,
                n,
            } => {
                let (Some(s), Some(d)) = (&w.bufs[*src], &w.bufs[*dst]) else {
                    continue;
                };
                let (so, d_o, n) = (*so as usize, *d_o as usize, *n as usize);
                r.copy_buffer(
                    &s.buffer,
                    4 * so as u64,
                    &d.buffer,
                    4 * d_o as u64,
                    4 * n as u64,
                )?;
                effects.push(Effect::Copy(s.clone(), so, d.clone(), d_o, n));
            }
            Cmd::ToImage(b, i) => {
                let (Some(b), Some(i)) = (&w.bufs[*b], &w.imgs[*i]) else {
                    continue;
                };
                r.copy_buffer_to_image(&b.buffer, &i.image, 0)?;
                effects.push(Effect::ToImage(b.clone(), i.clone()));
            }
            Cmd::FromImage(i, b) => {
                let (Some(i), Some(b)) = (&w.imgs[*i], &w.bufs[*b]) else {
                    continue;
                };
                r.copy_image_to_buffer(&i.image, 0, &b.buffer)?;
                effects.push(Effect::FromImage(i.clone(), b.clone()));
            }
            Cmd::Transition(i, l) => {
                let Some(i) = &w.imgs[*i] else { continue };
                r.transition(&i.image, LAYOUTS[*l as usize])?;
            }
            Cmd::Barrier => r.barrier()?,
            Cmd::FullBarrier => r.full_barrier()?,
            Cmd::Manual => {
                // From here on the program places the barriers: one now for what came
                // before, one after each dispatch.
                r.manual_barriers();
                r.barrier()?;
                manual = true;
            }
        }
    }
    Ok(())
}

/// Codes a recording of these commands may fail with: a copy out of range or of zero
/// bytes or overlapping (`E151`, `E155`), a reusable recording that leaves an image in
/// another layout (`E284`) or finds it moved (`E285`).
const RUN_CODES: &[&str] = &["KILN-E151", "KILN-E155", "KILN-E284", "KILN-E285"];

impl World<'_> {
    /// The program's starting objects (see [`Program`]).
    fn prelude(&mut self, locs: &[Loc; BUFS]) -> Result<(), TestCaseError> {
        for (slot, l) in locs.iter().enumerate() {
            self.step(&Op::NewBuffer(slot, *l), 0)?;
        }
        self.step(
            &Op::NewSet {
                set: 0,
                abc: [0, 1, 2],
                own_pipeline: false,
            },
            0,
        )?;
        self.step(&Op::NewImage(0), 0)
    }

    /// Reads every buffer and image back (compared with the model).
    fn epilogue(&mut self, n: usize) -> Result<(), TestCaseError> {
        for slot in 0..BUFS {
            self.step(&Op::Read(slot), n)?;
        }
        for slot in 0..IMGS {
            self.step(&Op::ReadImage(slot), n)?;
        }
        Ok(())
    }

    fn step(&mut self, op: &Op, n: usize) -> Result<(), TestCaseError> {
        let step = format!("step {n} {op:?}");
        let d = self.device;
        match op {
            Op::NewBuffer(slot, l) => {
                let location = match l {
                    Loc::GpuOnly => MemoryLocation::GpuOnly,
                    Loc::CpuToGpu => MemoryLocation::CpuToGpu,
                    Loc::GpuToCpu => MemoryLocation::GpuToCpu,
                };
                let buffer = d
                    .buffer(&BufferDesc {
                        label: "fuzz",
                        size: 4 * LEN as u64,
                        usage: vk::BufferUsageFlags::STORAGE_BUFFER,
                        location,
                    })
                    .map_err(|e| TestCaseError::fail(format!("{step}: {e}")))?;
                buffer
                    .upload(&[0u32; LEN])
                    .map_err(|e| TestCaseError::fail(format!("{step}: {e}")))?;
                self.bufs[*slot] = Some(Buf {
                    buffer,
                    model: Rc::new(RefCell::new(vec![0; LEN])),
                });
            }
            Op::DropBuffer(slot) => self.bufs[*slot] = None,
            Op::Upload(slot, v) => {
                if let Some(b) = &self.bufs[*slot] {
                    expect(b.buffer.upload(&[float(*v); LEN]), &[], &step)?;
                    *b.model.borrow_mut() = vec![float(*v); LEN];
                }
            }
            Op::Read(slot) => {
                if let Some(b) = &self.bufs[*slot] {
                    let got = expect(b.buffer.read::<u32>(), &[], &step)?;
                    let want = b.model.borrow().clone();
                    CHECKED_READS.fetch_add(1, Ordering::Relaxed);
                    if got.as_ref() != Some(&want) {
                        return Err(TestCaseError::fail(format!(
                            "{step}: read {got:?}, the model says {want:?}"
                        )));
                    }
                }
            }
            Op::NewSet {
                set,
                abc,
                own_pipeline,
            } => {
                let bufs: Option<Vec<Buf>> = abc.iter().map(|i| self.bufs[*i].clone()).collect();
                let Some(bufs) = bufs else { return Ok(()) };
                let mut s = if *own_pipeline {
                    let p = vector_add(d);
                    let s = p.descriptor_set(0);
                    self.own_pipelines.push(p);
                    s
                } else {
                    self.pipeline.descriptor_set(0)
                }
                .map_err(|e| TestCaseError::fail(format!("{step}: {e}")))?;
                for (binding, b) in bufs.iter().enumerate() {
                    expect(s.write_buffer(binding as u32, &b.buffer), &[], &step)?;
                }
                let abc = [bufs[0].clone(), bufs[1].clone(), bufs[2].clone()];
                self.sets[*set] = Some(Set { set: s, abc });
            }
            Op::WrongWrite(set, binding) => {
                let Some(buf) = self.bufs.iter().flatten().next().cloned() else {
                    return Ok(());
                };
                if let Some(s) = &mut self.sets[*set] {
                    if expect(
                        s.set.write_buffer(*binding, &buf.buffer),
                        &["KILN-E200"],
                        &step,
                    )?
                    .is_some()
                    {
                        return Err(TestCaseError::fail(format!(
                            "{step}: a write to binding {binding} of vector_add's set was accepted"
                        )));
                    }
                }
            }
            Op::Unwritten(slot) => {
                let Some(b) = &self.bufs[*slot] else {
                    return Ok(());
                };
                let mut s = self
                    .pipeline
                    .descriptor_set(0)
                    .map_err(|e| TestCaseError::fail(format!("{step}: {e}")))?;
                expect(s.write_buffer(0, &b.buffer), &[], &step)?;
                expect(s.write_buffer(1, &b.buffer), &[], &step)?;
                let p = self.pipeline;
                let r = d.execute(|r| {
                    r.bind_pipeline(p)?;
                    r.bind_set(0, &s)?;
                    r.dispatch_threads(LEN as u32)
                });
                if expect(r, &["KILN-E207", "KILN-E254"], &step)?.is_some() {
                    return Err(TestCaseError::fail(format!(
                        "{step}: a dispatch with binding 2 unwritten was accepted"
                    )));
                }
            }
            Op::DropSet(set) => self.sets[*set] = None,
            Op::NewImage(slot) => {
                let image = d
                    .image(&ImageDesc {
                        usage: vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::STORAGE,
                        ..ImageDesc::texture("fuzz", 8, 8, vk::Format::R8G8B8A8_UNORM)
                    })
                    .map_err(|e| TestCaseError::fail(format!("{step}: {e}")))?;
                // Zeroed, so that every image has defined contents (a copy out of an
                // undefined image would give whatever the memory held).
                let zeros = vec![0u8; 4 * LEN];
                image
                    .upload(&zeros)
                    .map_err(|e| TestCaseError::fail(format!("{step}: {e}")))?;
                self.imgs[*slot] = Some(Img {
                    image,
                    model: Rc::new(RefCell::new(Some(zeros))),
                });
            }
            Op::UploadImage(slot, v) => {
                if let Some(i) = &self.imgs[*slot] {
                    let px = bytes_of(&[float(*v); LEN]);
                    expect(i.image.upload(&px), &[], &step)?;
                    *i.model.borrow_mut() = Some(px);
                }
            }
            Op::ReadImage(slot) => {
                if let Some(i) = &self.imgs[*slot] {
                    let got = expect(i.image.read(), &[], &step)?;
                    if let Some(want) = i.model.borrow().as_ref() {
                        CHECKED_READS.fetch_add(1, Ordering::Relaxed);
                        if got.as_ref() != Some(want) {
                            return Err(TestCaseError::fail(format!(
                                "{step}: image read {got:?}, the model says {want:?}"
                            )));
                        }
                    }
                }
            }
            Op::Run(cmds, mode) => {
                let mut effects = Vec::new();
                match mode {
                    Mode::Execute => {
                        let r = d.execute(|r| record(r, self, cmds, &mut effects));
                        if expect(r, RUN_CODES, &step)?.is_some() {
                            apply(&effects);
                        }
                    }
                    Mode::Submit => {
                        let r = d.submit(|r| record(r, self, cmds, &mut effects));
                        if let Some(sub) = expect(r, RUN_CODES, &step)? {
                            apply(&effects);
                            self.pending.push(sub);
                        }
                    }
                    Mode::Record(times) => {
                        let rec = d.record(|r| record(r, self, cmds, &mut effects));
                        if let Some(mut rec) = expect(rec, RUN_CODES, &step)? {
                            for _ in 0..*times {
                                if expect(rec.execute(), RUN_CODES, &step)?.is_some() {
                                    apply(&effects);
                                }
                            }
                        }
                    }
                }
            }
            Op::Settle(wait) => {
                if !self.pending.is_empty() {
                    let sub = self.pending.remove(0);
                    if *wait {
                        expect(sub.wait(), &[], &step)?;
                    }
                }
            }
        }
        STEPS.fetch_add(1, Ordering::Relaxed);
        let report = d.validation_report();
        if !report.is_clean() && !common::only_known_false_positives(&report) {
            // Messages of a device stay counted: the next case gets a new device (so the
            // shrinking runs each smaller program on a clean one).
            return Err(TestCaseError::fail(format!(
                "{step}: validation reported:\n{}",
                report.messages.join("\n")
            )));
        }
        Ok(())
    }
}

/// Runs one program on its own objects.
fn run_program(
    device: &Device,
    pipeline: &ComputePipeline,
    (locs, program): &Program,
) -> Result<(), TestCaseError> {
    let mut w = World {
        device,
        pipeline,
        own_pipelines: Vec::new(),
        bufs: Default::default(),
        sets: Default::default(),
        imgs: Default::default(),
        pending: Vec::new(),
    };
    w.prelude(locs)?;
    for (n, op) in program.iter().enumerate() {
        w.step(op, n + 1)?;
    }
    w.epilogue(program.len() + 1)
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
