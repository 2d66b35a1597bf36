//! Which queues a large copy between host memory and a device buffer is split over, and
//! into which parts: [`TransferSplit`] and its pure policy ([`TransferSplit::plan`]).
//!
//! The policy and the measurements behind it are documented on [`TransferSplit`].

use crate::device::{Device, QueueKind, Shared};

/// TransferPart boundaries are multiples of this many bytes from the copy's start.
pub const SPLIT_ALIGN: u64 = 64 << 10;

/// How kiln splits large copies between host memory ([`HostBuffer`](crate::HostBuffer),
/// imported memory) and device buffers over queues (`DeviceDesc::transfer_split`,
/// `KILN_TRANSFER_SPLIT`): [`Queue::upload_from_host`](crate::Queue::upload_from_host) and
/// [`Queue::read_to_host`](crate::Queue::read_to_host) submit one copy per part, the
/// returned [`Transfer`](crate::Transfer) and every later use wait for all of them.
///
/// **The policy** (from the queues the device has, nothing specific to one GPU): a copy of at
/// least [`min_bytes`](Self::min_bytes) submitted on queue `q` is split into up to
/// [`max_parts`](Self::max_parts) parts, the first on `q`, the others on *partner* queues
/// in this order, each kiln queue once and never `q` again:
///
/// - an upload (host → device): the main queue, then the transfer queues, then the
///   async-compute queues (the main queue first: its copies ran beside a transfer queue's
///   at full rate where the second transfer queue's did not);
/// - a readback (device → host): the transfer queues, then the main queue, then the
///   async-compute queues;
///
/// of those, only queues with no submission pending when the copy is submitted
/// ([`plan_among`](Self::plan_among)): a part never waits in a queue behind other work, so
/// an upload beside a long dispatch on the main queue still overlaps it. A device with one queue (lavapipe) has no partner: the copy stays one copy. The parts
/// are contiguous, of equal size rounded up to [`SPLIT_ALIGN`] bytes (the last takes the
/// rest), never empty; a copy too small for `max_parts` aligned parts gets fewer.
/// [`plan`](Self::plan) is the policy as a pure function.
///
/// **Why split.** Parts on different queues run on different copy engines at once. On a
/// PCIe 5 GPU (NVIDIA 580.159.04) one DMA copy from pinned memory ran at ~49 GB/s up and
/// ~51 down, against CUDA's 55, and copies within the first few hundred ms of traffic after
/// the GPU was idle at ~38 (kiln and raw `ash` alike, whatever the memory type, page size,
/// NUMA node, target buffer or queue). Split in 2, 3 and 4 parts (over [transfer, main],
/// then the other transfer queue, then compute) the uploads of 256 MiB and 1 GiB gained
/// about 1, 1.7 and 1.7 GB/s, the readbacks 0.2, 0.6 and 0.8; the warm-up copies ran at ~43
/// in 3 parts: hence 3 parts by default, and no harm where a device has fewer queues.
///
/// **Ordering.** Each part is a submission that waits, like any other, for the pending
/// work on other queues that uses its buffers (the stamps), but not for the copy's other
/// parts (`Batch::siblings` in `queue/submit.rs`); both buffers are stamped by every part,
/// so host access, later submissions on any queue and deferred destruction wait for all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct TransferSplit {
    /// Copies of at least this many bytes are split; default 64 MiB (smaller copies, such
    /// as a stream's chunks, stay on the queue they were submitted to).
    pub min_bytes: u64,
    /// The most parts, hence queues, one copy is split into (1: never split); default 3.
    pub max_parts: u32,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `new`, `DEFAULT` or `OFF` and these.
setters! { TransferSplit {
    min_bytes: u64,
    max_parts: u32,
} }

