//! One program run against the device: the objects it made ([`World`]) and each step
//! ([`World::step`]) with its checks against the model (the `Run` step is `run.rs`'s).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use common::add::vector_add;
use kiln::{vk, BufferDesc, Device, ImageDesc, MemoryLocation, Queue, QueueKind, Submission};
use proptest::test_runner::TestCaseError;

use super::model::{bytes_of, ramp, Buf, Img, Set};
use super::program::{Loc, Op, Program};
use super::{expect, Pipelines, BUFS, CHECKED_READS, IMGS, LEN, SETS, STEPS};

/// What one program has made so far.
pub(super) struct World<'d> {
    pub(super) device: &'d Device,
    pub(super) pipes: &'d Pipelines,
    /// The device's compute and transfer queues (emulated on a device with one queue).
    pub(super) compute: Queue,
    pub(super) transfer: Queue,
    pub(super) own_pipelines: Vec<kiln::ComputePipeline>,
    pub(super) bufs: [Option<Buf>; BUFS],
    pub(super) sets: [Option<Set>; SETS],
    pub(super) imgs: [Option<Img>; IMGS],
    pub(super) pending: Vec<Submission>,
}

/// A step's failure, with the step and what went wrong.
pub(super) fn fail(step: &str, what: impl std::fmt::Display) -> TestCaseError {
    TestCaseError::fail(format!("{step}: {what}"))
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

    /// Runs step `n`, then checks that validation stayed silent.
    fn step(&mut self, op: &Op, n: usize) -> Result<(), TestCaseError> {
        let step = format!("step {n} {op:?}");
        match op {
            Op::NewBuffer(slot, l) => self.new_buffer(*slot, *l, &step)?,
            Op::DropBuffer(slot) => self.bufs[*slot] = None,
            Op::Upload(slot, v) => {
                if let Some(b) = &self.bufs[*slot] {
                    let words = ramp(*v);
                    expect(b.buffer.upload(&words), &[], &step)?;
                    *b.model.borrow_mut() = words;
                }
            }
            Op::Read(slot) => {
                if let Some(b) = &self.bufs[*slot] {
                    let got = expect(b.buffer.read::<u32>(), &[], &step)?;
                    let want = b.model.borrow().clone();
                    CHECKED_READS.fetch_add(1, Ordering::Relaxed);
                    if got.as_ref() != Some(&want) {
                        let what = format!("read {got:?}, the model says {want:?}");
                        return Err(fail(&step, what));
                    }
                }
            }
            Op::NewSet {
                set,
                abc,
                own_pipeline,
            } => self.new_set(*set, abc, *own_pipeline, &step)?,
            Op::WrongWrite(set, binding) => self.wrong_write(*set, *binding, &step)?,
            Op::Unwritten(slot) => self.unwritten(*slot, &step)?,
            Op::DropSet(set) => self.sets[*set] = None,
            Op::NewImage(slot) => self.new_image(*slot, &step)?,
            Op::UploadImage(slot, v) => {
                if let Some(i) = &self.imgs[*slot] {
                    let px = bytes_of(&ramp(*v));
                    expect(i.image.upload(&px), &[], &step)?;
                    *i.model.borrow_mut() = Some(px);
                }
            }
            Op::ReadImage(slot) => self.read_image(*slot, &step)?,
            Op::Run(cmds, mode, on) => self.run(cmds, *mode, *on, &step)?,
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
        let report = self.device.validation_report();
        if !report.is_clean() && !common::only_known_false_positives(&report) {
            // Messages of a device stay counted: the next case gets a new device (so the
            // shrinking runs each smaller program on a clean one).
            let what = format!("validation reported:\n{}", report.messages.join("\n"));
            return Err(fail(&step, what));
        }
        Ok(())
    }

    /// A zeroed buffer (storage and vertex usage) and its set of the storage-word draw.
    fn new_buffer(&mut self, slot: usize, l: Loc, step: &str) -> Result<(), TestCaseError> {
        let location = match l {
            Loc::GpuOnly => MemoryLocation::GpuOnly,
            Loc::CpuToGpu => MemoryLocation::CpuToGpu,
            Loc::GpuToCpu => MemoryLocation::GpuToCpu,
        };
        let buffer = self
            .device
            .buffer(
                &BufferDesc::default()
                    .label("fuzz")
                    .size(4 * LEN as u64)
                    .usage(
                        vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::VERTEX_BUFFER,
                    )
                    .location(location),
            )
            .map_err(|e| fail(step, e))?;
        buffer.upload(&[0u32; LEN]).map_err(|e| fail(step, e))?;
        let mut word_set = self
            .pipes
            .storage_word
            .descriptor_set(0)
            .map_err(|e| fail(step, e))?;
        word_set
            .write_buffer(0, &buffer)
            .map_err(|e| fail(step, e))?;
        self.bufs[slot] = Some(Buf {
            buffer,
            model: Rc::new(RefCell::new(vec![0; LEN])),
            word_set: Rc::new(word_set),
        });
        Ok(())
    }

    fn new_set(
        &mut self,
        set: usize,
        abc: &[usize; 3],
        own_pipeline: bool,
        step: &str,
    ) -> Result<(), TestCaseError> {
        let bufs: Option<Vec<Buf>> = abc.iter().map(|i| self.bufs[*i].clone()).collect();
        let Some(bufs) = bufs else { return Ok(()) };
        let mut s = if own_pipeline {
            let p = vector_add(self.device);
            let s = p.descriptor_set(0);
            self.own_pipelines.push(p);
            s
        } else {
            self.pipes.add.descriptor_set(0)
        }
        .map_err(|e| fail(step, e))?;
        for (binding, b) in bufs.iter().enumerate() {
            expect(s.write_buffer(binding as u32, &b.buffer), &[], step)?;
        }
        let abc = [bufs[0].clone(), bufs[1].clone(), bufs[2].clone()];
        self.sets[set] = Some(Set { set: s, abc });
        Ok(())
    }

    /// A write to a binding vector_add's set lacks: `KILN-E200`, never accepted.
    fn wrong_write(&mut self, set: usize, binding: u32, step: &str) -> Result<(), TestCaseError> {
        let Some(buf) = self.bufs.iter().flatten().next().cloned() else {
            return Ok(());
        };
        if let Some(s) = &mut self.sets[set] {
            let r = s.set.write_buffer(binding, &buf.buffer);
            if expect(r, &["KILN-E200"], step)?.is_some() {
                let what = format!("a write to binding {binding} of vector_add's set was accepted");
                return Err(fail(step, what));
            }
        }
        Ok(())
    }

    /// A dispatch with binding 2 of its set unwritten: refused, never run.
    fn unwritten(&mut self, slot: usize, step: &str) -> Result<(), TestCaseError> {
        let Some(b) = &self.bufs[slot] else {
            return Ok(());
        };
        let mut s = self
            .pipes
            .add
            .descriptor_set(0)
            .map_err(|e| fail(step, e))?;
        expect(s.write_buffer(0, &b.buffer), &[], step)?;
        expect(s.write_buffer(1, &b.buffer), &[], step)?;
        let p = &self.pipes.add;
        let r = self.device.execute(|r| {
            r.bind_pipeline(p)?;
            r.bind_set(0, &s)?;
            Ok(r.dispatch_threads(LEN as u32)?)
        });
        if expect(r, &["KILN-E207", "KILN-E254"], step)?.is_some() {
            return Err(fail(
                step,
                "a dispatch with binding 2 unwritten was accepted",
            ));
        }
        Ok(())
    }

    /// An 8×8 RGBA8 image a dispatch could store to, a copy read or write and a rendering
    /// scope draw into, zeroed.
    fn new_image(&mut self, slot: usize, step: &str) -> Result<(), TestCaseError> {
        let usage = vk::ImageUsageFlags::SAMPLED
            | vk::ImageUsageFlags::STORAGE
            | vk::ImageUsageFlags::COLOR_ATTACHMENT;
        let image = self
            .device
            .image(&ImageDesc::texture("fuzz", 8, 8, vk::Format::R8G8B8A8_UNORM).usage(usage))
            .map_err(|e| fail(step, e))?;
        // Zeroed, so that every image has defined contents (a copy out of an undefined
        // image would give whatever the memory held).
        let zeros = vec![0u8; 4 * LEN];
        image.upload(&zeros).map_err(|e| fail(step, e))?;
        self.imgs[slot] = Some(Img {
            image,
            model: Rc::new(RefCell::new(Some(zeros))),
        });
        Ok(())
    }

    fn read_image(&mut self, slot: usize, step: &str) -> Result<(), TestCaseError> {
        if let Some(i) = &self.imgs[slot] {
            let got = expect(i.image.read(), &[], step)?;
            if let Some(want) = i.model.borrow().as_ref() {
                CHECKED_READS.fetch_add(1, Ordering::Relaxed);
                if got.as_ref() != Some(want) {
                    let what = format!("image read {got:?}, the model says {want:?}");
                    return Err(fail(step, what));
                }
            }
        }
        Ok(())
    }
}

/// Runs one program on its own objects.
pub(super) fn run_program(
    device: &Device,
    pipes: &Pipelines,
    (locs, program): &Program,
) -> Result<(), TestCaseError> {
    let mut w = World {
        device,
        pipes,
        compute: device.queue(QueueKind::Compute),
        transfer: device.queue(QueueKind::Transfer),
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
