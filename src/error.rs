//! kiln's error type and its per-area types.
//!
//! Every variant has a stable code (`KILN-Exxx`, returned by [`Error::code`]), names the
//! object involved and says what to do. Codes never change meaning once released and are
//! never reused; new variants get new codes.
//!
//! # Area types
//!
//! [`Error`] has every variant. Each code range below is also a type of its own with the
//! same variants, codes, messages and `Debug`: [`ShaderError`] (E001–E099), [`DeviceError`]
//! (E100–E149), [`MemoryError`] (E150–E199), [`DescriptorError`] (E200–E249),
//! [`PipelineError`] (E250–E299), and two areas made of a list of codes, since their codes
//! were given in the ranges above before they had types and codes are never renumbered:
//! [`RecordingError`] (E120, E123, E250, E252–E255, E257–E260, E265, E266, E283, E286,
//! E287; new ones E300–E349) and [`SubmissionError`] (E121, E124, E129–E133, E284, E285;
//! new ones E350–E399). A function whose failures lie in one area returns that area's
//! type, so its signature says what can fail: `ShaderModule::from_bytes` returns
//! `Result<_, ShaderError>`, `Device::buffer` `Result<_, MemoryError>`,
//! `Device::compute_pipeline` `Result<_, PipelineError>`, `Recorder::dispatch`
//! `Result<_, RecordingError>`, `Submission::wait` `Result<_, SubmissionError>`. Failures
//! of a lower area that such a function can also give are nested:
//! `MemoryError::Device(DeviceError)` (a Vulkan call's `KILN-E106`),
//! `DescriptorError::{Device, Memory, Shader}`, `PipelineError::{Device, Memory, Shader,
//! Descriptor}`, `RecordingError::{Device, Memory, Descriptor, Pipeline}`,
//! `SubmissionError::{Device, Memory, Recording}`; a nested value's code and message are
//! the inner error's. `From<Area> for Error` maps each variant to the [`Error`] variant of
//! the same name and flattens nested ones, so `?` in a function returning [`Result`]
//! converts and the [`Error`] compares and prints as if made directly; `TryFrom<Error>`
//! gives an area's own variants back. Functions that fail across areas return [`Result`]:
//! device creation, transfers, and the functions that run a caller's closure
//! (`Device::execute`, `submit`, `record`: the closure returns [`Result`], so its `?`
//! takes any area's error, and so do they).
//!
//! ```no_run
//! fn load(path: &str) -> Result<kiln::ShaderModule, kiln::ShaderError> {
//!     kiln::ShaderModule::from_file(path)
//! }
//!
//! fn run() -> kiln::Result<()> {
//!     let module = load("shaders/vector_add.spv")?; // ShaderError -> kiln::Error
//!     let device = kiln::Device::new()?;
//!     let _pipeline = device.compute_pipeline(&module, "main")?;
//!     Ok(())
//! }
//! # let _ = run();
//! ```
//!
//! # Code ranges
//!
//! | range | area |
//! | --- | --- |
//! | E001–E049 | SPIR-V input (files, header, instruction stream, parse) |
//! | E050–E099 | reflection and layout derivation |
//! | E100–E149 | Vulkan instance/device/driver (E140–E149: window, surface) |
//! | E150–E199 | memory, buffers, transfers (E180–E189: images, E190–E199: samplers) |
//! | E200–E249 | descriptors, sets, pools, writes, binding |
//! | E250–E299 | pipelines (E280–E299: graphics pipelines), and recording's first codes |
//! | E300–E349 | recording ([`RecordingError`]: also E120, E123, E250, E252–E255, E257–E260, E265, E266, E283, E286, E287) |
//! | E350–E399 | submission ([`SubmissionError`]: also E121, E124, E129–E133, E284, E285) |
//! | W001–W099 | warnings: logged with `log::warn!`, never returned |
//!
//! The warnings so far: `KILN-W001` validation requested but the layer is missing,
//! `KILN-W008` a hot reload refused because the layout changed, `KILN-W009` a hot reload
//! that failed to compile (both logged by `poll` of `HotComputePipeline` and
//! `HotGraphicsPipeline`, feature `hot-reload`), `KILN-W002` a pipeline cache file or its data is ignored, `KILN-W003` the pipeline cache
//! is not saved, `KILN-W004` cooperative-matrix (KHR, NV 2) or bfloat16 extensions the device has are
//! not enabled because the validation layer predates them, `KILN-W006` the `KILN_TRACE`
//! file could not be written at device drop, `KILN-W007` a layer feature was asked for but
//! the layer lacks `VK_EXT_validation_features`, `KILN-W012` a `KILN_READBACK_QUEUE` value kiln does not know (the default
//! policy is used), `KILN-W015` a `KILN_TRANSFER_SPLIT` or `KILN_UPLOAD_QUEUE` value kiln cannot
//! read (the default is used), `KILN-W005` a draw uses through a descriptor
//! set what an earlier draw of the same rendering scope wrote, in a scope kiln cannot
//! split (an attachment not stored; `commands/split.rs`), `KILN-W016` feature `tracy` without a running Tracy client,
//! `KILN-W017` feature `puffin` with puffin's scopes off (`queue/profilers.rs`),
//! `KILN-W018` a RenderDoc capture asked for but RenderDoc missing, too old or unable to
//! capture the device, `KILN-W019` a capture file that cannot be written, `KILN-W020` no
//! capture made (another running, the device not hooked, nothing written), `KILN-W021` a
//! `KILN_CAPTURE` value kiln cannot read (`device/capture.rs`). They are
//! not [`Error`] variants.
//!
//! # How a variant is written
//!
//! The enums are generated by macros below, so each variant's code is written once and the
//! message and `code()` cannot disagree. The variants live in one file per area
//! (`error/shader.rs` E001–E099, `device.rs` E100–E149, `memory.rs` E150–E199,
//! `descriptors.rs` E200–E249, `pipeline.rs` E250–E299, `recording.rs` and `submission.rs`
//! their lists); each file is a macro that calls
//! `link!` with its area type's name, the lower areas it nests and its variants: `link!`
//! emits the area type through `area!` and appends the variants to those it is given for
//! the next file's macro, the last being `errors!`, which emits [`Error`]. An entry:
//!
//! ```text
//! /// An image used in a way its usage flags do not allow (VUID-...).
//! #[code("KILN-E182")]
//! #[error("image `{object}` lacks usage {needed:?} needed for {what}; create it with that usage")]
//! ImageUsage { object: String, needed: vk::ImageUsageFlags, what: &'static str },
//! ```
//!
//! The macro hands thiserror `#[error("{}: {}", code, format_args!(message, args..))]`, so
//! the message is a format string that names the fields (`{object}`, `{needed:?}`); further
//! arguments after it use the fields by name, each a reference (`path.display()`, not
//! thiserror's `.path` shorthand). It also generates `code()`, puts code and message into
//! the variant's documentation, and passes field attributes such as `#[source]` through.
//! A misspelt field in a message is a compile error at that message.
//!
//! # Adding an error
//!
//! 1. Pick the area by the functions that give the error (the area type they return) and
//!    take the next unused code of its range (table above; recording E300–E349, submission
//!    E350–E399).
//! 2. Add the variant in that area's file under `src/error/`, in code order: a doc comment
//!    saying when it happens (with the VUID or spec section when it stands in for one), the
//!    `#[code(..)]`, the `#[error(..)]` message, the fields. The message names the object
//!    (labels in backticks), gives the values that are wrong and, after a `;`, says what to
//!    do. An underlying error goes in a field marked `#[source]`.
//! 3. Name the code in the `Errors:` line of the public functions that return it. A
//!    function returning an area type builds the area's variant (`MemoryError::BufferUsage
//!    { .. }`) and a lower area's nested (`DescriptorError::Memory(MemoryError::..)`, or `?`
//!    and `.into()` through the generated `From`); a code of another, not nested area means
//!    the function returns [`Result`].
//! 4. `cargo test -p kiln --lib error` checks every variant's code (unique, `KILN-Eddd`, the
//!    first thing its message and its `Debug` print), that each area variant has the
//!    code, message and `Debug` of its [`Error`], and that each is in its area's range (or,
//!    for recording and submission, in their lists of earlier codes). A field of a type no variant had before
//!    needs a `Sample` value in `src/error/tests.rs`.
//!
//! # `Debug`
//!
//! `Debug` prints the same coded message as `Display`, followed by each error of the
//! [`source`](std::error::Error::source) chain that the message does not already quote, so
//! `fn main() -> Result<(), Box<dyn std::error::Error>>` reports `Error: KILN-E201: ...`
//! with its hint instead of a struct dump.
//!
//! # VkResult mapping
//!
//! A failed Vulkan call is mapped by the mapper that knows its context: [`vk_err`] for most
//! calls, [`vk_err_labeled`] where the submission is known (a device loss names its label),
//! [`vk_wait_err`] for waits with a timeout (a timeout says how long it waited). All give
//! device-range codes: [`vk_device_err`], [`vk_err_labeled`] and [`vk_wait_err`] return a
//! [`DeviceError`]; [`vk_err`] returns it as an [`Error`], for the places that build
//! `Err(vk_err(..)(e))` in functions returning [`Result`].

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use ash::vk;