impl TransferSplit {
    /// Copies of at least `min_bytes` bytes split into at most `max_parts` parts (`const`,
    /// for a `const` of your own; [`DEFAULT`](Self::DEFAULT) and [`OFF`](Self::OFF) are two).
    pub const fn new(min_bytes: u64, max_parts: u32) -> Self {
        TransferSplit {
            min_bytes,
            max_parts,
        }
    }

    /// kiln's default: copies of 64 MiB or more in up to 3 parts (3 parts held 50.6–51.0
    /// GB/s up at 256 MiB and 1 GiB in two processes where 2 parts held 49.8–50.3).
    pub const DEFAULT: TransferSplit = TransferSplit {
        min_bytes: 64 << 20,
        max_parts: 3,
    };

    /// Never split: every copy is one copy on the queue it was submitted to.
    pub const OFF: TransferSplit = TransferSplit {
        min_bytes: u64::MAX,
        max_parts: 1,
    };

    /// The parts of a copy of `size` bytes submitted on kiln queue `queue` of a device
    /// whose kiln queues have the kinds `kinds` (index = kiln queue index, the main queue
    /// first): `(kiln queue, byte offset from the copy's start, bytes)` per part, the
    /// first on `queue`. `upload`: host → device. One part when the copy is smaller than
    /// `min_bytes`, `max_parts` is 1 or the device has no other queue.
    pub fn plan(
        &self,
        kinds: &[QueueKind],
        queue: usize,
        upload: bool,
        size: u64,
    ) -> Vec<TransferPart> {
        self.plan_among(kinds, &[], queue, upload, size)
    }

    /// [`plan`](Self::plan) where only the queues marked in `idle` (by kiln queue index;
    /// an index past its end counts as idle) may take a part besides `queue`: kiln passes
    /// the queues with no submission pending, so a part never queues behind other work (an
    /// upload beside a long dispatch on the main queue takes the next partner, or stays
    /// one copy).
    pub fn plan_among(
        &self,
        kinds: &[QueueKind],
        idle: &[bool],
        queue: usize,
        upload: bool,
        size: u64,
    ) -> Vec<TransferPart> {
        let queues = if size >= self.min_bytes && self.max_parts > 1 {
            partners(kinds, idle, queue, upload, self.max_parts as usize)
        } else {
            vec![queue]
        };
        split_ranges(size, queues.len() as u64, SPLIT_ALIGN)
            .into_iter()
            .zip(queues)
            .map(|((offset, len), queue)| TransferPart { queue, offset, len })
            .collect()
    }
}

impl Default for TransferSplit {
    fn default() -> Self {
        TransferSplit::DEFAULT
    }
}

/// One part of a split copy ([`TransferSplit::plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransferPart {
    /// The kiln queue it is submitted to ([`QueueInfo::index`](crate::QueueInfo::index)).
    pub queue: usize,
    /// Its first byte, counted from the copy's start (on both sides of the copy).
    pub offset: u64,
    /// Its size in bytes (never 0).
    pub len: u64,
}

/// `queue` and then up to `max - 1` idle partner queues ([`TransferSplit`]), each once.
fn partners(
    kinds: &[QueueKind],
    idle: &[bool],
    queue: usize,
    upload: bool,
    max: usize,
) -> Vec<usize> {
    let order: [QueueKind; 3] = if upload {
        [QueueKind::Main, QueueKind::Transfer, QueueKind::Compute]
    } else {
        [QueueKind::Transfer, QueueKind::Main, QueueKind::Compute]
    };
    let mut out = vec![queue];
    for kind in order {
        for (i, &k) in kinds.iter().enumerate() {
            if out.len() >= max {
                return out;
            }
            if k == kind && !out.contains(&i) && idle.get(i).copied().unwrap_or(true) {
                out.push(i);
            }
        }
    }
    out
}

