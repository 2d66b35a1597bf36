//! Queue families: which kiln queues a device gets ([`plan_queues`]), what each kind is
//! for ([`QueueKind`], [`QueueInfo`]), the pipeline stages a family supports and how
//! resources are shared between families ([`Sharing`]).
//!
//! [`plan_queues`] reads the queue families (§5.3.1 "Queue Family Properties") and picks:
//!
//! - **main** ([`QueueKind::Main`], kiln queue 0): queue 0 of the first family with
//!   graphics and compute, else of the first with compute;
//! - **async compute** ([`QueueKind::Compute`], up to `DeviceDesc::compute_queues`): queues
//!   of a family with compute and no graphics; else further queues of the main family;
//! - **transfer** ([`QueueKind::Transfer`], up to `DeviceDesc::transfer_queues`): queues of
//!   a family with transfer and neither graphics nor compute (the copy engines; of those,
//!   the family with the fewest other capabilities, so not a video family); else unused
//!   queues of the compute family, else of the main family.
//!
//! A kind the device cannot give a queue of its own falls back to the main queue
//! ([`QueueSource::Main`]: the same kiln queue, same timeline). Tests may ask for
//! *emulated* queues instead ([`QueueSource::Emulated`]): kiln queues with timelines of
//! their own on the main `VkQueue` (one lock), so the cross-queue paths run on a device
//! with one queue (lavapipe). An emulated queue has the capabilities of its kind (a
//! transfer queue: TRANSFER only), so recordings on it are checked as on a real one.
//!

use ash::vk;

use super::queue::Queue;

/// The most async-compute queues kiln creates.
pub const MAX_COMPUTE_QUEUES: u32 = 4;
/// The most transfer queues kiln creates.
pub const MAX_TRANSFER_QUEUES: u32 = 2;

/// What a queue is for: [`Device::queue`](crate::Device::queue) hands out the queue of a
/// kind, the main queue where the device has no queue of its own for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QueueKind {
    /// Compute, and graphics where the device has it: every submission of
    /// `Device::execute`/`submit`/`record` and the window presenter.
    Main,
    /// Asynchronous compute: a compute queue without graphics, running beside the main
    /// queue.
    Compute,
    /// Copies only (the DMA engines): uploads and readbacks.
    Transfer,
}

/// Where the queue of a kind comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QueueSource {
    /// A `VkQueue` of its own, with its own timeline.
    Dedicated,
    /// The device has no queue for this kind: it is the main queue (same timeline).
    Main,
    /// A timeline of its own on the main `VkQueue` (test devices, `DeviceDesc`'s hidden
    /// `emulate_queues`): submissions are ordered like a dedicated queue's, but run on one
    /// queue.
    Emulated,
}

/// What a kiln queue is ([`Queue::info`](crate::Queue::info), [`Device::queue_infos`](crate::Device::queue_infos)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueInfo {
    /// The kind it was asked for.
    pub kind: QueueKind,
    /// kiln's index of the queue: two infos with the same index are the same queue (the
    /// main queue is 0).
    pub index: usize,
    /// Its queue family (`vkGetDeviceQueue`'s `queueFamilyIndex`).
    pub family: u32,
    /// Its index within the family (`vkGetDeviceQueue`'s `queueIndex`).
    pub queue_index: u32,
    /// The family's capabilities (`VkQueueFamilyProperties::queueFlags`).
    pub flags: vk::QueueFlags,
    /// Whether it is a queue of its own, the main queue, or emulated.
    pub source: QueueSource,
}

/// One kiln queue a device will have, as [`plan_queues`] chose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlannedQueue {
    pub kind: QueueKind,
    pub family: u32,
    pub queue_index: u32,
    pub flags: vk::QueueFlags,
    pub source: QueueSource,
}

/// The queues of a device: what to create and how the kinds map to kiln queues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueuePlan {
    /// `(family, queue count)` for `VkDeviceQueueCreateInfo`, the main family first.
    pub create: Vec<(u32, u32)>,
    /// kiln's queues: the main queue first, then compute, then transfer queues.
    pub queues: Vec<PlannedQueue>,
    /// kiln queue indices per kind (`[Main, Compute, Transfer]`); a kind without queues of
    /// its own lists the main queue (0).
    pub by_kind: [Vec<usize>; 3],
}

impl QueueKind {
    pub(crate) fn slot(self) -> usize {
        match self {
            QueueKind::Main => 0,
            QueueKind::Compute => 1,
            QueueKind::Transfer => 2,
        }
    }
}

