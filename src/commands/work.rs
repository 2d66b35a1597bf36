//! What a recording leaves for the submission layer: [`RecordedWork`].

use ash::vk;

use crate::descriptors::DescriptorSet;
use crate::device::{
    AccelerationStructure, Buffer, BufferView, Image, ImageView, Sampler, SubresourceMap,
};

/// One image a recording touched (transitioned, or used in the layout it was in).
#[derive(Debug)]
pub(crate) struct ImageUse {
    /// A clone: keeps the image alive until the submission (then its drop is deferred past
    /// it) or, in a reusable recording, as long as the recording.
    pub image: Image,
    /// The image's layouts (per mip and layer) when the recording first touched it: what a
    /// reusable recording relies on at every submission.
    pub first: SubresourceMap<vk::ImageLayout>,
    /// The layouts the recording leaves it in (equal to `first` when not `moved`).
    pub last: SubresourceMap<vk::ImageLayout>,
    /// A barrier of the recording changed its layout (else it only relied on `first`).
    pub moved: bool,
    /// A reusable recording uses the image through a descriptor set from its first use on
    /// in `first`, without a transition of its own: the submission layer moves it there
    /// once before the recording is first submitted (then `KILN-E285` checks it).
    pub prepare: bool,
    /// The recording's first command on the image was a transition from UNDEFINED
    /// (discarding the contents, as a depth clear does): the recording relies on no layout
    /// at all, since such a barrier is valid from every layout
    /// (VUID-VkImageMemoryBarrier2-oldLayout-01197 exempts UNDEFINED). A reusable
    /// recording may then leave it in another layout than `first`.
    pub discards: bool,
}

/// An object a push-descriptor set refers to, kept alive until the submission (its use
/// for cross-queue ordering is listed in `images` or `kept`).
#[derive(Clone)]
#[allow(dead_code)] // held only to keep the object alive
pub(crate) enum Held {
    Image(Image),
    View(ImageView),
    Sampler(Sampler),
    TexelBuffer(BufferView),
}

impl Held {
    /// The object's kind and Vulkan handle: one key per object, for holding each once.
    pub(crate) fn key(&self) -> (u8, u64) {
        use vk::Handle;
        match self {
            Held::Image(i) => (0, i.raw().as_raw()),
            Held::View(v) => (1, v.raw().as_raw()),
            Held::Sampler(s) => (2, s.raw().as_raw()),
            Held::TexelBuffer(b) => (3, b.raw().as_raw()),
        }
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Held::Image(_) => "Image",
            Held::View(_) => "View",
            Held::Sampler(_) => "Sampler",
            Held::TexelBuffer(_) => "TexelBuffer",
        })
    }
}

/// The end of a recording ([`Recorder::into_work`](super::Recorder::into_work)): everything
/// the submission layer must apply or keep once the command buffer is submitted. Only
/// `queue` consumes it (see the contract in the `commands` module docs).
#[derive(Debug, Default)]
pub(crate) struct RecordedWork<'a> {
    /// Every descriptor set bound, each once: stamped with the submission's queue and
    /// timeline value, so a later write to the set waits for the submission; the
    /// resources they refer to are the submission's uses (cross-queue waits).
    pub used_sets: Vec<&'a DescriptorSet>,
    /// Every image touched, once each, in first-touch order: `last` is committed to the
    /// image once submitted (later recordings start from it); a reusable recording checks
    /// `first == last` when recorded (`KILN-E284`) and `image.layout() == last` at every
    /// submission (`KILN-E285`), except for images it `discards`.
    pub images: Vec<ImageUse>,
    /// Buffers a command used without borrowing them for the recording's lifetime, kept
    /// alive like the images; the submission counts them as read and written.
    pub kept: Vec<Buffer>,
    /// Objects pushed in push-descriptor sets, kept alive like the images.
    #[allow(dead_code)] // held only to keep the objects alive
    pub held: Vec<Held>,
    /// Barriers the recording recorded (`Recorder::barrier_count`).
    pub barriers: u32,
    /// With automatic barriers: every buffer and image (raw handle) a command wrote; the
    /// other resources of the used sets and kept buffers are only read (`None` in manual
    /// mode: every storage binding and kept buffer counts as written).
    pub written: Option<super::hazards::HandleSet>,
    /// Buffers the commands read, borrowed for the recording's lifetime (vertex and index
    /// buffers): uses that only read.
    pub read: Vec<&'a Buffer>,
    /// The recording has commands whose resources kiln cannot see (raw commands, a
    /// pipeline that uses buffer device addresses): host access to any mapped buffer
    /// waits for its submissions.
    pub opaque: bool,
    /// The timestamps the recording wrote (scopes, the whole submission), shared with the
    /// submissions that read them (a reusable recording's several).
    pub timed: Option<std::sync::Arc<super::TimedWork>>,
    /// The names of the pipelines bound (only with validation on), for the messages the
    /// layer raises while the submission is made (`device::SubmitContext`).
    pub pipelines: Vec<&'a str>,
    /// Where `Recorder::raw` was called (only with validation on), for the same messages.
    pub raw_calls: Vec<&'static std::panic::Location<'static>>,
    /// The acceleration structures the recording builds: marked built once it is
    /// submitted (a recording dropped unsubmitted built nothing).
    pub built: Vec<AccelerationStructure>,
    /// The recording's breadcrumbs (`device::breadcrumbs`), remembered at submission.
    pub crumbs: Option<std::sync::Arc<crate::device::Crumbs>>,
}

impl RecordedWork<'_> {
    /// Stores the layouts the recording moved images to into the images, and marks the
    /// structures it builds built (call once the command buffer was submitted: queue order
    /// makes them the layouts later submissions see, and puts the builds before later
    /// submissions' top-level builds).
    pub(crate) fn commit_layouts(&self) {
        for u in self.images.iter().filter(|u| u.moved) {
            u.image.set_layouts(&u.last);
        }
        for s in &self.built {
            s.mark_built();
        }
    }
}
