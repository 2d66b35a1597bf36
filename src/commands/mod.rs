//! Recording: the [`Recorder`] and its contract with the submission layer.
//!
//! A [`Recorder`] is handed out by `Device::execute`/`submit`/`record` and by the
//! presenter's `frame`; it records into one command buffer that the submission layer
//! (`queue`) begins, ends and submits. The commands are split by subject: `bind`
//! (pipelines, descriptor sets), `push` (push constants), `dispatch`, `barrier`,
//! `transfer` (copies, fills), `image_layouts` (layout transitions), `render`
//! (rendering scopes, vertex/index buffers, viewport, scissor, draws) and `scope` (GPU
//! timing scopes, debug labels, the caller locations of commands).
//!
//! # The contract
//!
//! **Every command returns `Result<_, RecordingError>`.** A command whose arguments Vulkan
//! would reject records nothing and returns the coded error; nothing is deferred, so `?`
//! stops the recording at the first error and the submission layer then submits nothing.
//! The closures of `execute`, `submit`, `record` and [`Recorder::scope`] return
//! [`Result`](crate::Result), so `?` converts a command's error there; a closure that ends
//! with a command writes `Ok(r.dispatch(..)?)` or `r.dispatch(..)?; Ok(())`.
//!
//! **One recording path.** A command that uses resources (dispatches, draws, copies, fills,
//! `raw_using`) is a value: a `Command` naming what it reads and writes, and a closure that
//! records its `vkCmd*`, given to `Recorder::record` (`command.rs`), which does the caller
//! location, the same-device checks of buffers and images, the rendering-scope check, the
//! bound-state check, the layout transitions, the automatic barrier (or manual mode's),
//! the pending scope start and the kept buffers, once, in that order. A command checks its
//! arguments before it. The other commands (binds, pushes, barriers, transitions,
//! rendering scopes, dynamic state, timing scopes) record their caller first; those that
//! record GPU work or state a scope's work starts from (`begin_rendering`,
//! `push_descriptor_set`, the dynamic state but viewport and scissor, `raw`) write a
//! pending scope start right before their own Vulkan command, while binds, pushes,
//! viewport and scissor leave it to the next command and barriers and transitions stay
//! before it (`scope`: a scope does not time the wait for earlier work). Every public
//! command is `#[track_caller]` (`tests/root/recording/callers.rs` checks each one names
//! the user's line; `tests/root/recording/devices.rs` that each one taking a buffer or
//! image refuses another device's), and one calling another goes through a crate-internal
//! form (`transition_now`), or is itself `#[track_caller]`, so the location stays the
//! user's.
//!
//! **Arguments.** Binding commands (pipelines, descriptor sets, vertex and index buffers)
//! borrow their object for `'a`, the lifetime of the whole recording: nothing to count or
//! keep per call. Commands that use a buffer or an image only for the call (copies, fills,
//! transitions, rendering attachments) take `&Buffer`/`&Image` and keep a clone in the
//! recorded work.
//!
//! **State a command updates** (fields of `Recorder`, grouped: `state` is the
//! `BoundState`, what is bound and the rendering scope; `caps` the `QueueCaps`, what the
//! queue can run; `sync` the `SyncMode`, the barrier mode and the tracker; the rest is
//! what the recording hands the submission):
//!
//! | state | who updates it |
//! | --- | --- |
//! | `state.bound[bind point]` (pipeline, layout, sets, `pushed`, `ready`) | `bind_pipeline`, `bind_set`, `push_constants`, `push_descriptor_set` (marks its set as given); a draw or dispatch checks it (`check_bound_state`) |
//! | `used_sets` | `bind_set`, once per set per recording (`listed_by`) |
//! | `kept`, `images`, `used_sets` (uses) | the submission layer derives from them which other queues' work a submission waits for (`queue::submit`) |
//! | `images` (`ImageUse`: first/last layouts per mip and layer, `moved`) | every command that uses an image in a layout: through `transition`/`transition_from` (or `touch` for a use without a barrier) |
//! | `kept` | `record` for the buffers of a `Command`, and `push_descriptor_set`, through `keep` (each buffer once per recording: `Buffer::mark_kept`) |
//! | `state.pushed`, `state.pushed_images`, `held` | `push_descriptor_set`: the pushed buffers' byte ranges and the pushed images (replaced by the next push of the set; the automatic barriers and the view checks read them), and every object pushed (images, views, samplers, buffer views), kept until the submission (`RecordedWork::held`) |
//! | `sync.dirty` | manual mode: set by `dispatch`; cleared by every barrier; a copy or fill records a barrier first when it is set |
//! | `sync.tracker`, `sync.uses`, `sync.pending_images` | automatic mode (the default): every dispatch, draw, copy and fill lists what it reads and writes in `uses` (bound sets × the pipeline's reflected access, vertex/index buffers, copy source and destination, by byte range and image) and the layout transitions it needs in `pending_images`; `track_uses` asks the tracker (`hazards`) for the one barrier they need and records it with the transitions (`automatic`), then tells the tracker what it recorded (`Tracker::recorded`) |
//! | `sync.set_cache`, `sync.pre`, `sync.pre_sources` | automatic mode: the first dispatch with a (set, pipeline access) pair compiles the set's buffer uses into `set_cache` (resolved to tracker slots); later ones copy them into `pre` (or, one set bound, apply them straight from the cache: `Tracker::apply_compiled`, warm at the tracker generation a dispatch last applied them at) |
//! | `sync.bind_gen`, `sync.last_dispatch`, `sync.repeat` | `bind_pipeline`/`bind_set` bump `bind_gen`; a dispatch with the bindings and tracker state of the previous one repeats its barrier without asking the tracker |
//! | `state.vertex_buffers`, `state.index_buffer`, `read` | `bind_vertex_buffer`, `bind_index_buffer`: what a draw reads; `read` lists each buffer once while it stays bound |
//! | `barriers` | every barrier kiln records on its own or by `barrier`/`full_barrier` (`barrier_count`) |
//! | `state.rendering` | `begin_rendering` / `end_rendering`; commands that are invalid inside (or outside) a scope check it |
//! | `state.resume` | `begin_rendering` keeps the scope's attachment infos; a draw whose hazard against an earlier draw of the scope splits it (`split`) begins it again from them |
//! | `timing` (scopes, reserved queries, the pending scope start) | `begin_scope`/`end_scope`/`scope`; `record` and the commands above that record work call `flush_scopes` right before their own Vulkan command (after its barriers), `raw` too; public commands call `at(Location::caller())` first (see `scope`) |
//!
//! **What the submission layer does with it.** The recording ends in one
//! `RecordedWork` (`Recorder::into_work`, called only by `queue`):
//! before ending the command buffer `queue` closes an open rendering scope (an error) and
//! records the final device→host barrier; once the command buffer is submitted it sets every
//! `used_sets` stamp to the submission's timeline value (a descriptor-set write then waits
//! for it), commits every moved image's `last` layout to the image, and drops the work after
//! the submission is recorded, so the kept images and buffers are destroyed only after it
//! completes. A reusable recording keeps the work: it checks at record time that it leaves
//! each image as it found it (`KILN-E284`) and at each submission that every image is still
//! in that layout (`KILN-E285`).
//!
//! **Barriers.** In automatic mode (`automatic`, `hazards`) a command gets a barrier only
//! where it reads what an earlier command wrote, or writes what one read or wrote, with the
//! stages and accesses of the two; a rendering scope begins with one barrier from what was
//! recorded since the last scope to the graphics stages (no barrier may be recorded inside
//! it); images bound through sets are moved to their descriptors' layouts. `manual_barriers`
//! turns all of that off (`barrier.rs`). Commands recorded through `raw` are not tracked.
//!
//! Every barrier is a synchronization2 barrier (`vkCmdPipelineBarrier2`, Vulkan spec
//! §7.6.2), its stages masked to those the recorder's queue supports
//! ([`Recorder::supported`]: a transfer queue has no shader stages). Commands a queue
//! cannot run at all (binding a compute pipeline on a transfer queue, rendering on a
//! compute queue) fail with `KILN-E120`.