/// Chooses the device's queues from its queue families (see the module docs). `main` is the
/// main family; `compute` and `transfer` are the numbers of queues wanted of each kind
/// (clamped to [`MAX_COMPUTE_QUEUES`], [`MAX_TRANSFER_QUEUES`]); `emulate` makes the kinds
/// without queues of their own emulated instead of falling back to the main queue.
pub(crate) fn plan_queues(
    families: &[vk::QueueFamilyProperties],
    main: u32,
    compute: u32,
    transfer: u32,
    emulate: bool,
) -> QueuePlan {
    use vk::QueueFlags as F;
    let flags_of = |f: u32| {
        families
            .get(f as usize)
            .map_or(F::empty(), |p| p.queue_flags)
    };
    let count_of = |f: u32| families.get(f as usize).map_or(0, |p| p.queue_count);
    // Queues taken so far per family (the main queue is index 0 of `main`).
    let mut taken = vec![0u32; families.len()];
    if let Some(t) = taken.get_mut(main as usize) {
        *t = 1;
    }
    let mut queues = vec![PlannedQueue {
        kind: QueueKind::Main,
        family: main,
        queue_index: 0,
        flags: flags_of(main),
        source: QueueSource::Dedicated,
    }];
    let mut by_kind: [Vec<usize>; 3] = [vec![0], Vec::new(), Vec::new()];
    let (compute_families, transfer_families) = preferred_families(families, main);
    let wanted = [
        (
            QueueKind::Compute,
            compute.min(MAX_COMPUTE_QUEUES),
            compute_families,
        ),
        (
            QueueKind::Transfer,
            transfer.min(MAX_TRANSFER_QUEUES),
            transfer_families,
        ),
    ];
    for (kind, n, prefs) in wanted {
        for _ in 0..n {
            let Some(&family) = prefs
                .iter()
                .find(|&&f| taken.get(f as usize).is_some_and(|&t| t < count_of(f)))
            else {
                break;
            };
            let queue_index = taken[family as usize];
            taken[family as usize] += 1;
            by_kind[kind.slot()].push(queues.len());
            queues.push(PlannedQueue {
                kind,
                family,
                queue_index,
                flags: flags_of(family),
                source: QueueSource::Dedicated,
            });
        }
        if by_kind[kind.slot()].is_empty() {
            if emulate && n > 0 {
                // The capabilities of the kind, not of the main queue: recordings on it are
                // checked (and their barriers masked) as on a dedicated queue.
                let flags = match kind {
                    QueueKind::Transfer => F::TRANSFER,
                    _ => F::COMPUTE | F::TRANSFER,
                };
                by_kind[kind.slot()].push(queues.len());
                queues.push(PlannedQueue {
                    kind,
                    flags: flags & queues[0].flags,
                    source: QueueSource::Emulated,
                    ..queues[0]
                });
            } else {
                by_kind[kind.slot()].push(0);
            }
        }
    }
    let create = create_infos(&queues);
    QueuePlan {
        create,
        queues,
        by_kind,
    }
}

/// The families to take compute and transfer queues from, in preference order: compute
/// from compute-only families, then `main`; transfer from transfer-only families (fewest
/// capabilities besides transfer first), then the compute ones.
fn preferred_families(families: &[vk::QueueFamilyProperties], main: u32) -> (Vec<u32>, Vec<u32>) {
    use vk::QueueFlags as F;
    let flags_of = |f: u32| {
        families
            .get(f as usize)
            .map_or(F::empty(), |p| p.queue_flags)
    };
    let compute_only = |p: &vk::QueueFamilyProperties| {
        p.queue_flags.contains(F::COMPUTE) && !p.queue_flags.contains(F::GRAPHICS)
    };
    let transfer_only = |p: &vk::QueueFamilyProperties| {
        p.queue_flags.contains(F::TRANSFER) && !p.queue_flags.intersects(F::GRAPHICS | F::COMPUTE)
    };
    let mut compute_families: Vec<u32> = (0..families.len() as u32)
        .filter(|&f| compute_only(&families[f as usize]))
        .collect();
    compute_families.push(main);
    let mut transfer_families: Vec<u32> = (0..families.len() as u32)
        .filter(|&f| transfer_only(&families[f as usize]))
        .collect();
    // Fewest capabilities besides transfer first (a plain copy family before a video one).
    transfer_families.sort_by_key(|&f| {
        let extra = flags_of(f) & !(F::TRANSFER | F::SPARSE_BINDING | F::PROTECTED);
        (extra.as_raw().count_ones(), f)
    });
    transfer_families.extend(compute_families.iter().copied());
    (compute_families, transfer_families)
}

/// `(family, queue count)` for `VkDeviceQueueCreateInfo`: each family of the dedicated
/// queues once, in order, with one more than its highest queue index.
fn create_infos(queues: &[PlannedQueue]) -> Vec<(u32, u32)> {
    let mut create: Vec<(u32, u32)> = Vec::new();
    for q in queues.iter().filter(|q| q.source == QueueSource::Dedicated) {
        match create.iter_mut().find(|(f, _)| *f == q.family) {
            Some((_, n)) => *n = (*n).max(q.queue_index + 1),
            None => create.push((q.family, q.queue_index + 1)),
        }
    }
    create
}

