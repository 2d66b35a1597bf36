//! What orders a submission after earlier ones, for the validation layer's submit-time
//! messages.
//!
//! kiln orders submissions with timeline semaphores: each waits for its queue's previous
//! value and for the values of other queues whose work it depends on
//! (`queue::submit`). Validation layers whose submit-time synchronization validation does
//! not follow timeline semaphores (1.3.239, Debian 12's, which the tests run under; Vulkan-ValidationLayers issues #7457, #7600, fixed in later layers) report
//! accesses so ordered as hazards. While a submission is made with validation on, kiln
//! keeps its [`QueueOrder`] in the submitting thread's context; the messenger adds
//! [`ordered_note`] to a hazard message whose earlier access that order covers. The note
//! adds facts (which wait orders the two accesses); the message is still counted and
//! logged as the layer reported it.

use ash::vk;

use super::queue::{MAX_QUEUES, QUEUE_NAME};

/// The first validation layer whose submit-time synchronization validation follows
/// timeline semaphores (Vulkan-ValidationLayers#7600, closed by the timeline support of
/// 1.3.296): from it on, kiln adds no [`ordered_note`], since a hazard such a layer reports
/// between kiln's submissions is one kiln's waits do not order.
pub(crate) const LAYER_FOLLOWS_TIMELINES: u32 = vk::make_api_version(0, 1, 3, 296);

/// The timeline waits that order a submission after earlier ones, as far as the validation
/// layer's submit-time messages can name them: a hazard message whose earlier access was
/// made by a submission these waits cover gets a note saying so ([`ordered_note`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueueOrder {
    /// The submitting kiln queue.
    pub queue: usize,
    /// Per kiln queue, the highest value of its timeline that this submission is ordered
    /// after: its own queue's previous value, and for other queues the highest value any
    /// submission of this queue so far waited for (this queue's submissions are ordered
    /// among themselves by their waits on their own previous value) or the host saw
    /// complete before this submission (a host wait, then a submission: Vulkan spec §7.4,
    /// §7.9; kiln reuses memory and recycles objects only after that).
    pub after: [u64; MAX_QUEUES],
    /// Per kiln queue, whether the layer's `submit: N` for its `VkQueue` is that queue's
    /// timeline value `N + 1` (its own `VkQueue`, no failed submission).
    pub exact: [bool; MAX_QUEUES],
}

/// A note for a submit-time synchronization hazard `text` (the layer's message) whose
/// earlier access was made by a submission `order` shows this one is ordered after: the
/// access info names the earlier access's queue (kiln's name for it, [`QUEUE_NAME`]) and
/// its submit index `N` on that `VkQueue`, which is the kiln queue's timeline value
/// `N + 1`. Validation layers whose submit-time validation does not follow timeline
/// semaphores (1.3.239, the Debian package; Vulkan-ValidationLayers issues #7457, #7600)
/// report such accesses as hazards; the note says why kiln's waits order them. `None`
/// for other messages and for accesses the waits do not cover.
pub(crate) fn ordered_note(text: &str, order: &QueueOrder) -> Option<String> {
    if !(text.contains("vkQueueSubmit") && text.contains("Hazard ")) {
        return None;
    }
    let info = &text[text.find("Access info (")?..];
    let named = &info[info.find("queue: VkQueue ")?..];
    let name = &named[named.find('[')? + 1..];
    let digits = name.strip_prefix(QUEUE_NAME)?;
    let end = digits.find(|c: char| !c.is_ascii_digit())?;
    let p: usize = digits[..end].parse().ok()?;
    let after_name = &name[name.find(']')?..];
    let n = after_name.strip_prefix("], submit: ")?;
    let end = n.find(|c: char| !c.is_ascii_digit())?;
    let submit: u64 = n[..end].parse().ok()?;
    let value = submit + 1;
    let waited = *order.after.get(p)?;
    if !*order.exact.get(p)? || waited < value {
        return None;
    }
    let how = if p == order.queue {
        "its own queue: the wait on the previous value"
    } else {
        "a timeline wait, or the host saw it complete before this submission"
    };
    Some(format!(
        " [kiln: ordered: this submission on kiln queue {} is after value {waited} >= {value} \
         of kiln queue {p}'s timeline ({how}), the submission that made the earlier access \
         (the layer's `submit: {submit}`); a false positive of validation layers whose \
         submit-time checks ignore timeline semaphores (Vulkan-ValidationLayers #7600)]",
        order.queue
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of layer 1.3.239's message, with kiln's queue names.
    fn message(prior_queue: &str, submit: u64) -> String {
        format!(
            "Validation Error: [ SYNC-HAZARD-WRITE-RACING-WRITE ] Object 0: handle = \
             0x7f08d4b48bf0, type = VK_OBJECT_TYPE_QUEUE; | MessageID = 0x743c6069 | \
             vkQueueSubmit2: Hazard WRITE_RACING_WRITE for entry 0, VkCommandBuffer \
             0x7f08d4c1c510[execute], Recorded access info (recorded_usage: \
             SYNC_COPY_TRANSFER_WRITE, command: vkCmdFillBuffer, seq_no: 1, reset_no: 9). \
             Access info (prior_usage: SYNC_COPY_TRANSFER_WRITE, write_barriers: \
             SYNC_COPY_TRANSFER_READ, queue: VkQueue 0x7f08d4bb6110[{prior_queue}], submit: \
             {submit}, batch: 0, batch_tag: 19, command: vkCmdCopyBuffer, seq_no: 1, \
             command_buffer: VkCommandBuffer 0x7f08d48fcd30[kiln staged upload], reset_no: 7)."
        )
    }

    fn order(queue: usize, after: &[u64]) -> QueueOrder {
        let mut o = QueueOrder {
            queue,
            after: [0; MAX_QUEUES],
            exact: [true; MAX_QUEUES],
        };
        o.after[..after.len()].copy_from_slice(after);
        o
    }

    #[test]
    fn an_access_a_wait_covers_gets_the_note_and_one_it_does_not_none() {
        let m = message("kiln queue 2 (Transfer)", 3);
        // Submit index 3 of queue 2 signals value 4.
        let note = ordered_note(&m, &order(0, &[9, 0, 4])).expect("value 4 waited for");
        assert!(
            note.contains("kiln queue 0") && note.contains("value 4 >= 4"),
            "{note}"
        );
        assert!(note.contains("`submit: 3`"), "{note}");
        assert_eq!(
            ordered_note(&m, &order(0, &[9, 0, 3])),
            None,
            "only value 3"
        );
        let mut inexact = order(0, &[9, 0, 4]);
        inexact.exact[2] = false;
        assert_eq!(ordered_note(&m, &inexact), None, "index is not value - 1");
    }

    #[test]
    fn own_queue_order_and_unnamed_or_shared_queues() {
        let m = message("kiln queue 1 (Compute)", 0);
        let note = ordered_note(&m, &order(1, &[0, 1])).expect("own previous value 1");
        assert!(
            note.contains("value 1 >= 1 of kiln queue 1") && note.contains("own queue"),
            "{note}"
        );
        for name in ["", "kiln queues 0 Main + 1 Compute (one VkQueue)", "other"] {
            assert_eq!(ordered_note(&message(name, 0), &order(0, &[5, 5, 5])), None);
        }
        let not_a_hazard = "vkQueueSubmit2: something else [kiln queue 1 (Compute)], submit: 0";
        assert_eq!(ordered_note(not_a_hazard, &order(0, &[5, 5])), None);
    }
}
