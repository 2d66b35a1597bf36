//! GPU timing scopes, debug labels and the caller locations of recorded commands.
//!
//! # Scopes
//!
//! [`Recorder::scope`] (or [`begin_scope`](Recorder::begin_scope) …
//! [`end_scope`](Recorder::end_scope)) names a part of a recording. Each scope becomes a
//! `VK_EXT_debug_utils` command-buffer label region (when labels are on: validation on or
//! `KILN_LABELS=1`), so validation messages, RenderDoc and Nsight show it, and is timed with
//! two timestamp queries (`vkCmdWriteTimestamp2` at `VK_PIPELINE_STAGE_2_ALL_COMMANDS`).
//! Scopes nest; [`Submission::gpu_timings`](crate::Submission::gpu_timings) returns them in
//! the order they were opened.
//!
//! **Where the timestamps go.** A timestamp at ALL_COMMANDS is written once every earlier
//! command of the queue completed (Vulkan spec §7.6, §18.5 `vkCmdWriteTimestamp2`: its
//! first synchronization scope is all earlier commands, limited to the stage). The rule:
//!
//! - a scope's **start** is written *lazily*, right before the first Vulkan command of the
//!   scope's first kiln command — *after* the barriers (automatic compute→compute or
//!   compute→transfer barriers, image layout transitions) that command records for itself.
//!   So a scope does not count the wait for work recorded before it, nor the barrier that
//!   waits for it (the wgpu#2521 problem). Scopes opened back to back share one start.
//!   Inside a rendering scope (where no barrier is recorded) the start is written at once.
//!   Commands recorded through [`Recorder::raw`] count: calling `raw()` writes a pending
//!   start first.
//! - a scope's **end** is written by `end_scope`, at ALL_COMMANDS: once the scope's work
//!   completed. A barrier that a later command records after the scope is outside it.
//! - a **timed submission** (`DeviceDesc::timing`, `KILN_TIMING=1`) also writes a
//!   timestamp first in its command buffer (once earlier submissions of the queue
//!   completed) and last (after the final device→host barrier), so its time covers every
//!   scope. Without it, a recording that opens scopes is timed from its first scope's start
//!   to the end of its command buffer.
//!
//! The queries come from the queue's reused pools (`device::timestamps`); a queue whose
//! family writes no timestamps fails the first scope with `KILN-E122`.
//!
//! # Caller locations
//!
//! The public commands are `#[track_caller]`; when validation is on each one sets the
//! thread's current caller (`device::set_caller`) before recording, so a message the layer
//! raises while the command records names the user's `file:line`, and the scope's own
//! location is kept with its timings. The submission layer clears it when the recording
//! ends. The places `raw()` was called are kept too (validation on): a message the layer
//! raises when the work is submitted (submit-time synchronization validation) names the
//! submission's label, the pipelines it binds and those places, since a hazard kiln's own
//! barriers and waits did not prevent most likely involves commands kiln cannot see.

use std::cell::Cell;
use std::ffi::CString;
use std::panic::Location;
use std::sync::Arc;

use ash::vk;

use super::Recorder;
use crate::device::{set_caller, QueryLease, Shared};
use crate::error::{RecordingError, Result};

/// One scope of a recording: its name (an index into the recording's names), nesting
/// depth, the queries of its start and end and where it was opened.
#[derive(Clone, Debug)]
pub(crate) struct ScopeRecord {
    pub name: u32,
    pub depth: u32,
    pub begin: u32,
    pub end: u32,
    pub location: &'static Location<'static>,
    /// Its index in the recording's breadcrumbs (`u32::MAX`: none; `commands::crumbs`).
    pub crumb: u32,
}

/// The timestamps a recording wrote: the lease of their pools, how many, the scopes, and
/// the queries of the submission's own start and end when the whole submission is timed.
#[derive(Debug)]
pub(crate) struct TimedWork {
    pub lease: QueryLease,
    pub queries: u32,
    pub scopes: Vec<ScopeRecord>,
    /// The scopes' names (`ScopeRecord::name`).
    pub names: Vec<Arc<str>>,
    pub submission: Option<(u32, u32)>,
    /// Bumped each time a reusable recording is submitted again (its queries reset): a
    /// submission reads its timings only while this is still its own generation.
    pub generation: std::sync::atomic::AtomicU64,
}

impl ScopeRecord {
    /// The scope's name, from its recording's `names`.
    pub(crate) fn name_in<'n>(&self, names: &'n [Arc<str>]) -> &'n str {
        names.get(self.name as usize).map_or("", |n| n)
    }
}