/// Result alias used throughout kiln.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Generates [`Error`] (thiserror derive), [`Error::code`] and, for the tests, one value of
/// every variant, from one entry per variant: docs, `#[code(..)]`, `#[error(..)]`, fields.
macro_rules! errors {
    (; $(
        $(#[doc = $doc:literal])*
        #[code($code:literal)]
        #[error($msg:literal $(, $arg:expr)* $(,)?)]
        $name:ident $({
            $( $(#[$field_attr:meta])* $field:ident : $ty:ty ),* $(,)?
        })?,
    )*) => {
        /// Everything that can go wrong in kiln.
        ///
        /// Each variant has a stable code ([`Error::code`]) that its message starts with;
        /// `Debug` prints the same message (and the source chain), not the fields.
        #[derive(thiserror::Error)]
        #[non_exhaustive]
        pub enum Error {
            $(
                $(#[doc = $doc])*
                #[doc = ""]
                #[doc = concat!("`", $code, "`: ", $msg)]
                #[error("{}: {}", $code, format_args!($msg $(, $arg)*))]
                $name $({ $(
                    #[doc = concat!("The `", stringify!($field), "` the message shows.")]
                    $(#[$field_attr])* $field: $ty
                ),* })?,
            )*
        }

        impl Error {
            /// The stable code, e.g. `"KILN-E004"`; the message starts with it.
            pub fn code(&self) -> &'static str {
                match self {
                    $( Self::$name { .. } => $code, )*
                }
            }
        }

        #[cfg(test)]
        impl Error {
            /// One value of every variant, its fields filled with sample values.
            fn every_variant() -> Vec<Error> {
                use tests::Sample;
                vec![$( Error::$name $({ $( $field: Sample::sample() ),* })?, )*]
            }
        }
    };
}

/// Emits one area's error type (see [`area!`]) from a range file's variants and hands them
/// on to the next link of the chain: `link! { Area "range" [Nest(Nested), ..] (next, rest..;
/// variants so far) this range's variants }`.
macro_rules! link {
    ($area:ident $range:literal [$($nest:ident($nested:ident)),*]
     ($next:ident $(, $rest:ident)* ; $($variants:tt)*) $($own:tt)*) => {
        area! { $area $range [$($nest($nested)),*] $($own)* }
        $next! { $($rest),* ; $($variants)* $($own)* }
    };
}

/// Generates an area's error type: the range's variants written as in [`Error`] (same
/// code, message and fields), one variant per nested lower area (`Device(DeviceError)`,
/// its message and code those of the nested value), `code()`, the `Debug` of [`Error`],
/// `From<Nested>` for the area and `From<Area> for Error` (variant to variant, nested
/// values flattened).
macro_rules! area {
    ($area:ident $range:literal [$($nest:ident($nested:ident)),*] $(
        $(#[doc = $doc:literal])*
        #[code($code:literal)]
        #[error($msg:literal $(, $arg:expr)* $(,)?)]
        $name:ident $({
            $( $(#[$field_attr:meta])* $field:ident : $ty:ty ),* $(,)?
        })?,
    )*) => {
        #[doc = concat!("The errors of ", $range, ".")]
        ///
        /// Each variant is the [`Error`] variant of the same name (same code, message,
        /// fields and `Debug`); `?` turns it into that [`Error`] in a function returning
        /// [`Result`].
        #[derive(thiserror::Error)]
        #[non_exhaustive]
        pub enum $area {
            $(
                $(#[doc = $doc])*
                #[doc = ""]
                #[doc = concat!("`", $code, "`: ", $msg)]
                #[error("{}: {}", $code, format_args!($msg $(, $arg)*))]
                $name $({ $(
                    #[doc = concat!("The `", stringify!($field), "` the message shows.")]
                    $(#[$field_attr])* $field: $ty
                ),* })?,
            )*
            $(
                #[doc = concat!("A [`", stringify!($nested), "`]; its code and message are the nested error's.")]
                #[error(transparent)]
                $nest(#[from] $nested),
            )*
        }

        impl $area {
            /// The stable code, e.g. `"KILN-E004"`; the message starts with it. The same as
            /// [`Error::code`] of the [`Error`] it converts into.
            pub fn code(&self) -> &'static str {
                match self {
                    $( Self::$name { .. } => $code, )*
                    $( Self::$nest(nested) => nested.code(), )*
                }
            }
        }

        impl From<$area> for Error {
            fn from(error: $area) -> Error {
                match error {
                    $( $area::$name $({ $($field),* })? => Error::$name $({ $($field),* })?, )*
                    $( $area::$nest(nested) => nested.into(), )*
                }
            }
        }

        /// The [`Error`] of one of this area's own variants as that variant; any other
        /// (nested areas' variants included) given back unchanged.
        impl TryFrom<Error> for $area {
            type Error = Error;

            fn try_from(error: Error) -> std::result::Result<$area, Error> {
                match error {
                    $( Error::$name $({ $($field),* })? => Ok($area::$name $({ $($field),* })?), )*
                    other => Err(other),
                }
            }
        }

        /// The same as `Debug` of [`Error`].
        impl fmt::Debug for $area {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                debug_chain(self, f)
            }
        }

        #[cfg(test)]
        impl $area {
            /// One value of every variant of this area (nested areas left out), its fields
            /// filled with sample values.
            fn every_variant() -> Vec<$area> {
                use tests::Sample;
                vec![$( $area::$name $({ $( $field: Sample::sample() ),* })?, )*]
            }
        }
    };
}

// The variants, one file per code range, each a macro that appends its range and calls the
// next; `errors!` gets them all, in code order.
mod external_handle;
pub(crate) mod post_mortem;

pub use external_handle::ExternalHandle;

#[macro_use]
mod shader;
#[macro_use]
mod device;
#[macro_use]
mod memory;
#[macro_use]
mod descriptors;
#[macro_use]
mod pipeline;
#[macro_use]
mod recording;
#[macro_use]
mod submission;

shader_errors! { device_errors, memory_errors, descriptors_errors, pipeline_errors, recording_errors, submission_errors, errors ; }

/// The coded message, then each error of the source chain that the message does not
/// already quote (one `caused by:` line each); `{:#?}` prints the same.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_chain(self, f)
    }
}

/// `Debug` of [`Error`] and of the area types.
fn debug_chain(error: &dyn std::error::Error, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let mut shown = error.to_string();
    f.write_str(&shown)?;
    let mut source = error.source();
    while let Some(error) = source {
        let text = error.to_string();
        if !shown.contains(&text) {
            write!(f, "\ncaused by: {text}")?;
            shown.push_str(&text);
        }
        source = error.source();
    }
    Ok(())
}

/// The names a set has, for `KILN-E201`.
fn names_hint(available: &[String]) -> String {
    if available.is_empty() {
        "the set has no named bindings (the module was stripped of names); use the binding number"
            .into()
    } else {
        format!("the set has {}", available.join(", "))
    }
}

/// What to do about a file that could not be read (`KILN-E012`).
fn read_hint(error: &std::io::Error) -> &'static str {
    match error.kind() {
        std::io::ErrorKind::NotFound => {
            "check the path (a relative path starts at the working directory) and that the \
             shader was compiled to SPIR-V"
        }
        std::io::ErrorKind::PermissionDenied => "make the file readable by this user",
        std::io::ErrorKind::IsADirectory => "pass the path of a .spv file, not of a directory",
        _ => "check that the file exists and is readable",
    }
}

/// ` for submission `label`` and what to do, for `KILN-E108`; nothing when the label is
/// unknown.
fn submission(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(
            " for submission `{label}`; the work takes longer than the wait timeout (raise \
             DeviceDesc::wait_timeout or KILN_WAIT_TIMEOUT_MS) or never finishes (an endless \
             loop, a wait for an event or semaphore nothing signals)"
        )
    }
}

/// ` (last submission: `label`)` for `KILN-E105`, nothing when the label is unknown.
fn last_submission(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(" (last submission: `{label}`)")
    }
}

/// The post-mortem of `KILN-E105`/`KILN-E108` (`; breadcrumbs of kiln queue …`), nothing
/// without one.
fn post_mortem(report: &Option<Box<post_mortem::PostMortem>>) -> String {
    report.as_ref().map(|r| r.to_string()).unwrap_or_default()
}

// ---------------------------------------------------------------- VkResult mapping
//
// One mapper per kind of call, like wgpu-hal's per-call `map_err`s: the caller picks the one
// that knows its context, so a result is never reported with made-up context (a timeout of
// 0 ms, a device loss naming no submission although the caller knew it).

/// Maps a failed `VkResult` of `call`, a call that does not wait with a timeout and does not
/// know the submission involved: out-of-memory is `KILN-E106`, a lost device `KILN-E105`
/// (without a label), anything else `KILN-E104`.
pub(crate) fn vk_err(call: &'static str) -> impl Fn(vk::Result) -> Error {
    move |result| map_result(call, result, "").into()
}

/// [`vk_err`] for a function that returns an area type: the same codes as a
/// [`DeviceError`], which `?` nests into [`MemoryError`] and the areas above it.
pub(crate) fn vk_device_err(call: &'static str) -> impl Fn(vk::Result) -> DeviceError {
    move |result| map_result(call, result, "")
}

/// [`vk_err`] for a call made for (or right after) the submission labelled `label`
/// (`vkQueueSubmit2`): a lost device names it.
pub(crate) fn vk_err_labeled<'a>(
    call: &'static str,
    label: &'a str,
) -> impl Fn(vk::Result) -> DeviceError + 'a {
    move |result| map_result(call, result, label)
}

/// [`vk_err_labeled`] for a wait of at most `timeout` (`vkWaitSemaphores`, `vkWaitForFences`):
/// VK_TIMEOUT is `KILN-E108` with the time waited.
pub(crate) fn vk_wait_err<'a>(
    call: &'static str,
    timeout: Duration,
    label: &'a str,
) -> impl Fn(vk::Result) -> DeviceError + 'a {
    move |result| match result {
        vk::Result::TIMEOUT => DeviceError::Timeout {
            call,
            ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            // The waits' callers that know the submission waited for name it
            // (`queue::timing::with_description`); `label` is the last one submitted.
            label: String::new(),
            report: None,
        },
        result => map_result(call, result, label),
    }
}

fn map_result(call: &'static str, result: vk::Result, label: &str) -> DeviceError {
    match result {
        vk::Result::ERROR_DEVICE_LOST => DeviceError::DeviceLost {
            call,
            label: label.to_string(),
            report: None,
        },
        vk::Result::ERROR_OUT_OF_DEVICE_MEMORY => DeviceError::OutOfMemory {
            call,
            kind: "device",
        },
        vk::Result::ERROR_OUT_OF_HOST_MEMORY => DeviceError::OutOfMemory { call, kind: "host" },
        result => DeviceError::Vulkan { call, result },
    }
}

#[cfg(test)]
mod tests;
