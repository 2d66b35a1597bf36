//! One program run against the device: the objects it made ([`World`]) and each step
//! ([`World::step`]) with its checks against the model.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use common::add::vector_add;
use kiln::{vk, BufferDesc, ComputePipeline, Device, ImageDesc, MemoryLocation, Submission};
use proptest::test_runner::TestCaseError;

use super::model::{apply, bytes_of, float, Buf, Img, Set};
use super::program::{Loc, Mode, Op, Program};
use super::record::{record, RUN_CODES};
use super::{expect, BUFS, CHECKED_READS, IMGS, LEN, SETS, STEPS};

/// What one program has made so far.
pub(super) struct World<'d> {
    pub(super) device: &'d Device,
    pub(super) pipeline: &'d ComputePipeline,
    pub(super) own_pipelines: Vec<ComputePipeline>,
    pub(super) bufs: [Option<Buf>; BUFS],
    pub(super) sets: [Option<Set>; SETS],
    pub(super) imgs: [Option<Img>; IMGS],
    pub(super) pending: Vec<Submission>,
}

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
pub(super) fn run_program(
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
