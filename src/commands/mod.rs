//! Recording: bind pipeline, bind sets (checked for compatibility by interned id), push
//! constants, dispatch, barriers, copies; graphics recording (rendering scopes, vertex and
//! index buffers, draws, image layout transitions) lives in `commands/render.rs`.
//!
//! A [`Recorder`] is handed out by [`Device::execute`](crate::Device::execute); everything
//! it binds is borrowed for the whole execution.

use std::sync::atomic::{AtomicU64, Ordering};

mod render;

use ash::vk;

pub use render::{ColorAttachment, DepthAttachment, LoadOp, RenderingDesc};

use crate::descriptors::{DescriptorSet, SetLayout};
use crate::device::{Buffer, Image, Shared};
use crate::error::{Error, Result};
use crate::pipeline::{Pipeline, PipelineLayout, PushConstantRange};

struct Bound<'a> {
    raw: vk::Pipeline,
    layout: &'a PipelineLayout,
    bind_point: vk::PipelineBindPoint,
    workgroup: [u32; 3],
    /// Set handles currently bound at this bind point, by set number (for redundant-bind
    /// elision). Updated in place: a pipeline switch truncates it, never reallocates it.
    sets: Vec<vk::DescriptorSet>,
    /// Push constants were pushed for this layout's ranges (values survive pipeline binds
    /// whose layouts have identical push constant ranges, Vulkan spec §14.2.10).
    pushed: bool,
    /// [`Bound::check`] passed for `layout`, `sets` and `pushed` as they are. Only a layout
    /// change can make it false again: `bind_set` only adds sets and `push_constants` only
    /// sets `pushed`, so neither can undo a passed check.
    ready: bool,
}

impl Bound<'_> {
    /// Every non-empty set of the layout is bound and push constants were pushed if the
    /// layout has ranges. Errors: `KILN-E254`, `KILN-E255`.
    #[cold]
    #[inline(never)]
    fn check(&self) -> Result<()> {
        for (i, l) in self.layout.set_layouts().iter().enumerate() {
            let bound_here = self
                .sets
                .get(i)
                .is_some_and(|s| *s != vk::DescriptorSet::null());
            if !bound_here && !l.desc().bindings().is_empty() {
                return Err(Error::SetNotBound { set: i as u32 });
            }
        }
        if !self.pushed && !self.layout.push_constant_ranges().is_empty() {
            return Err(Error::PushConstantsNotSet {
                ranges: format!("{:?}", self.layout.push_constant_ranges()),
            });
        }
        Ok(())
    }
}