/// Pipeline stages a queue of these capabilities supports (Vulkan spec §7.1.2, the table of
/// supported pipeline stage flags): a barrier or wait on it may name no other stage
/// (VUID-vkCmdPipelineBarrier2-srcStageMask-03849 ff.).
pub(crate) fn supported_stages(flags: vk::QueueFlags) -> vk::PipelineStageFlags2 {
    use vk::PipelineStageFlags2 as S;
    use vk::QueueFlags as F;
    let mut s = S::TOP_OF_PIPE | S::BOTTOM_OF_PIPE | S::HOST | S::ALL_COMMANDS;
    if flags.intersects(F::TRANSFER | F::GRAPHICS | F::COMPUTE) {
        s |= S::ALL_TRANSFER | S::COPY | S::RESOLVE | S::BLIT | S::CLEAR;
    }
    if flags.intersects(F::GRAPHICS | F::COMPUTE) {
        s |= S::DRAW_INDIRECT;
    }
    if flags.contains(F::COMPUTE) {
        // Acceleration structure builds need a compute queue
        // (VUID-vkCmdBuildAccelerationStructuresKHR-commandBuffer-cmdpool).
        s |= S::COMPUTE_SHADER | S::ACCELERATION_STRUCTURE_BUILD_KHR;
    }
    if flags.contains(F::GRAPHICS) {
        s |= S::ALL_GRAPHICS
            | S::INDEX_INPUT
            | S::VERTEX_ATTRIBUTE_INPUT
            | S::VERTEX_INPUT
            | S::VERTEX_SHADER
            | S::TESSELLATION_CONTROL_SHADER
            | S::TESSELLATION_EVALUATION_SHADER
            | S::GEOMETRY_SHADER
            | S::PRE_RASTERIZATION_SHADERS
            | S::FRAGMENT_SHADER
            | S::EARLY_FRAGMENT_TESTS
            | S::LATE_FRAGMENT_TESTS
            | S::COLOR_ATTACHMENT_OUTPUT;
    }
    s
}

/// How buffers and images are shared between kiln's queue families.
///
/// `VK_SHARING_MODE_CONCURRENT` over every family when kiln's queues span more than one,
/// else `EXCLUSIVE` (Vulkan spec §12.7 "Resource Sharing Mode"). Concurrent sharing needs
/// no queue-family ownership transfer: an exclusive resource used on a second family needs
/// a release barrier recorded on the family that used it last, in a command buffer that is
/// usually submitted already, and a matching acquire (§7.7.4); kiln would have to submit an
/// extra batch per hand-over and track each resource's owner. Concurrent sharing may cost
/// speed where a driver then disables image compression (AMD's DCC); NVIDIA documents no
/// cost for buffers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sharing {
    /// The distinct families, in queue order (empty: one family, exclusive).
    families: Vec<u32>,
}

impl Sharing {
    pub(crate) fn new(queues: &[Queue]) -> Sharing {
        let mut families: Vec<u32> = Vec::new();
        for q in queues {
            if !families.contains(&q.family) {
                families.push(q.family);
            }
        }
        if families.len() < 2 {
            families.clear();
        }
        Sharing { families }
    }

    pub(crate) fn mode(&self) -> vk::SharingMode {
        if self.families.is_empty() {
            vk::SharingMode::EXCLUSIVE
        } else {
            vk::SharingMode::CONCURRENT
        }
    }