/// `size` bytes in up to `parts` contiguous, non-empty parts whose boundaries are multiples
/// of `align` from the start (equal sizes rounded up to `align`, the last part the rest):
/// `(offset, len)` each. A size of 0 gives one empty part.
pub(crate) fn split_ranges(size: u64, parts: u64, align: u64) -> Vec<(u64, u64)> {
    let align = align.max(1);
    let parts = parts.clamp(1, size.div_ceil(align).max(1));
    let step = size.div_ceil(parts).next_multiple_of(align).max(align);
    let mut out = Vec::with_capacity(parts as usize);
    let mut at = 0;
    loop {
        let len = step.min(size - at);
        out.push((at, len));
        at += len;
        if at >= size || out.len() as u64 == parts {
            break;
        }
    }
    if let Some(last) = out.last_mut() {
        last.1 = size - last.0;
    }
    out
}

/// `desc` (`DeviceDesc::transfer_split`), else `KILN_TRANSFER_SPLIT` (`off`, `<parts>`,
/// `<parts>:<min MiB>`), else the default; a value it cannot read is logged as `KILN-W015`.
pub(super) fn from_desc(desc: Option<TransferSplit>) -> TransferSplit {
    if let Some(s) = desc {
        return s;
    }
    match std::env::var("KILN_TRANSFER_SPLIT") {
        Err(_) => TransferSplit::DEFAULT,
        Ok(v) => parse_transfer_split(&v).unwrap_or_else(|| {
            log::warn!(
                "KILN-W015: KILN_TRANSFER_SPLIT=`{v}` is not `off`, `<parts>` or \
                 `<parts>:<min MiB>` (e.g. `2:64`); kiln's default (3 parts from 64 MiB) is used"
            );
            TransferSplit::DEFAULT
        }),
    }
}

/// `off`, `<parts>` or `<parts>:<min MiB>` (parts 1 to 8).
fn parse_transfer_split(v: &str) -> Option<TransferSplit> {
    let v = v.trim();
    if v.is_empty() || v == "auto" {
        return Some(TransferSplit::DEFAULT);
    }
    if v == "off" {
        return Some(TransferSplit::OFF);
    }
    let (parts, min) = match v.split_once(':') {
        Some((p, m)) => (p, Some(m)),
        None => (v, None),
    };
    let max_parts: u32 = parts.trim().parse().ok().filter(|p| (1..=8).contains(p))?;
    let min_bytes = match min {
        Some(m) => m.trim().parse::<u64>().ok()?.checked_mul(1 << 20)?,
        None => TransferSplit::DEFAULT.min_bytes,
    };
    Some(TransferSplit {
        min_bytes,
        max_parts,
    })
}

impl Shared {
    /// The device's split policy now (`DeviceDesc::transfer_split`, or what
    /// `Device::debug_set_transfer_split` set).
    pub(crate) fn transfer_split(&self) -> TransferSplit {
        super::desc::settings(self).split()
    }

    /// The kind of every kiln queue, by kiln queue index (what [`TransferSplit::plan`]
    /// chooses from).
    pub(crate) fn queue_kinds(&self) -> Vec<QueueKind> {
        self.queues.iter().map(|q| q.planned.kind).collect()
    }

    /// Per kiln queue: no submission pending (every value submitted has completed).
    pub(crate) fn idle_queues(&self) -> Vec<bool> {
        self.queues
            .iter()
            .map(|q| q.completed_value(&self.raw) >= q.submitted())
            .collect()
    }
}

impl Device {
    /// How this device splits large copies between host memory and device buffers over
    /// queues (`DeviceDesc::transfer_split`; [`TransferSplit`]).
    pub fn transfer_split(&self) -> TransferSplit {
        self.shared.transfer_split()
    }

    /// Changes the split policy for later copies (the bench's sweep compares one queue
    /// with 2–4 parts in one process). Unstable.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_set_transfer_split(&self, split: TransferSplit) {
        super::desc::settings(&self.shared).set_split(split);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use QueueKind::{Compute, Main, Transfer};