/// Records commands into one command buffer. Obtained from `Device::execute`.
///
/// `'a` is how long everything the recording binds must live (the device borrow of the
/// `execute`/`submit` call); `'r` brands one recording: it is a fresh, invariant lifetime
/// per call, so two recorders (e.g. of nested `execute` calls) cannot be swapped:
///
/// ```compile_fail
/// fn nested(device: &kiln::Device) -> kiln::Result<()> {
///     device.execute(|outer| {
///         device.execute(|inner| {
///             std::mem::swap(outer, inner); // error: the two recorders have distinct brands
///             Ok(())
///         })
///     })
/// }
/// ```
pub struct Recorder<'a, 'r> {
    shared: &'a Shared,
    cb: vk::CommandBuffer,
    /// Bound pipelines: [compute, graphics] (Vulkan keeps state per bind point).
    bound: [Option<Bound<'a>>; 2],
    /// The bind point of the pipeline bound last: `bind_set` and `push_constants` use it.
    /// (A bool, not an index: indexing `bound` with it needs no bounds check.)
    current_graphics: bool,
    /// Layouts this recording moved images to; applied to the images after submission.
    layouts: Vec<(Image, vk::ImageLayout)>,
    /// Per image in `layouts`: the layout it was in when the recording first touched it
    /// (what a reusable recording starts from, even if the image moves meanwhile).
    starts: Vec<(vk::Image, vk::ImageLayout)>,
    /// Images used in the layout they were in without any transition by this recording
    /// (before a transition, if any): a reusable recording relies on that layout.
    relied: Vec<(Image, vk::ImageLayout)>,
    /// Inside `begin_rendering` … `end_rendering`.
    rendering: bool,
    /// `last_used` stamps of every set bound, updated with the submission value; each set
    /// is listed once (its `listed_by` holds the id of the recording that listed it).
    used_sets: Vec<&'a AtomicU64>,
    /// Unique (process-wide) id of this recording, for `used_sets`' deduplication.
    id: u64,
    /// A dispatch was recorded since the last barrier.
    dirty: bool,
    /// `maxComputeWorkGroupCount` (copied: `dispatch` checks it every call).
    max_groups: [u32; 3],
    /// Insert a compute→compute barrier before a dispatch that follows another.
    auto_barriers: bool,
    /// First error of a command that returns nothing (a copy out of range, an object of
    /// another device): the command is not recorded and the submission fails with it.
    deferred: Option<Error>,
    /// Images referenced by commands that borrow them only for the call (rendering
    /// attachments); released after the submission, so their drop is deferred past it.
    keep_images: Vec<Image>,
    /// Invariant in `'r`: see the type's docs.
    _brand: std::marker::PhantomData<fn(&'r ()) -> &'r ()>,
}

/// Next recording id (0 is "listed by no recording").
static NEXT_RECORDING: AtomicU64 = AtomicU64::new(1);

fn slot(bind_point: vk::PipelineBindPoint) -> usize {
    usize::from(bind_point == vk::PipelineBindPoint::GRAPHICS)
}

impl<'a, 'r> Recorder<'a, 'r> {
    pub(crate) fn new(shared: &'a Shared, cb: vk::CommandBuffer) -> Self {
        Recorder {
            shared,
            cb,
            bound: [None, None],
            current_graphics: false,
            layouts: Vec::new(),
            starts: Vec::new(),
            relied: Vec::new(),
            rendering: false,
            used_sets: Vec::new(),
            id: NEXT_RECORDING.fetch_add(1, Ordering::Relaxed),
            dirty: false,
            max_groups: shared.limits().max_compute_work_group_count,
            auto_barriers: true,
            deferred: None,
            keep_images: Vec::new(),
            _brand: std::marker::PhantomData,
        }
    }

    /// Turns off the automatic barrier between consecutive dispatches. kiln does not track
    /// which buffers each dispatch touches, so by default every dispatch that follows
    /// another waits for its writes (a compute→compute memory barrier). Independent
    /// dispatches may skip that; the caller then places [`barrier`](Self::barrier)s where a
    /// dispatch reads or writes what an earlier one wrote (else results are undefined and
    /// synchronization validation reports a hazard). Copies and fills always wait for the
    /// dispatches recorded before them.
    pub fn manual_barriers(&mut self) {
        self.auto_barriers = false;
    }

    /// How many set stamps this recording has listed for its submission to update (each
    /// set once, and again after a nested recording listed it). Unstable: for kiln's tests.
    #[doc(hidden)]
    pub fn debug_used_set_count(&self) -> usize {
        self.used_sets.len()
    }

    pub(crate) fn into_used_sets(self) -> Vec<&'a AtomicU64> {
        self.used_sets
    }

    /// For a reusable recording: the used-set stamps, the images whose layouts the
    /// recording moves (with their final layouts, not committed), the layout each of them
    /// was in when the recording first touched it, the images used without a transition
    /// (with the layout relied on) and the images kept alive.
    #[allow(clippy::type_complexity)]
    pub(crate) fn into_parts(
        self,
    ) -> (
        Vec<&'a AtomicU64>,
        Vec<(Image, vk::ImageLayout)>,
        Vec<(vk::Image, vk::ImageLayout)>,
        Vec<(Image, vk::ImageLayout)>,
        Vec<Image>,
    ) {
        (
            self.used_sets,
            self.layouts,
            self.starts,
            self.relied,
            self.keep_images,
        )
    }

    /// The first error of a command that could not return one (nothing is submitted then).
    pub(crate) fn take_deferred(&mut self) -> Option<Error> {
        self.deferred.take()
    }

    fn defer(&mut self, e: Error) {
        self.deferred.get_or_insert(e);
    }

    /// Checks that `buffer` was made by this recorder's device.
    fn own(&mut self, buffer: &Buffer) -> bool {
        if std::ptr::eq(&**buffer.shared(), self.shared) {
            return true;
        }
        self.defer(Error::ForeignObject {
            object: format!("buffer `{}`", buffer.label()),
        });
        false
    }

    /// Device writes → host reads (recorded last in every submission).
    pub(crate) fn host_barrier(&mut self) {
        self.memory_barrier(
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::HOST,
            vk::AccessFlags::MEMORY_WRITE,
            vk::AccessFlags::HOST_READ | vk::AccessFlags::HOST_WRITE,
        );
    }

    /// One global `VkMemoryBarrier` from (stage, access) to (stage, access).
    fn memory_barrier(
        &mut self,
        src_stage: vk::PipelineStageFlags,
        dst_stage: vk::PipelineStageFlags,
        src_access: vk::AccessFlags,
        dst_access: vk::AccessFlags,
    ) {
        let b = vk::MemoryBarrier::default()
            .src_access_mask(src_access)
            .dst_access_mask(dst_access);
        // SAFETY: `cb` is recording; the barrier is a local.
        unsafe {
            self.shared.raw.cmd_pipeline_barrier(
                self.cb,
                src_stage,
                dst_stage,
                vk::DependencyFlags::empty(),
                &[b],
                &[],
                &[],
            )
        }
    }

    /// Stores the layouts recorded in this command buffer into the images; call once the
    /// command buffer was submitted (queue order makes them the layouts later submissions
    /// see).
    pub(crate) fn commit_layouts(&mut self) {
        for (img, layout) in self.layouts.drain(..) {
            *img.0.layout.lock().unwrap_or_else(|p| p.into_inner()) = layout;
        }
    }

    /// The raw command buffer, for commands kiln does not wrap.
    ///
    /// # Safety
    /// Commands recorded through it must be valid for the current state and must not use
    /// objects that may be destroyed before the execution finishes.
    pub unsafe fn raw(&self) -> vk::CommandBuffer {
        self.cb
    }

    /// Binds a compute or graphics pipeline. Sets bound earlier at the same bind point stay
    /// bound when the new layout is compatible for them ("compatible for set N", Vulkan
    /// spec §14.2.2). A pipeline of another device is not bound and fails the submission
    /// (`KILN-E109`).
    // The per-dispatch calls (bind_pipeline, bind_set, push/push_constants, dispatch) are
    // always inlined into the caller and keep their error and rare paths in #[cold]
    // functions: no call, no register spills, no `Result` through memory (callgrind, bench
    // recording row: 201 -> 160 instructions of kiln code per dispatch).
    #[inline(always)]
    pub fn bind_pipeline<P: Pipeline>(&mut self, pipeline: &'a P) {
        if !pipeline.layout().belongs_to(self.shared) {
            self.defer(Error::ForeignObject {
                object: "a pipeline of another device".to_string(),
            });
            return;
        }
        let layout: &'a PipelineLayout = pipeline.layout();
        let raw = pipeline.raw();
        let bind_point = pipeline.bind_point();
        let i = slot(bind_point);
        self.current_graphics = i == 1;
        match &mut self.bound[i] {
            Some(prev) if prev.raw == raw => return,
            Some(prev) => {
                // Same interned layout: every bound set stays valid (no comparison needed).
                if !std::ptr::eq(prev.layout, layout) {
                    prev.sets.truncate(compatible_prefix(prev.layout, layout));
                    if prev.layout.push_constant_ranges() != layout.push_constant_ranges() {
                        prev.pushed = false;
                    }
                    prev.layout = layout;
                    prev.ready = false;
                }
                prev.raw = raw;
                prev.workgroup = pipeline.workgroup_size();
            }
            None => {
                self.bound[i] = Some(Bound {
                    raw,
                    layout,
                    bind_point,
                    workgroup: pipeline.workgroup_size(),
                    sets: Vec::new(),
                    pushed: false,
                    ready: false,
                })
            }
        }
        // SAFETY: `cb` is recording; the pipeline outlives the execution ('a).
        unsafe { self.shared.raw.cmd_bind_pipeline(self.cb, bind_point, raw) };
    }

    /// Binds `set` at set number `index` of the bound pipeline's layout.
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E205` no such set, `KILN-E204` the set's
    /// layout differs from the pipeline's at that number (the error shows the first
    /// differing binding), `KILN-E207` a binding was never written.
    #[inline(always)]
    pub fn bind_set(&mut self, index: u32, set: &'a DescriptorSet) -> Result<()> {
        // `let else`, not `ok_or`: an eagerly built error is dropped on every call.
        let Some(bound) = self.bound[usize::from(self.current_graphics)].as_mut() else {
            return Err(Error::NoPipelineBound { what: "bind_set" });
        };
        let i = index as usize;
        // Already bound at this number: it passed the checks below when it was bound, and
        // a later pipeline with an incompatible layout would have unbound it.
        if bound.sets.get(i) == Some(&set.raw()) {
            return Ok(());
        }
        let layouts = bound.layout.set_layouts();
        let Some(expected) = layouts.get(i) else {
            return Err(Error::NoSuchSet {
                set: index,
                set_count: layouts.len() as u32,
            });
        };
        // Interned layouts: equal ids ⇔ the same object (both are alive for 'a).
        if !std::sync::Arc::ptr_eq(expected, set.layout()) {
            return Err(incompatible_set(index, set, expected));
        }
        if let Some(binding) = set.first_unwritten() {
            return Err(Error::BindingNotWritten {
                set: index,
                binding,
            });
        }
        // List each set once per recording: the store and the comparison are this thread's
        // own, so a set whose `listed_by` is this id was pushed by this recording. Another
        // recording (another thread) may overwrite it; then the set is listed again here,
        // which is harmless (the stamp update is a `fetch_max`).
        if set.listed_by.load(Ordering::Relaxed) != self.id {
            set.listed_by.store(self.id, Ordering::Relaxed);
            self.used_sets.push(&set.last_used);
        }
        // SAFETY: the set's layout equals the pipeline layout's at `index` (checked), the set
        // outlives the execution ('a) and every binding was written.
        unsafe {
            self.shared.raw.cmd_bind_descriptor_sets(
                self.cb,
                bound.bind_point,
                bound.layout.raw(),
                index,
                &[set.raw()],
                &[],
            )
        };
        if bound.sets.len() <= i {
            bound.sets.resize(i + 1, vk::DescriptorSet::null());
        }
        bound.sets[i] = set.raw();
        Ok(())
    }

    /// Pushes `bytes` at byte `offset`. The stage flags come from the layout: each piece of
    /// the bytes goes with exactly the stages whose ranges contain it
    /// (VUID-vkCmdPushConstants-offset-01795, -01796).
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E250` bytes outside every range.
    #[inline(always)]
    pub fn push_constants(&mut self, offset: u32, bytes: &[u8]) -> Result<()> {
        let Some(bound) = self.bound[usize::from(self.current_graphics)].as_mut() else {
            return Err(Error::NoPipelineBound {
                what: "push_constants",
            });
        };
        // Fast path (no allocation): aligned, non-empty bytes that every range overlapping
        // them contains whole, so one call with the union of their stages satisfies both
        // VUIDs. Anything else (errors included) takes `push_pieces`.
        let end = u32::try_from(bytes.len())
            .ok()
            .and_then(|n| offset.checked_add(n));
        if let Some(end) = end.filter(|&e| e > offset && (offset | e).is_multiple_of(4)) {
            let mut stages = vk::ShaderStageFlags::empty();
            let mut whole = true;
            for r in bound.layout.push_constant_ranges() {
                let (lo, hi) = (r.offset, r.offset + r.size);
                if lo < end && offset < hi {
                    whole &= lo <= offset && end <= hi;
                    stages |= r.stages;
                }
            }
            if whole && !stages.is_empty() {
                // SAFETY: [offset, end) lies inside every range of `stages` and overlaps no
                // other range.
                unsafe {
                    self.shared.raw.cmd_push_constants(
                        self.cb,
                        bound.layout.raw(),
                        stages,
                        offset,
                        bytes,
                    )
                };
                bound.pushed = true;
                return Ok(());
            }
        }
        self.push_pieces(offset, bytes)
    }

    /// `push_constants` off its fast path: the errors, and bytes that straddle range
    /// boundaries (one call per piece, each with the stages of the ranges containing it).
    #[cold]
    #[inline(never)]
    fn push_pieces(&mut self, offset: u32, bytes: &[u8]) -> Result<()> {
        let Some(bound) = self.bound[usize::from(self.current_graphics)].as_mut() else {
            return Err(Error::NoPipelineBound {
                what: "push_constants",
            });
        };
        let ranges = bound.layout.push_constant_ranges();
        let end = u32::try_from(bytes.len())
            .ok()
            .and_then(|n| offset.checked_add(n))
            .ok_or_else(|| Error::PushConstantsOutOfRange {
                offset,
                end: u32::MAX,
                ranges: format!("{ranges:?} ({} bytes do not fit in 32 bits)", bytes.len()),
            })?;
        for (lo, hi, stages) in push_segments(ranges, offset, end)? {
            let piece = &bytes[(lo - offset) as usize..(hi - offset) as usize];
            // SAFETY: [lo, hi) lies inside every range of `stages` and overlaps no other.
            unsafe {
                self.shared
                    .raw
                    .cmd_push_constants(self.cb, bound.layout.raw(), stages, lo, piece)
            };
        }
        bound.pushed = true;
        Ok(())
    }

    /// Checks that every non-empty set of the layout bound at `slot` is bound and that push
    /// constants were pushed (VUID-vkCmdDispatch-None-08600, -maintenance4-08602, and the
    /// same VUIDs of vkCmdDraw*). Errors: `KILN-E254`, `KILN-E255`. The answer is cached
    /// until a pipeline with another layout is bound (see `Bound::ready`).
    #[inline]
    pub(crate) fn check_bound_state(&mut self, slot: usize) -> Result<()> {
        match &mut self.bound[slot] {
            Some(bound) if !bound.ready => {
                bound.check()?;
                bound.ready = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Pushes a `Pod` value at byte `offset` (see [`push_constants`](Self::push_constants)).
    #[inline(always)]
    pub fn push<T: bytemuck::Pod>(&mut self, offset: u32, value: &T) -> Result<()> {
        self.push_constants(offset, bytemuck::bytes_of(value))
    }

    /// Dispatches `groups` workgroups.
    ///
    /// Errors: `KILN-E252` no pipeline bound, `KILN-E253` beyond maxComputeWorkGroupCount,
    /// `KILN-E254` a set of the pipeline's layout is not bound (VUID-vkCmdDispatch-None-08600),
    /// `KILN-E255` push constants never pushed (VUID-vkCmdDispatch-maintenance4-08602).
    #[inline(always)]
    pub fn dispatch(&mut self, x: u32, y: u32, z: u32) -> Result<()> {
        // One branch while nothing changed since the last successful check.
        if !matches!(&self.bound[0], Some(b) if b.ready) {
            if self.bound[0].is_none() {
                return Err(Error::NoPipelineBound { what: "dispatch" });
            }
            self.check_bound_state(0)?;
        }
        let limit = self.max_groups;
        if self.rendering | (x > limit[0]) | (y > limit[1]) | (z > limit[2]) {
            return Err(self.dispatch_error([x, y, z]));
        }
        if self.dirty && self.auto_barriers {
            self.barrier();
        }
        // SAFETY: a compute pipeline is bound; counts are within limits.
        unsafe { self.shared.raw.cmd_dispatch(self.cb, x, y, z) };
        self.dirty = true;
        Ok(())
    }

    /// The error of a dispatch inside a rendering scope (`KILN-E283`) or beyond
    /// maxComputeWorkGroupCount (`KILN-E253`), in that order.
    #[cold]
    #[inline(never)]
    fn dispatch_error(&self, groups: [u32; 3]) -> Error {
        if self.rendering {
            return Error::RenderingState {
                what: "dispatch inside a rendering scope; call end_rendering first",
            };
        }
        Error::DispatchTooLarge {
            groups,
            limit: self.max_groups,
        }
    }

    /// Dispatches enough workgroups along x to cover `n` invocations.
    #[inline]
    pub fn dispatch_threads(&mut self, n: u32) -> Result<()> {
        let wg = self.bound[0].as_ref().map_or(1, |b| b.workgroup[0].max(1));
        self.dispatch(n.div_ceil(wg).max(1), 1, 1)
    }

    /// A compute→compute memory barrier: writes of earlier dispatches are visible to later
    /// ones.
    pub fn barrier(&mut self) {
        self.dirty = false;
        self.memory_barrier(
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            vk::AccessFlags::SHADER_WRITE,
            vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
        );
    }

    /// A full memory barrier (all commands, all memory).
    pub fn full_barrier(&mut self) {
        self.dirty = false;
        self.memory_barrier(
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::AccessFlags::MEMORY_WRITE,
            vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE,
        );
    }

    /// Copies `size` bytes, then a transfer→all barrier. Both buffers stay borrowed until
    /// the submission is made, so they outlive it (dropped later, they are destroyed after
    /// it completes).
    ///
    /// A copy past either buffer's end (`KILN-E151`), of zero bytes or between overlapping
    /// ranges of one buffer (`KILN-E155`), or with a buffer of another device (`KILN-E109`)
    /// is not recorded and makes the submission fail with that error
    /// (VUID-vkCmdCopyBuffer-srcOffset-00113 ff., -pRegions-00117, VUID-VkBufferCopy-size-01988).
    pub fn copy_buffer(
        &mut self,
        src: &'a Buffer,
        src_offset: u64,
        dst: &'a Buffer,
        dst_offset: u64,
        size: u64,
    ) {
        if !self.own(src) || !self.own(dst) {
            return;
        }
        for (b, offset) in [(src, src_offset), (dst, dst_offset)] {
            if offset.checked_add(size).is_none_or(|e| e > b.size()) {
                self.defer(Error::BufferOverflow {
                    object: b.label().to_string(),
                    capacity: b.size(),
                    offset,
                    requested: size,
                });
                return;
            }
        }
        let overlap = src.raw() == dst.raw()
            && src_offset < dst_offset + size
            && dst_offset < src_offset + size;
        if size == 0 || overlap {
            self.defer(Error::InvalidCopy {
                src: src.label().to_string(),
                dst: dst.label().to_string(),
                src_offset,
                dst_offset,
                size,
                detail: if size == 0 {
                    "the size must be greater than 0"
                } else {
                    "source and destination ranges of one buffer overlap"
                },
            });
            return;
        }
        // Earlier dispatches may write what this copy reads or writes (read/write-after-write).
        if self.dirty {
            self.full_barrier();
        }
        let region = vk::BufferCopy {
            src_offset,
            dst_offset,
            size,
        };
        // SAFETY: both buffers belong to this device, have TRANSFER usage (kiln adds it) and
        // are borrowed until the submission exists (then retired after it); the region is in
        // range and does not overlap (checked above).
        unsafe {
            self.shared
                .raw
                .cmd_copy_buffer(self.cb, src.raw(), dst.raw(), &[region])
        };
        self.full_barrier();
    }

    /// Fills the whole buffer with the 32-bit `value`, then a full barrier. A buffer of
    /// another device is not filled and fails the submission (`KILN-E109`).
    pub fn fill_buffer(&mut self, buffer: &'a Buffer, value: u32) {
        if !self.own(buffer) {
            return;
        }
        // Earlier dispatches may write the buffer (write-after-write).
        if self.dirty {
            self.full_barrier();
        }
        // SAFETY: TRANSFER_DST usage is always present; WHOLE_SIZE rounds down to 4 bytes.
        unsafe {
            self.shared
                .raw
                .cmd_fill_buffer(self.cb, buffer.raw(), 0, vk::WHOLE_SIZE, value)
        };
        self.full_barrier();
    }
}

/// `KILN-E204` for `set` bound at `index` where the pipeline layout has `expected`.
#[cold]
#[inline(never)]
fn incompatible_set(index: u32, set: &DescriptorSet, expected: &SetLayout) -> Error {
    let diff = set
        .layout()
        .desc()
        .diff(expected.desc())
        .unwrap_or_else(|| "layouts differ".into());
    Error::IncompatibleSet { set: index, diff }
}

/// Number of leading sets for which two layouts are "compatible for set N": equal
/// push-constant ranges and equal set layouts 0..=N (Vulkan spec §14.2.2).
pub fn compatible_prefix(a: &PipelineLayout, b: &PipelineLayout) -> usize {
    if a.push_constant_ranges() != b.push_constant_ranges() {
        return 0;
    }
    a.set_layouts()
        .iter()
        .zip(b.set_layouts())
        .take_while(|(x, y)| x.id() == y.id())
        .count()
}

/// Splits [offset, end) at every range boundary; each piece gets the stages of the ranges
/// containing it. A piece no range contains is an error.
pub(crate) fn push_segments(
    ranges: &[PushConstantRange],
    offset: u32,
    end: u32,
) -> Result<Vec<(u32, u32, vk::ShaderStageFlags)>> {
    let describe = || {
        ranges
            .iter()
            .map(|r| format!("{:?}[{}, {})", r.stages, r.offset, r.offset + r.size))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !offset.is_multiple_of(4) || !end.is_multiple_of(4) || end <= offset {
        return Err(Error::PushConstantsOutOfRange {
            offset,
            end,
            ranges: format!("{} (offset and size must be multiples of 4)", describe()),
        });
    }
    let mut cuts = vec![offset, end];
    for r in ranges {
        for c in [r.offset, r.offset + r.size] {
            if c > offset && c < end {
                cuts.push(c);
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out: Vec<(u32, u32, vk::ShaderStageFlags)> = Vec::new();
    for w in cuts.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let stages = ranges
            .iter()
            .filter(|r| r.offset <= lo && hi <= r.offset + r.size)
            .fold(vk::ShaderStageFlags::empty(), |s, r| s | r.stages);
        if stages.is_empty() {
            return Err(Error::PushConstantsOutOfRange {
                offset,
                end,
                ranges: describe(),
            });
        }
        match out.last_mut() {
            Some(last) if last.2 == stages && last.1 == lo => last.1 = hi,
            _ => out.push((lo, hi, stages)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(stages: vk::ShaderStageFlags, offset: u32, size: u32) -> PushConstantRange {
        PushConstantRange {
            stages,
            offset,
            size,
        }
    }

    #[test]
    fn segments_split_overlapping_ranges() {
        let v = vk::ShaderStageFlags::VERTEX;
        let f = vk::ShaderStageFlags::FRAGMENT;
        let ranges = [r(v, 0, 64), r(f, 0, 16)];
        let s = push_segments(&ranges, 0, 64).unwrap();
        assert_eq!(s, vec![(0, 16, v | f), (16, 64, v)]);
        let s = push_segments(&ranges, 4, 8).unwrap();
        assert_eq!(s, vec![(4, 8, v | f)]);
        assert!(push_segments(&ranges, 60, 68).is_err());
        assert!(push_segments(&ranges, 2, 6).is_err());
    }
}