    /// `queueFamilyIndices` for a create info (empty when exclusive).
    pub(crate) fn families(&self) -> &[u32] {
        &self.families
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::QueueFlags as F;

    fn family(flags: F, count: u32) -> vk::QueueFamilyProperties {
        vk::QueueFamilyProperties {
            queue_flags: flags,
            queue_count: count,
            ..Default::default()
        }
    }

    /// The queue families of an NVIDIA H200 (driver 580.159.04, from vulkaninfo): a
    /// device with dedicated compute and transfer families.
    fn h200() -> Vec<vk::QueueFamilyProperties> {
        vec![
            family(
                F::GRAPHICS | F::COMPUTE | F::TRANSFER | F::SPARSE_BINDING,
                16,
            ),
            family(F::TRANSFER | F::SPARSE_BINDING, 2),
            family(F::COMPUTE | F::TRANSFER | F::SPARSE_BINDING, 8),
            family(F::TRANSFER | F::VIDEO_DECODE_KHR, 7),
            family(F::OPTICAL_FLOW_NV, 1),
        ]
    }

    fn placed(plan: &QueuePlan) -> Vec<(QueueKind, u32, u32, QueueSource)> {
        plan.queues
            .iter()
            .map(|q| (q.kind, q.family, q.queue_index, q.source))
            .collect()
    }

    #[test]
    fn the_h200_gets_dedicated_compute_and_copy_engine_queues() {
        use QueueKind::*;
        use QueueSource::Dedicated;
        let plan = plan_queues(&h200(), 0, 2, 2, false);
        assert_eq!(
            placed(&plan),
            vec![
                (Main, 0, 0, Dedicated),
                (Compute, 2, 0, Dedicated),
                (Compute, 2, 1, Dedicated),
                (Transfer, 1, 0, Dedicated),
                (Transfer, 1, 1, Dedicated),
            ]
        );
        assert_eq!(plan.create, vec![(0, 1), (2, 2), (1, 2)]);
        assert_eq!(plan.by_kind, [vec![0], vec![1, 2], vec![3, 4]]);
        // Emulation changes nothing where every kind has queues.
        assert_eq!(plan_queues(&h200(), 0, 2, 2, true), plan);
    }

    #[test]
    fn one_queue_falls_back_to_the_main_queue_or_emulates() {
        let lavapipe = [family(F::GRAPHICS | F::COMPUTE | F::TRANSFER, 1)];
        let plan = plan_queues(&lavapipe, 0, 1, 2, false);
        assert_eq!(plan.queues.len(), 1);
        assert_eq!(plan.create, vec![(0, 1)]);
        assert_eq!(plan.by_kind, [vec![0], vec![0], vec![0]]);
        let emulated = plan_queues(&lavapipe, 0, 1, 2, true);
        use QueueSource::*;
        assert_eq!(
            emulated.queues.iter().map(|q| q.source).collect::<Vec<_>>(),
            vec![Dedicated, Emulated, Emulated]
        );
        // One emulated queue per kind, with the kind's capabilities; nothing more is
        // created.
        assert_eq!(emulated.by_kind, [vec![0], vec![1], vec![2]]);
        assert_eq!(emulated.queues[1].flags, F::COMPUTE | F::TRANSFER);
        assert_eq!(emulated.queues[2].flags, F::TRANSFER);
        assert_eq!(emulated.create, vec![(0, 1)]);
    }

    #[test]
    fn without_dedicated_families_spare_queues_of_the_main_family_are_used() {
        // One family of two queues: compute takes the second, transfer falls back.
        let two = [family(F::GRAPHICS | F::COMPUTE | F::TRANSFER, 2)];
        let plan = plan_queues(&two, 0, 1, 2, false);
        assert_eq!(plan.by_kind, [vec![0], vec![1], vec![0]]);
        assert_eq!(plan.create, vec![(0, 2)]);
        // A compute family but no copy family: transfer takes a spare compute queue.
        let amd = [
            family(F::GRAPHICS | F::COMPUTE | F::TRANSFER, 1),
            family(F::COMPUTE | F::TRANSFER, 4),
        ];
        let plan = plan_queues(&amd, 0, 1, 2, false);
        assert_eq!(
            placed(&plan)[1..]
                .iter()
                .map(|p| (p.1, p.2))
                .collect::<Vec<_>>(),
            vec![(1, 0), (1, 1), (1, 2)]
        );
        // Zero queues asked: the main queue serves the kind, even with emulation on.
        let plan = plan_queues(&h200(), 0, 0, 0, true);
        assert_eq!(plan.by_kind, [vec![0], vec![0], vec![0]]);
        // Counts are clamped.
        let plan = plan_queues(&h200(), 0, 100, 100, false);
        assert_eq!(plan.by_kind[1].len(), MAX_COMPUTE_QUEUES as usize);
        assert_eq!(plan.by_kind[2].len(), MAX_TRANSFER_QUEUES as usize);
        assert!(plan.queues.len() <= super::super::MAX_QUEUES);
    }

    #[test]
    fn supported_stages_follow_the_family() {
        use vk::PipelineStageFlags2 as S;
        let t = supported_stages(F::TRANSFER);
        assert!(t.contains(S::ALL_TRANSFER | S::HOST | S::ALL_COMMANDS));
        assert!(!t.intersects(S::COMPUTE_SHADER | S::FRAGMENT_SHADER | S::DRAW_INDIRECT));
        let c = supported_stages(F::COMPUTE | F::TRANSFER);
        assert!(
            c.contains(S::COMPUTE_SHADER | S::DRAW_INDIRECT | S::ACCELERATION_STRUCTURE_BUILD_KHR)
        );
        assert!(!t.intersects(S::ACCELERATION_STRUCTURE_BUILD_KHR));
        assert!(!c.intersects(S::VERTEX_SHADER | S::COLOR_ATTACHMENT_OUTPUT));
        let g = supported_stages(F::GRAPHICS | F::COMPUTE);
        assert!(g.contains(S::FRAGMENT_SHADER | S::COMPUTE_SHADER | S::ALL_TRANSFER));
    }
}
