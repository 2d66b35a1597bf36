//! What kiln tells about a lost device or a hung submission: [`PostMortem`], carried by
//! `KILN-E105` (device lost) and `KILN-E108` (wait timeout) and logged once per device loss.
//! Plain data the errors carry, so it lives in the error layer, below `device`, which fills
//! it in (`device/breadcrumbs.rs`) and re-exports it.
//!
//! It joins two sources: the GPU's progress through the recorded work (*breadcrumbs*, written
//! by the GPU into kiln's marker buffers at every timing-scope and submission boundary:
//! `device::breadcrumbs`) and, after a loss, what the driver says about the fault
//! (`VK_EXT_device_fault`, where the device has it: [`DeviceFault`]).

use std::fmt;

use ash::vk;

/// Where the GPU was when the device was lost or a wait timed out (see the module docs).
///
/// `last_started` and `first_unfinished` come from breadcrumbs (`DeviceDesc::breadcrumbs`,
/// `KILN_BREADCRUMBS=1`; on by default in debug builds): the scope whose start marker the GPU
/// wrote last, and the first scope, in the order their ends were recorded, whose end marker
/// the GPU did not write — usually the scope that faulted or hangs. Both `None` without
/// breadcrumbs, or when every submission kiln knows of had finished.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PostMortem {
    /// The kiln queue the breadcrumbs below are of (the first queue with unfinished work).
    pub queue: Option<usize>,
    /// Labels of the submissions (of that queue) the GPU had not finished, oldest first.
    pub unfinished: Vec<String>,
    /// The last scope (or submission) the GPU started.
    pub last_started: Option<Breadcrumb>,
    /// The first scope (or submission) the GPU did not finish.
    pub first_unfinished: Option<Breadcrumb>,
    /// The driver's report of the fault (`VK_EXT_device_fault`; device loss only).
    pub fault: Option<DeviceFault>,
}

/// One point of the recorded work: a timing scope (`Recorder::scope`) of a submission, or
/// the whole submission when `scope` is empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Breadcrumb {
    /// The submission's label (`"execute"`, `"submit"` or the caller's).
    pub submission: String,
    /// The scope's name with those of the scopes around it, outermost first, joined by `/`
    /// (`"frame/shadow"`); empty: the submission itself.
    pub scope: String,
    /// Where the scope was opened (Rust source file; empty for a submission).
    pub file: &'static str,
    /// Line of `file` (0 for a submission).
    pub line: u32,
}

/// The driver's description of a device loss (`vkGetDeviceFaultInfoEXT`,
/// VK_EXT_device_fault).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceFault {
    /// The driver's description of the fault.
    pub description: String,
    /// Addresses involved (a page fault's address, the faulting instruction's).
    pub addresses: Vec<FaultAddress>,
    /// Vendor-specific fault codes.
    pub vendor: Vec<VendorFault>,
    /// Bytes of the vendor's binary crash dump the driver has (`deviceFaultVendorBinary`;
    /// kiln does not read it).
    pub vendor_binary_size: u64,
}

/// One address of a [`DeviceFault`] (`VkDeviceFaultAddressInfoEXT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultAddress {
    /// What the address is (`READ_INVALID`, `WRITE_INVALID`, `EXECUTE_INVALID`,
    /// `INSTRUCTION_POINTER_*`, …).
    pub kind: vk::DeviceFaultAddressTypeEXT,
    /// The address the driver reported.
    pub address: u64,
    /// The address is known to this many bytes: the faulting access lies in
    /// `address & !(precision - 1)` … `+ precision` (a power of two; 0 or 1: exact).
    pub precision: u64,
}

/// One vendor-specific fault record (`VkDeviceFaultVendorInfoEXT`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VendorFault {
    /// The vendor's description.
    pub description: String,
    /// The vendor's fault code.
    pub code: u64,
    /// The vendor's data.
    pub data: u64,
}

impl PostMortem {
    /// Nothing known: no breadcrumbs, no fault.
    pub fn is_empty(&self) -> bool {
        self.last_started.is_none() && self.first_unfinished.is_none() && self.fault.is_none()
    }
}

impl fmt::Display for Breadcrumb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.scope.is_empty() {
            write!(f, "submission `{}`", self.submission)
        } else {
            write!(
                f,
                "scope `{}` of submission `{}` ({}:{})",
                self.scope, self.submission, self.file, self.line
            )
        }
    }
}

impl fmt::Display for DeviceFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "driver: \"{}\"", self.description)?;
        for a in &self.addresses {
            write!(f, ", {:?} at {:#x}", a.kind, a.address)?;
            if a.precision > 1 {
                write!(f, " (±{:#x})", a.precision)?;
            }
        }
        for v in &self.vendor {
            write!(
                f,
                ", vendor \"{}\" code {:#x} data {:#x}",
                v.description, v.code, v.data
            )?;
        }
        if self.vendor_binary_size > 0 {
            write!(
                f,
                ", {} bytes of vendor crash dump",
                self.vendor_binary_size
            )?;
        }
        Ok(())
    }
}

/// `; GPU progress: last started …, first not finished …; fault: …`, or nothing when empty.
impl fmt::Display for PostMortem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(q) = self.queue {
            write!(f, "; breadcrumbs of kiln queue {q}:")?;
            match &self.last_started {
                Some(b) => write!(f, " last started: {b},")?,
                None => write!(f, " nothing started,")?,
            }
            match &self.first_unfinished {
                Some(b) => write!(f, " first not finished: {b}")?,
                None => write!(f, " everything finished")?,
            }
        }
        if let Some(fault) = &self.fault {
            write!(f, "; device fault: {fault}")?;
        }
        Ok(())
    }
}