impl std::fmt::Debug for QueryLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryLease")
            .field("pools", &self.pools.len())
            .finish()
    }
}

/// A recorder's timing and label state.
#[derive(Default)]
pub(crate) struct Timing<'a> {
    /// The names of the pipelines bound (validation on): shader printf lines and
    /// submission-time messages are tagged with them.
    pub pipelines: Vec<&'a str>,
    /// The kiln queue the command buffer is for.
    pub queue: usize,
    lease: Option<QueryLease>,
    /// Queries reserved so far.
    used: u32,
    scopes: Vec<ScopeRecord>,
    /// The scopes' names, each run of scopes of one name sharing one entry: a loop's scopes
    /// take no allocation and no reference count each.
    names: Vec<Arc<str>>,
    /// Indices into `scopes` of the open scopes, innermost last.
    open: Vec<usize>,
    /// The reserved query of the pending scope start (`u32::MAX`: none), see the module docs.
    pending: Cell<u32>,
    /// The query of the submission's start, when the whole submission is timed.
    submission_begin: Option<u32>,
    /// Set the caller location of each command (validation on).
    pub track: bool,
    /// Where `raw()` was called (validation on; each place once): a hazard the layer finds
    /// at submit time most likely involves commands kiln cannot see.
    pub raw_calls: std::cell::RefCell<Vec<&'static Location<'static>>>,
    /// The recording's breadcrumbs, when the device writes them (`commands::crumbs`).
    pub crumbs: Option<crate::device::Crumbs>,
}

impl<'a> Timing<'a> {
    /// Notes that the pipeline named `label` is bound.
    #[cold]
    pub(crate) fn note_pipeline(&mut self, label: &'a str) {
        if !label.is_empty() && !self.pipelines.contains(&label) {
            self.pipelines.push(label);
        }
    }

    pub(crate) fn new(queue: usize, track: bool) -> Timing<'a> {
        Timing {
            queue,
            pending: Cell::new(u32::MAX),
            track,
            ..Default::default()
        }
    }
}