mod acceleration_structure;
mod access_scope;
mod attachments;
mod automatic;
mod barrier;
mod bind;
mod command;
mod crumbs;
mod dispatch;
mod draw_list;
mod dynamic_state;
mod hazards;
mod image_layouts;
mod indirect;
mod mesh;
mod mips;
mod push;
mod push_descriptor;
mod render;
mod scope;
mod split;
mod transfer;
mod work;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;
use smallvec::SmallVec;

pub use dispatch::DISPATCH_INDIRECT_SIZE;
pub use draw_list::ListDraw;
pub use indirect::{DRAW_INDEXED_INDIRECT_SIZE, DRAW_INDIRECT_SIZE};
pub use mesh::DRAW_MESH_TASKS_INDIRECT_SIZE;
pub use push_descriptor::{PushResource, PushWrite};
pub use render::{ColorAttachment, DepthAttachment, LoadOp, RenderingDesc};
pub(crate) use scope::TimedWork;
pub(crate) use work::RecordedWork;

use crate::descriptors::{DescriptorSet, SetLayout};
use crate::device::{supported_stages, Buffer, Shared};
use crate::error::{RecordingError, Result};
use crate::pipeline::{PipelineAccess, PipelineLayout, PushConstantRange, RenderingFormats};
use command::{BufferAccess, Command};
use hazards::{Key, Need, Tracker, Use};
use work::ImageUse;

