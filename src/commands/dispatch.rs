//! Dispatches, with the bound-state checks draws share.

use super::Recorder;
use crate::error::{Error, Result};

impl Recorder<'_, '_> {
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
        if self.automatic {
            // A dispatch repeated with nothing else changed needs what the previous one
            // needed: two compares instead of the bound sets' resources.
            if self.bind_gen == self.repeat.0 && self.tracker.epoch == self.repeat.1 {
                if !self.repeat.2.is_empty() {
                    self.emit(self.repeat.2);
                }
            } else {
                self.track_dispatch()?;
            }
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
}