    /// kiln's queues on a GPU with compute and transfer families, default DeviceDesc:
    /// main, compute, transfer x2.
    const DISCRETE: [QueueKind; 4] = [Main, Compute, Transfer, Transfer];

    fn check(size: u64, parts: u64, align: u64) -> Vec<(u64, u64)> {
        let r = split_ranges(size, parts, align);
        assert!(
            !r.is_empty() && r.len() as u64 <= parts.max(1),
            "{size} {parts}: {r:?}"
        );
        let mut at = 0;
        for &(o, l) in &r {
            assert_eq!(o, at, "{size} {parts}: contiguous {r:?}");
            assert!(l > 0 || size == 0, "{size} {parts}: empty part {r:?}");
            assert_eq!(o % align, 0, "{size} {parts}: aligned {r:?}");
            at += l;
        }
        assert_eq!(at, size, "{size} {parts}: covers the copy {r:?}");
        r
    }

    #[test]
    fn ranges_cover_odd_sizes_exactly() {
        let a = SPLIT_ALIGN;
        assert_eq!(check(1 << 30, 2, a), vec![(0, 1 << 29), (1 << 29, 1 << 29)]);
        // 1 GiB + 7 bytes in 3: 357913944 bytes rounded up to 64 KiB = 357957632.
        assert_eq!(
            check((1 << 30) + 7, 3, a),
            vec![
                (0, 357_957_632),
                (357_957_632, 357_957_632),
                (715_915_264, 357_826_567)
            ]
        );
        // 5 aligned units in 4 parts: 2 + 2 + 1 units (three parts, not an empty fourth).
        assert_eq!(
            check(5 * a, 4, a),
            vec![(0, 2 * a), (2 * a, 2 * a), (4 * a, a)]
        );
        // Smaller than two units: one part; one byte more than one unit: two parts.
        assert_eq!(check(a - 1, 2, a), vec![(0, a - 1)]);
        assert_eq!(check(a + 1, 2, a), vec![(0, a), (a, 1)]);
        assert_eq!(check(0, 2, a), vec![(0, 0)]);
        for size in [1, 4095, 65_537, 3 * a + 5, (64 << 20) + 3, (256 << 20) - 1] {
            for parts in 1..=5 {
                check(size, parts, a);
                check(size, parts, 4);
            }
        }
    }

    #[test]
    fn h200_uploads_pair_the_transfer_queue_with_the_main_queue() {
        // The default: 3 parts, uploads [transfer 0, main, transfer 1], readbacks
        // [transfer 1, transfer 0, main].
        let d = TransferSplit::DEFAULT;
        let third = 357_913_942u64.next_multiple_of(SPLIT_ALIGN);
        let parts: Vec<(usize, u64, u64)> = d
            .plan(&DISCRETE, 2, true, 1 << 30)
            .iter()
            .map(|p| (p.queue, p.offset, p.len))
            .collect();
        assert_eq!(
            parts,
            vec![
                (2, 0, third),
                (0, third, third),
                (3, 2 * third, (1 << 30) - 2 * third)
            ]
        );
        let q: Vec<usize> = d
            .plan(&DISCRETE, 3, false, 1 << 30)
            .iter()
            .map(|p| p.queue)
            .collect();
        assert_eq!(q, vec![3, 2, 0]);
        let s = TransferSplit { max_parts: 2, ..d };
        let p = s.plan(&DISCRETE, 2, true, 1 << 30);
        assert_eq!(
            p,
            vec![
                TransferPart {
                    queue: 2,
                    offset: 0,
                    len: 1 << 29
                },
                TransferPart {
                    queue: 0,
                    offset: 1 << 29,
                    len: 1 << 29
                }
            ]
        );
        let queues = |s: TransferSplit, q, up| -> Vec<usize> {
            s.plan(&DISCRETE, q, up, 1 << 30)
                .iter()
                .map(|p| p.queue)
                .collect()
        };
        let four = TransferSplit { max_parts: 4, ..s };
        assert_eq!(queues(four, 2, true), vec![2, 0, 3, 1]);
        // Readbacks (on the last transfer queue): the other transfer queue first.
        assert_eq!(queues(s, 3, false), vec![3, 2]);
        assert_eq!(queues(four, 3, false), vec![3, 2, 0, 1]);
        // An upload submitted on the main queue takes a transfer queue as its partner.
        assert_eq!(queues(s, 0, true), vec![0, 2]);
        // Busy partners are passed over: the next idle one takes the part, else none.
        let busy_main = [false, true, true, true];
        let among = |s: TransferSplit, idle: &[bool], q, up| -> Vec<usize> {
            s.plan_among(&DISCRETE, idle, q, up, 1 << 30)
                .iter()
                .map(|p| p.queue)
                .collect()
        };
        assert_eq!(among(s, &busy_main, 2, true), vec![2, 3]);
        assert_eq!(among(four, &busy_main, 2, true), vec![2, 3, 1]);
        assert_eq!(among(s, &[true, true, false, true], 3, false), vec![3, 0]);
        assert_eq!(among(s, &[false, false, false, false], 2, true), vec![2]);
        // The queue the copy was submitted to takes the first part, busy or not.
        assert_eq!(among(s, &[true, true, false, true], 2, true), vec![2, 0]);
        // More parts than queues: every queue once.
        let eight = TransferSplit { max_parts: 8, ..s };
        assert_eq!(queues(eight, 2, true), vec![2, 0, 3, 1]);
    }