impl<'a> Recorder<'a, '_> {
    /// Sets this thread's current caller to `location` (when validation is on).
    #[inline(always)]
    pub(crate) fn at(&self, location: &'static Location<'static>) {
        if self.timing.track {
            set_caller(Some(location));
        }
    }

    /// The location a validation message raised now would name (validation on): that of
    /// the last command recorded. Unstable: for kiln's tests.
    #[cfg(feature = "unstable-hooks")]
    #[doc(hidden)]
    pub fn debug_caller(&self) -> Option<(&'static str, u32)> {
        crate::device::caller().map(|l| (l.file(), l.line()))
    }

    /// Notes a `raw()` call at `location` (validation on), for submit-time messages.
    #[inline]
    pub(crate) fn raw_call(&self, location: &'static Location<'static>) {
        if self.timing.track {
            let mut calls = self.timing.raw_calls.borrow_mut();
            if !calls.contains(&location) {
                calls.push(location);
            }
        }
    }

    /// Writes a pending scope start (see the module docs): called by every command right
    /// before its own Vulkan command, after its barriers.
    #[inline(always)]
    pub(crate) fn flush_scopes(&self) {
        if self.scope_pending() {
            let q = self.timing.pending.get();
            self.timing.pending.set(u32::MAX);
            self.write_timestamp(q);
        }
    }

    /// A timing scope's start waits for the next command (`flush_scopes`).
    #[inline(always)]
    pub(crate) fn scope_pending(&self) -> bool {
        self.timing.pending.get() != u32::MAX
    }

    /// Reserves the next query, growing the lease by a pool when needed.
    /// Errors: `KILN-E122` the queue cannot time work; `KILN-E104`/`KILN-E106`.
    #[inline]
    fn reserve_query(&mut self) -> Result<u32, RecordingError> {
        let q = self.timing.used;
        // The common case: the lease's pools have room.
        if self
            .timing
            .lease
            .as_ref()
            .is_some_and(|l| l.query(q).is_some())
        {
            self.timing.used += 1;
            return Ok(q);
        }
        self.reserve_query_slow()
    }

    /// [`reserve_query`](Self::reserve_query) taking the lease or growing it.
    #[cold]
    #[inline(never)]
    fn reserve_query_slow(&mut self) -> Result<u32, RecordingError> {
        let shared: &Shared = self.shared;
        let lease = match &mut self.timing.lease {
            Some(l) => l,
            none => none.insert(shared.query_lease(self.timing.queue)?),
        };
        let q = self.timing.used;
        if lease.query(q).is_none() {
            shared.grow_lease(lease)?;
        }
        self.timing.used += 1;
        Ok(q)
    }

    /// Records the timestamp of reserved query `q`.
    #[inline]
    fn write_timestamp(&self, q: u32) {
        let Some((pool, index)) = self.timing.lease.as_ref().and_then(|l| l.query(q)) else {
            return;
        };
        // SAFETY: `cb` is recording; the query was reset on the host before the lease
        // handed its pool out and is written once per submission; the queue's family
        // has timestampValidBits > 0 (checked when the lease was taken).
        unsafe {
            self.shared.raw.cmd_write_timestamp2(
                self.cb,
                vk::PipelineStageFlags2::ALL_COMMANDS,
                pool,
                index,
            )
        };
    }

    /// Opens a named scope: a debug label region and, timed, from its first command to
    /// [`end_scope`](Self::end_scope) (see the `commands::scope` docs for where the
    /// timestamps go).
    ///
    /// Errors: `KILN-E122` the queue's family writes no timestamps (or the device lacks
    /// `hostQueryReset`); `KILN-E106` no memory for a query pool.
    // Inlined with its common path only (no breadcrumbs, no label, outside a rendering
    // scope), as the per-dispatch commands are (`bind.rs`): a loop of scoped dispatches
    // pays no call and no spills for its scopes (callgrind, `tracker_profile`
    // `TRACKER_MODE=scoped`: 420 -> 352 instructions of kiln code per scoped dispatch).
    #[inline(always)]
    #[track_caller]
    pub fn begin_scope(&mut self, name: &str) -> Result<(), RecordingError> {
        let location = Location::caller();
        if self.timing.crumbs.is_some() || self.state.rendering || self.shared.label_fns().is_some()
        {
            return self.begin_scope_full(name, location);
        }
        self.at(location);
        let begin = match self.timing.pending.get() {
            u32::MAX => {
                let q = self.reserve_query()?;
                self.timing.pending.set(q);
                q
            }
            q => q,
        };
        self.open_scope(name, begin, location, u32::MAX);
        Ok(())
    }

    /// [`begin_scope`](Self::begin_scope) with breadcrumbs, a debug label or inside a
    /// rendering scope.
    #[inline(never)]
    fn begin_scope_full(
        &mut self,
        name: &str,
        location: &'static Location<'static>,
    ) -> Result<(), RecordingError> {
        self.at(location);
        let crumb = if self.timing.crumbs.is_some() {
            // The scope's name with those of the open scopes around it: `outer/inner`.
            let mut path = String::new();
            for s in self
                .timing
                .open
                .iter()
                .filter_map(|&i| self.timing.scopes.get(i))
            {
                path.push_str(s.name_in(&self.timing.names));
                path.push('/');
            }
            path.push_str(name);
            self.crumb_begin(path, location)
        } else {
            u32::MAX
        };
        let begin = if self.state.rendering {
            let q = self.reserve_query()?;
            self.flush_scopes();
            self.write_timestamp(q);
            q
        } else {
            match self.timing.pending.get() {
                u32::MAX => {
                    let q = self.reserve_query()?;
                    self.timing.pending.set(q);
                    q
                }
                q => q,
            }
        };
        if let Some(du) = self.shared.label_fns() {
            let cname = CString::new(name).unwrap_or_default();
            let label = vk::DebugUtilsLabelEXT::default().label_name(&cname);
            // SAFETY: `cb` is recording; `cname` outlives the call.
            unsafe { du.cmd_begin_debug_utils_label(self.cb, &label) };
        }
        self.open_scope(name, begin, location, crumb);
        Ok(())
    }

    /// Notes a scope opened at `location` whose start is query `begin` (and breadcrumb
    /// `crumb`, `u32::MAX`: none).
    #[inline(always)]
    fn open_scope(
        &mut self,
        name: &str,
        begin: u32,
        location: &'static Location<'static>,
        crumb: u32,
    ) {
        // Without whole-submission timing, the submission is timed from its first scope.
        if self.timing.submission_begin.is_none() {
            self.timing.submission_begin = Some(begin);
        }
        self.timing.open.push(self.timing.scopes.len());
        // A loop's scopes share one name: no allocation per scope (the same literal: one
        // pointer compare, no byte compare).
        let same = |n: &Arc<str>| {
            n.len() == name.len() && (std::ptr::eq(n.as_ptr(), name.as_ptr()) || **n == *name)
        };
        if !self.timing.names.last().is_some_and(same) {
            self.timing.names.push(Arc::from(name));
        }
        let name = self.timing.names.len() as u32 - 1;
        self.timing.scopes.push(ScopeRecord {
            name,
            depth: self.timing.open.len() as u32 - 1,
            begin,
            end: u32::MAX,
            location,
            crumb,
        });
    }

    /// Closes the innermost open scope (its end timestamp and label).
    ///
    /// Errors: `KILN-E123` no scope is open; `KILN-E106`/`KILN-E104` no query pool.
    #[inline(always)]
    #[track_caller]
    pub fn end_scope(&mut self) -> Result<(), RecordingError> {
        self.at(Location::caller());
        let Some(&i) = self.timing.open.last() else {
            return Err(no_open_scope());
        };
        let q = self.reserve_query()?;
        // An empty scope: its start is written now, just before its end.
        self.flush_scopes();
        self.write_timestamp(q);
        self.timing.open.pop();
        let mut crumb = u32::MAX;
        if let Some(s) = self.timing.scopes.get_mut(i) {
            s.end = q;
            crumb = s.crumb;
        }
        if crumb != u32::MAX || self.shared.label_fns().is_some() {
            self.end_scope_full(crumb);
        }
        Ok(())
    }

    /// The end of [`end_scope`](Self::end_scope) with a debug label or a breadcrumb.
    #[inline(never)]
    fn end_scope_full(&mut self, crumb: u32) {
        if let Some(du) = self.shared.label_fns() {
            // SAFETY: `cb` is recording inside the label region `begin_scope` opened.
            unsafe { du.cmd_end_debug_utils_label(self.cb) };
        }
        self.crumb_end(crumb);
    }

    /// Runs `f` inside a scope named `name` (see [`begin_scope`](Self::begin_scope)); the
    /// scope is closed whether `f` succeeds or not.
    ///
    /// ```no_run
    /// # fn f(device: &kiln::Device, p: &kiln::ComputePipeline, set: &kiln::DescriptorSet) -> kiln::Result<()> {
    /// let sub = device.submit(|r| {
    ///     r.bind_pipeline(p)?;
    ///     r.bind_set(0, set)?;
    ///     r.scope("blur-x", |r| Ok(r.dispatch(64, 64, 1)?))?;
    ///     r.scope("blur-y", |r| Ok(r.dispatch(64, 64, 1)?))
    /// })?;
    /// let t = sub.wait_timed()?;
    /// for s in &t.scopes {
    ///     println!("{}: {} ns", s.name, s.duration_ns);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// Errors: those of `f`, then those of `begin_scope` and `end_scope`.
    #[track_caller]
    pub fn scope<R>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        self.begin_scope(name)?;
        let out = f(self);
        let end = self.end_scope();
        let out = out?;
        end?;
        Ok(out)
    }

    /// Starts timing the whole submission (its first timestamp), for the submission layer.
    pub(crate) fn time_submission(&mut self) -> Result<(), RecordingError> {
        let q = self.reserve_query()?;
        self.write_timestamp(q);
        self.timing.submission_begin = Some(q);
        Ok(())
    }

    /// Ends the recording's timing: the submission's last timestamp (when timed or when it
    /// has scopes), the work the submission layer reads. `None` without timestamps.
    ///
    /// Errors: `KILN-E123` a scope is still open; `KILN-E122` as `begin_scope`.
    pub(crate) fn finish_timing(&mut self) -> Result<Option<TimedWork>, RecordingError> {
        if let Some(&i) = self.timing.open.last() {
            let name = self
                .timing
                .scopes
                .get(i)
                .map_or("", |s| s.name_in(&self.timing.names));
            return Err(RecordingError::ScopeMismatch {
                what: format!("the recording ended with scope `{name}` still open"),
            });
        }
        if self.timing.lease.is_none() {
            return Ok(None);
        }
        let submission = match self.timing.submission_begin {
            Some(b) => {
                let e = self.reserve_query()?;
                self.write_timestamp(e);
                Some((b, e))
            }
            None => None,
        };
        let Some(lease) = self.timing.lease.take() else {
            return Ok(None);
        };
        Ok(Some(TimedWork {
            lease,
            queries: self.timing.used,
            scopes: std::mem::take(&mut self.timing.scopes),
            names: std::mem::take(&mut self.timing.names),
            submission,
            generation: Default::default(),
        }))
    }
}

/// `KILN-E123` for `end_scope` with no scope open.
#[cold]
#[inline(never)]
fn no_open_scope() -> RecordingError {
    RecordingError::ScopeMismatch {
        what: "end_scope with no scope open".into(),
    }
}