/// What is bound at one set number of a bind point.
#[derive(Clone, Copy, Debug)]
enum Slot<'a> {
    Empty,
    /// A descriptor set (`bind_set`).
    Set(&'a DescriptorSet),
    /// A push-descriptor set (`push_descriptor_set`): its buffers are in
    /// `Recorder::pushed`.
    Pushed,
}

impl Slot<'_> {
    #[inline]
    fn is_bound(&self) -> bool {
        !matches!(self, Slot::Empty)
    }
}

/// The pipeline bound at one bind point and what was bound for its layout.
struct Bound<'a> {
    raw: vk::Pipeline,
    layout: &'a PipelineLayout,
    /// What every bind and push reads of `layout`, copied when it is bound
    /// ([`Bound::set_layout`]) so that those commands chase no pointer into it: on
    /// NVIDIA the driver's work between two commands evicts the layout's cache lines, and
    /// a chase there was among the automatic row's most sampled loads (perf, H200).
    layout_raw: vk::PipelineLayout,
    /// `layout`'s set layouts (see `layout_raw`).
    set_layouts: &'a [Arc<SetLayout>],
    /// `layout`'s push-constant range where it has exactly one (see `layout_raw`).
    push_range: Option<PushConstantRange>,
    /// The addresses of `layout`'s first four set layouts (0: none), which `bind_set`
    /// compares a set's layout with (see `layout_raw`).
    first_set_layouts: [usize; 4],
    /// The reflected access of the pipeline's bindings (automatic barriers).
    access: &'a PipelineAccess,
    /// `access`'s keys of sets 0 to 3 ([`PipelineAccess::first_keys`]) and whether its
    /// shaders use buffer device addresses, copied when it is bound ([`Bound::set_access`])
    /// so that a dispatch reads neither through the pipeline (see `layout_raw`).
    access_keys: [usize; 4],
    addresses: bool,
    /// `access`'s [`image_sets`](PipelineAccess::image_sets) (see `access_keys`).
    image_sets: u64,
    bind_point: vk::PipelineBindPoint,
    workgroup: [u32; 3],
    /// Sets currently bound at this bind point, by set number (for redundant-bind elision
    /// and the automatic barriers). Updated in place: a pipeline switch truncates it, never
    /// reallocates it. The first four inline: a bind and a dispatch read them with the
    /// recorder's own lines, not through a pointer.
    sets: SmallVec<[Slot<'a>; 4]>,
    /// The 4-byte words of push-constant space pushed for this layout's ranges (values
    /// survive pipeline binds whose layouts have identical push constant ranges, Vulkan
    /// spec §14.2.10): see [`push::words`].
    pushed: push::Words,
    /// The words of the layout's push-constant range where it has exactly one (empty
    /// otherwise): what `push` of that whole range adds to `pushed`, made once per layout.
    whole_push: push::Words,
    /// [`Bound::check`] passed for `layout`, `sets` and `pushed` as they are. Only a layout
    /// change can make it false again: `bind_set` only adds sets and `push_constants` only
    /// sets `pushed`, so neither can undo a passed check.
    ready: bool,
}

impl<'a> Bound<'a> {
    /// [`PipelineAccess::key`] of set `si` of the bound pipeline (for sets 0 to 3, the
    /// copy in `access_keys`).
    #[inline(always)]
    fn access_key(&self, si: usize) -> usize {
        match self.access_keys.get(si) {
            Some(&k) => k,
            None => self.access.key(si),
        }
    }