    #[test]
    fn small_copies_one_queue_devices_and_off_stay_one_copy() {
        let s = TransferSplit::DEFAULT;
        let one = |p: Vec<TransferPart>, q: usize, len: u64| {
            assert_eq!(
                p,
                vec![TransferPart {
                    queue: q,
                    offset: 0,
                    len
                }]
            )
        };
        one(
            s.plan(&DISCRETE, 2, true, (64 << 20) - 1),
            2,
            (64 << 20) - 1,
        );
        one(s.plan(&[Main], 0, true, 1 << 30), 0, 1 << 30);
        one(s.plan(&[Main], 0, false, 1 << 30), 0, 1 << 30);
        one(
            TransferSplit::OFF.plan(&DISCRETE, 2, true, 1 << 30),
            2,
            1 << 30,
        );
        let max1 = TransferSplit {
            min_bytes: 0,
            max_parts: 1,
        };
        one(max1.plan(&DISCRETE, 3, false, 1 << 30), 3, 1 << 30);
        // Exactly the threshold splits.
        assert_eq!(s.plan(&DISCRETE, 2, true, 64 << 20).len(), 3);
        // A device with a main and one transfer queue: the two share a copy.
        let two = [Main, Transfer];
        let q: Vec<usize> = s
            .plan(&two, 1, false, 1 << 30)
            .iter()
            .map(|p| p.queue)
            .collect();
        assert_eq!(q, vec![1, 0]);
    }

    #[test]
    fn the_environment_setting_reads_parts_and_threshold() {
        let d = TransferSplit::DEFAULT;
        assert_eq!(parse_transfer_split(""), Some(d));
        assert_eq!(parse_transfer_split("auto"), Some(d));
        assert_eq!(parse_transfer_split("off"), Some(TransferSplit::OFF));
        let three = TransferSplit { max_parts: 3, ..d };
        assert_eq!(parse_transfer_split(" 3 "), Some(three));
        let four_at_16 = TransferSplit {
            min_bytes: 16 << 20,
            max_parts: 4,
        };
        assert_eq!(parse_transfer_split("4:16"), Some(four_at_16));
        for bad in ["0", "9", "two", "2:", "2:x", "-1"] {
            assert_eq!(parse_transfer_split(bad), None, "{bad}");
        }
        assert_eq!(from_desc(Some(three)), three);
    }
}