    /// Keeps `access` and what a bind and a dispatch read of it beside it (`access_keys`,
    /// `addresses`, `image_sets`).
    fn set_access(&mut self, access: &'a PipelineAccess) {
        self.access = access;
        self.access_keys = access.first_keys();
        self.addresses = !access.device_address_stages().is_empty();
        self.image_sets = access.image_sets();
    }

    /// Keeps `layout` and what a bound pipeline keeps of it beside it (`layout_raw`,
    /// `set_layouts`, `push_range`, `whole_push`, `first_set_layouts`).
    fn set_layout(&mut self, layout: &'a PipelineLayout) {
        self.layout = layout;
        self.layout_raw = layout.raw();
        self.set_layouts = layout.set_layouts();
        self.push_range = match layout.push_constant_ranges() {
            [r] => Some(*r),
            _ => None,
        };
        self.whole_push = self.push_range.map_or_else(push::Words::default, |r| {
            push::Words::of(r.offset, r.offset + r.size)
        });
        let sets = self.set_layouts;
        self.first_set_layouts =
            std::array::from_fn(|i| sets.get(i).map_or(0, |l| Arc::as_ptr(l) as usize));
    }

    /// Every non-empty set of the layout is bound and push constants were pushed if the
    /// layout has ranges, every byte of them. Errors: `KILN-E254`, `KILN-E255` nothing
    /// pushed, `KILN-E265` part of the ranges never pushed.
    #[cold]
    #[inline(never)]
    fn check(&self) -> Result<(), RecordingError> {
        for (i, l) in self.layout.set_layouts().iter().enumerate() {
            let bound_here = self.sets.get(i).is_some_and(Slot::is_bound);
            if !bound_here && !l.desc().bindings().is_empty() {
                return Err(RecordingError::SetNotBound { set: i as u32 });
            }
        }
        let ranges = self.layout.push_constant_ranges();
        if ranges.is_empty() {
            return Ok(());
        }
        if self.pushed == push::Words::default() {
            return Err(RecordingError::PushConstantsNotSet {
                ranges: push::describe_ranges(ranges),
            });
        }
        if let Some(missing) = push::missing(ranges, self.pushed) {
            return Err(RecordingError::PushConstantsPartial {
                missing,
                ranges: push::describe_ranges(ranges),
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
///
/// # Recording code in functions and closures
///
/// A function that records takes the recorder as `&mut Recorder<'a, '_>` and what it binds
/// as `&'a` references: `'a` says they outlive the recording, the brand stays anonymous. A
/// closure cannot write `'a` in its parameter type (`|r: &mut Recorder<'_, '_>|` would
/// have to accept every `'a`, which a borrowed pipeline cannot outlive); give it its
/// signature through a function whose bound names `'a` once, as `pass` below, and it can
/// be called any number of times inside `execute`, `submit` or `record`:
///
/// ```no_run
/// use kiln::{ComputePipeline, DescriptorSet, Device, Recorder, RecordingError, Result};
///
/// fn blur<'a>(
///     r: &mut Recorder<'a, '_>,
///     pipeline: &'a ComputePipeline,
///     set: &'a DescriptorSet,
///     n: u32,
/// ) -> Result<(), RecordingError> {
///     r.bind_pipeline(pipeline)?;
///     r.bind_set(0, set)?;
///     r.dispatch_threads(n)
/// }
///
/// /// A closure with the signature recording calls it with.
/// fn pass<'a, F>(f: F) -> F
/// where
///     F: for<'r> FnMut(&mut Recorder<'a, 'r>) -> Result<()>,
/// {
///     f
/// }
///
/// fn frame(device: &Device, pipeline: &ComputePipeline, set: &DescriptorSet) -> Result<()> {
///     let mut twice = pass(|r| {
///         blur(r, pipeline, set, 4096)?;
///         blur(r, pipeline, set, 4096)?;
///         Ok(())
///     });
///     device.execute(|r| {
///         twice(r)?;
///         twice(r)
///     })?;
///     let mut step = device.record(|r| twice(r))?;
///     step.execute()?; // a SubmissionError; `?` makes it a kiln::Error
///     Ok(())
/// }
/// ```
pub struct Recorder<'a, 'r> {
    shared: &'a Shared,
    cb: vk::CommandBuffer,
    /// Images touched, with the layout each was found in and is left in.
    images: Vec<ImageUse>,
    /// What is bound and where the recording is: pipelines, sets, vertex and index buffers,
    /// the rendering scope (`BoundState`).
    state: BoundState<'a>,
    /// What the queue can run (`QueueCaps`).
    caps: QueueCaps,
    /// The barrier mode and its state: automatic (the hazard tracker) or manual
    /// (`SyncMode`).
    sync: SyncMode<'a>,
    /// Every set bound, stamped with the submission value; each set is listed once (its
    /// `listed_by` holds the id of the recording that listed it).
    used_sets: Vec<&'a DescriptorSet>,
    /// Buffers used for one call only, kept until the submission.
    kept: Vec<Buffer>,
    /// Buffers the recording reads and borrows for `'a` (vertex and index buffers).
    read: Vec<&'a Buffer>,
    /// Commands kiln cannot see the resources of were recorded: raw commands, or a
    /// pipeline whose shaders may reach any buffer by its device address. (Atomic only
    /// because `raw` takes `&self`.)
    opaque: AtomicBool,
    /// Unique (process-wide) id of this recording, for the deduplication of `used_sets`
    /// and of `kept` (`Buffer::mark_kept`).
    id: u64,
    /// The command buffer is submitted more than once (a reusable `Recording`).
    reusable: bool,
    /// Objects pushed (images, views, samplers, buffer views), kept until the submission.
    held: Vec<work::Held>,
    /// The keys of `held` (`Held::key`): an object pushed again is held once.
    held_keys: std::collections::HashSet<(u8, u64)>,
    /// Barriers recorded (see `barrier_count`).
    barriers: u32,
    /// `KILN-W005` was logged by this recording.
    warned: bool,
    /// The acceleration structures this recording builds (each once): a later top-level
    /// build of the recording may place them; marked built when the recording is
    /// submitted (`RecordedWork::built`).
    built: Vec<crate::device::AccelerationStructure>,
    /// Scopes, timestamps and caller tracking (`scope`).
    timing: scope::Timing<'a>,
    /// Invariant in `'r`: see the type's docs.
    _brand: std::marker::PhantomData<fn(&'r ()) -> &'r ()>,
}

/// What is bound at the two bind points and the rendering scope the recording is in: what
/// a draw or dispatch checks and reads (`Recorder::state`).
struct BoundState<'a> {
    /// Bound pipelines: [compute, graphics] (Vulkan keeps state per bind point).
    bound: [Option<Bound<'a>>; 2],
    /// The bind point of the pipeline bound last: `bind_set` and `push_constants` use it.
    /// (A bool, not an index: indexing `bound` with it needs no bounds check.)
    current_graphics: bool,
    /// Inside `begin_rendering` … `end_rendering`.
    rendering: bool,
    /// The open scope has a local-read colour attachment (`local_read_barrier`).
    local_read_scope: bool,
    /// The attachments of the open (or last) rendering scope.
    scope_formats: RenderingFormats,
    /// The bound graphics pipeline's attachments and its label.
    pipeline_formats: Option<(&'a RenderingFormats, &'a str)>,
    /// Per bind point (compute, graphics): the images of the bound sets match the bound
    /// pipeline's image types (`KILN-E214`), checked by the first dispatch or draw after a
    /// pipeline or set bind.
    views_ok: [bool; 2],
    /// The command buffer's values of the state kiln pipelines keep dynamic (`None` before
    /// the first graphics pipeline bind; `dynamic_state.rs`).
    dynamic: Option<crate::pipeline::DynamicState>,
    /// The bound graphics pipeline's topology (`None`: mesh shading, or none bound).
    pipeline_topology: Option<vk::PrimitiveTopology>,
    /// The bound graphics pipeline is a mesh-shading one (`draw_mesh_tasks` draws it, the
    /// other draws do not).
    pipeline_mesh: bool,
    /// ... with a task stage (its workgroup limits apply).
    pipeline_task: bool,
    /// Vertex buffer bindings the bound graphics pipeline reads (0 ..).
    vertex_bindings: u32,
    /// `pipeline_formats` equals `scope_formats` and every binding of `vertex_bindings` has
    /// a vertex buffer: checked by the first draw after any of them changed (`KILN-E287`,
    /// `KILN-E283`).
    formats_ok: bool,
    /// Vertex buffers bound, by binding, and the index buffer (automatic barriers).
    vertex_buffers: Vec<Option<(&'a Buffer, u64)>>,
    index_buffer: Option<(&'a Buffer, u64)>,
    /// Per bind point (compute, graphics): the buffers of the push-descriptor sets pushed,
    /// as (set number, binding index in the set layout, byte range) (automatic barriers).
    pushed: [Vec<(u32, usize, Key)>; 2],
    /// Per bind point: the images of the push-descriptor sets pushed (automatic barriers,
    /// view checks).
    pushed_images: [Vec<push_descriptor::PushedImage>; 2],
    /// The open rendering scope's attachments as begun, to begin it again when a draw's
    /// hazard against an earlier draw splits it (`split`), and the splits made.
    resume: split::Resume,
}

/// The capabilities of the queue the command buffer is for (`Recorder::caps`).
struct QueueCaps {
    /// The capabilities of the queue the command buffer is for (its pool's family).
    queue_flags: vk::QueueFlags,
    /// The pipeline stages that queue supports: every barrier's stages are masked to them
    /// (VUID-vkCmdPipelineBarrier2-srcStageMask-03849 ff.).
    stages: vk::PipelineStageFlags2,
    /// Per bind point (compute, graphics): the queue cannot bind such a pipeline.
    unsupported_bind: [bool; 2],
    /// `maxComputeWorkGroupCount` (copied: `dispatch` checks it every call).
    max_groups: [u32; 3],
}

/// How the recording orders its commands (`Recorder::sync`): automatic barriers (the
/// default; the hazard tracker and its scratch lists) or manual ones (`dirty`).
struct SyncMode<'a> {
    /// Automatic barriers and image layouts (the default; `manual_barriers` clears it).
    automatic: bool,
    /// A dispatch was recorded since the last barrier (manual mode).
    dirty: bool,
    /// The automatic barriers' state (`hazards`).
    tracker: Tracker,
    /// The uses of the command being recorded (scratch, kept for its allocation).
    uses: Vec<(Key, Use)>,
    /// Its uses resolved already (the compiled uses of its bound sets, `set_cache`), and
    /// from how many sets.
    pre: Vec<(hazards::Res, Use)>,
    pre_sources: u32,
    /// The compiled buffer uses of the (set, pipeline access) pairs dispatched with.
    set_cache: automatic::SetUses,
    /// Images of bound sets the command being recorded uses (scratch).
    set_images: Vec<automatic::SetImage<'a>>,
    /// Layout transitions to record with the command's barrier.
    pending_images: Vec<vk::ImageMemoryBarrier2<'static>>,
    /// The pieces of a range in one layout each (scratch of `move_range`, for images whose
    /// subresources are in several layouts).
    layout_pieces: Vec<(crate::device::Subresources, vk::ImageLayout)>,
    /// Bumped by every bind that changes what a dispatch uses.
    bind_gen: u64,
    /// (bind_gen, tracker epoch) after the last tracked dispatch.
    last_dispatch: (u64, u64),
    /// A dispatch with this bind_gen at this tracker epoch needs this barrier (the answer of
    /// the second of two identical dispatches, which every later one repeats).
    repeat: (u64, u64, Need),
    /// The tracker's `changes` when a draw last applied the bound vertex buffers' uses (and
    /// the index buffer's: the flag), `u64::MAX` after a bind (`draw_repeats_reads`).
    vertex_applied: (u64, bool),
    /// Stages of the command being recorded that access memory through buffer device
    /// addresses, and of earlier such commands no barrier followed yet (`automatic`).
    addresses_now: vk::PipelineStageFlags2,
    after_addresses: vk::PipelineStageFlags2,
}

/// The stages barriers on a queue of `queue_flags` may name: the family's, less the
/// shader stages whose feature the device lacks (`geometryShader`, `tessellationShader`,
/// VUID-VkMemoryBarrier2-srcStageMask-03929 ff.), plus the task and mesh stages where
/// VK_EXT_mesh_shader is enabled (…-07076 ff.).
fn barrier_stages(shared: &Shared, queue_flags: vk::QueueFlags) -> vk::PipelineStageFlags2 {
    use vk::PipelineStageFlags2 as S;
    let f = &shared.features;
    let mut s = supported_stages(queue_flags);
    if !f.geometry_shader {
        s &= !S::GEOMETRY_SHADER;
    }
    if !f.tessellation_shader {
        s &= !(S::TESSELLATION_CONTROL_SHADER | S::TESSELLATION_EVALUATION_SHADER);
    }
    if queue_flags.contains(vk::QueueFlags::GRAPHICS) && f.mesh_shader {
        s |= S::MESH_SHADER_EXT;
        if f.task_shader {
            s |= S::TASK_SHADER_EXT;
        }
    }
    s
}

/// Next recording id (0 is "listed by no recording").
static NEXT_RECORDING: AtomicU64 = AtomicU64::new(1);

impl<'a> Recorder<'a, '_> {
    /// A recorder for `cb`, which the caller has begun (the submission layer), of kiln
    /// queue `queue` with capabilities `queue_flags`; `reusable` when the command buffer
    /// will be submitted more than once.
    pub(crate) fn new(
        shared: &'a Shared,
        cb: vk::CommandBuffer,
        queue: usize,
        queue_flags: vk::QueueFlags,
        reusable: bool,
    ) -> Self {
        Recorder {
            shared,
            cb,
            images: Vec::new(),
            state: BoundState {
                bound: [None, None],
                current_graphics: false,
                rendering: false,
                local_read_scope: false,
                scope_formats: RenderingFormats::default(),
                pipeline_formats: None,
                views_ok: [false; 2],
                dynamic: None,
                pipeline_topology: None,
                pipeline_mesh: false,
                pipeline_task: false,
                vertex_bindings: 0,
                formats_ok: false,
                vertex_buffers: Vec::new(),
                index_buffer: None,
                pushed: [Vec::new(), Vec::new()],
                pushed_images: [Vec::new(), Vec::new()],
                resume: split::Resume::default(),
            },
            caps: QueueCaps {
                queue_flags,
                stages: barrier_stages(shared, queue_flags),
                unsupported_bind: [
                    !queue_flags.contains(vk::QueueFlags::COMPUTE),
                    !queue_flags.contains(vk::QueueFlags::GRAPHICS),
                ],
                max_groups: shared.limits().max_compute_work_group_count,
            },
            sync: SyncMode {
                automatic: true,
                dirty: false,
                tracker: Tracker::new(shared.features.ray_query),
                uses: Vec::new(),
                pre: Vec::new(),
                pre_sources: 0,
                set_cache: automatic::SetUses::default(),
                set_images: Vec::new(),
                pending_images: Vec::new(),
                layout_pieces: Vec::new(),
                bind_gen: 1,
                last_dispatch: (0, 0),
                repeat: (0, 0, Need::default()),
                vertex_applied: (u64::MAX, false),
                addresses_now: vk::PipelineStageFlags2::NONE,
                after_addresses: vk::PipelineStageFlags2::NONE,
            },
            used_sets: Vec::new(),
            kept: Vec::new(),
            read: Vec::new(),
            opaque: AtomicBool::new(false),
            id: NEXT_RECORDING.fetch_add(1, Ordering::Relaxed),
            reusable,
            held: Vec::new(),
            held_keys: std::collections::HashSet::new(),
            barriers: 0,
            warned: false,
            built: Vec::new(),
            timing: scope::Timing::new(queue, shared.instance.validation),
            _brand: std::marker::PhantomData,
        }
    }

    /// How many set stamps this recording has listed for its submission to update (each
    /// set once, and again after a nested recording listed it). Unstable: for kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_used_set_count(&self) -> usize {
        self.used_sets.len()
    }

    /// Ends the recording: what the submission layer applies once the command buffer is
    /// submitted (see the module docs); `timed` comes from
    /// [`finish_timing`](Self::finish_timing).
    pub(crate) fn into_work(self, timed: Option<TimedWork>) -> RecordedWork<'a> {
        RecordedWork {
            used_sets: self.used_sets,
            images: self.images,
            kept: self.kept,
            held: self.held,
            barriers: self.barriers,
            written: self.sync.automatic.then_some(self.sync.tracker.written),
            read: self.read,
            opaque: self.opaque.into_inner(),
            timed: timed.map(std::sync::Arc::new),
            pipelines: self.timing.pipelines,
            raw_calls: self.timing.raw_calls.into_inner(),
            built: self.built,
            crumbs: None,
        }
    }

    /// The capabilities of the queue this command buffer is recorded for
    /// (`VkQueueFamilyProperties::queueFlags` of its family; an emulated queue has those of
    /// its kind: a transfer queue `TRANSFER` only). Raw commands must be ones that family
    /// supports (each command's "Supported Queue Types", e.g. `vkCmdWaitEvents` needs
    /// graphics or compute: VUID-vkCmdWaitEvents-commandBuffer-cmdpool).
    pub fn queue_flags(&self) -> vk::QueueFlags {
        self.caps.queue_flags
    }

    /// The command buffer, for kiln's own commands that name their uses themselves (the
    /// staged transfers' copies, with `Batch::uses`): unlike [`raw`](Self::raw), it does
    /// not make the submission opaque.
    pub(crate) fn command_buffer(&self) -> vk::CommandBuffer {
        self.cb
    }

    /// The raw command buffer, for commands kiln does not wrap.
    ///
    /// A pending scope start is written first (commands recorded through it belong to the
    /// open scope), and with validation on a message the layer raises while the caller
    /// records through it names the line of this call (`commands::scope`).
    ///
    /// # Safety
    /// Commands recorded through it must be valid for the current state and must not use
    /// objects that may be destroyed before the execution finishes.
    ///
    /// kiln cannot see what raw commands use: a submission with raw commands makes host
    /// access to every mapped buffer wait for it (as a pipeline using buffer device
    /// addresses does), and orders nothing against other queues. The automatic barriers do
    /// not see them either: order them with [`full_barrier`](Self::full_barrier) (before
    /// and after), or name their buffers with [`raw_using`](Self::raw_using).
    #[track_caller]
    pub unsafe fn raw(&self) -> vk::CommandBuffer {
        let location = std::panic::Location::caller();
        self.at(location);
        self.raw_call(location);
        self.flush_scopes();
        self.opaque.store(true, Ordering::Relaxed);
        self.cb
    }

    /// [`raw`](Self::raw) for raw commands that use no kiln buffer but `buffers`: each is
    /// kept alive until the submission and counted as read and written by it at every
    /// stage (the automatic barriers order the raw commands after earlier kiln commands on
    /// those buffers, and later ones after them; host access
    /// to it waits for the submission, other queues' work on it is ordered against it),
    /// and the submission is not opaque, so host access to other mapped buffers does not
    /// wait for it.
    ///
    /// Errors: `KILN-E109` a buffer of another device.
    ///
    /// # Safety
    /// As [`raw`](Self::raw); moreover the raw commands must use no buffer, image or
    /// descriptor set of kiln other than `buffers` and what kiln commands of this
    /// recording bind.
    #[track_caller]
    pub unsafe fn raw_using(
        &mut self,
        buffers: &[&Buffer],
    ) -> Result<vk::CommandBuffer, RecordingError> {
        // The raw commands read and write `buffers` at any stage: ordered after what the
        // recording did with them, and what follows is ordered after them.
        let u = Use {
            stage: vk::PipelineStageFlags2::ALL_COMMANDS,
            read: vk::AccessFlags2::MEMORY_READ,
            write: vk::AccessFlags2::MEMORY_WRITE,
        };
        let uses: Vec<_> = buffers
            .iter()
            .map(|b| BufferAccess::new(b, 0, b.size(), u))
            .collect();
        let command = Command {
            place: command::Place::Anywhere,
            bound: command::Bound::None,
            buffers: &uses,
            images: &[],
            manual: command::Manual::Caller,
        };
        self.record(command, |_, _| {})?;
        self.raw_call(std::panic::Location::caller());
        Ok(self.cb)
    }

    /// `(stage, access)` restricted to the stages the queue supports; an access whose
    /// stages are all unsupported is dropped (work of those stages cannot be on this queue:
    /// other queues' work is ordered by semaphores), and so are the accesses the remaining
    /// stages do not perform (`access_scope`: a shader read beside `BOTTOM_OF_PIPE` on a
    /// transfer queue, found by the API fuzzer).
    #[inline]
    pub(crate) fn supported(
        &self,
        stage: vk::PipelineStageFlags2,
        access: vk::AccessFlags2,
    ) -> (vk::PipelineStageFlags2, vk::AccessFlags2) {
        let masked = stage & self.caps.stages;
        if masked == stage {
            (stage, access)
        } else if masked.is_empty() {
            (vk::PipelineStageFlags2::NONE, vk::AccessFlags2::NONE)
        } else {
            (masked, access & access_scope::accesses_of(masked))
        }
    }

    /// `KILN-E120`: this queue cannot run `what`, which needs `needed`.
    #[cold]
    #[inline(never)]
    pub(crate) fn unsupported(&self, what: &'static str, needed: vk::QueueFlags) -> RecordingError {
        RecordingError::QueueUnsupported {
            flags: self.caps.queue_flags,
            what,
            needed,
        }
    }
}
