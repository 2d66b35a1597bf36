//! Tests of the error codes, messages, `Debug` and the VkResult mappers.

use super::*;
use std::collections::BTreeMap;

/// A value to fill a field with in [`Error::every_variant`].
pub(super) trait Sample {
    fn sample() -> Self;
}

macro_rules! samples {
    ($($ty:ty => $value:expr,)*) => {
        $(impl Sample for $ty {
            fn sample() -> Self {
                $value
            }
        })*
    };
}

samples! {
    u16 => 7,
    u32 => 7,
    u64 => 7,
    usize => 7,
    [u32; 3] => [1, 2, 3],
    Vec<u32> => vec![0, 1],
    Vec<String> => vec!["a (binding 0)".to_string()],
    &'static str => "sample",
    String => "sample".to_string(),
    PathBuf => PathBuf::from("shaders/missing.spv"),
    std::io::Error => std::io::Error::from(std::io::ErrorKind::NotFound),
    gpu_allocator::AllocationError => gpu_allocator::AllocationError::OutOfMemory,
    vk::Result => vk::Result::ERROR_UNKNOWN,
    vk::Format => vk::Format::R8G8B8A8_UNORM,
    vk::ImageLayout => vk::ImageLayout::GENERAL,
    vk::DescriptorType => vk::DescriptorType::STORAGE_BUFFER,
    vk::ShaderStageFlags => vk::ShaderStageFlags::COMPUTE,
    vk::ImageUsageFlags => vk::ImageUsageFlags::SAMPLED,
    vk::FormatFeatureFlags => vk::FormatFeatureFlags::BLIT_SRC,
    vk::ImageViewType => vk::ImageViewType::CUBE,
    vk::SampleCountFlags => vk::SampleCountFlags::TYPE_4,
    vk::BufferUsageFlags => vk::BufferUsageFlags::VERTEX_BUFFER,
    vk::QueueFlags => vk::QueueFlags::TRANSFER,
    Option<Box<crate::error::post_mortem::PostMortem>> => None,
    crate::error::ExternalHandle => crate::error::ExternalHandle::OpaqueFd,
}

/// `KILN-E` or `KILN-W` and three digits.
fn well_formed(code: &str) -> bool {
    let Some(digits) = code
        .strip_prefix("KILN-E")
        .or_else(|| code.strip_prefix("KILN-W"))
    else {
        return false;
    };
    digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit())
}

#[test]
fn every_variant_has_a_unique_well_formed_code_that_starts_its_message() {
    let all = Error::every_variant();
    // Codes are never removed: 66 variants on main at dbf520b, plus E012 and E157.
    assert!(all.len() >= 68, "{} variants", all.len());
    let mut seen = BTreeMap::new();
    for e in &all {
        let code = e.code();
        assert!(well_formed(code), "malformed code {code:?}: {e}");
        if let Some(other) = seen.insert(code, e.to_string()) {
            panic!("{code} is used twice: `{other}` and `{e}`");
        }
        let shown = e.to_string();
        assert!(shown.starts_with(&format!("{code}: ")), "{shown}");
        assert!(shown.len() > code.len() + 2, "{code} has an empty message");
        assert!(format!("{e:?}").starts_with(&shown), "{e:?}");
    }
}

#[test]
fn well_formed_accepts_only_kiln_codes() {
    assert!(well_formed("KILN-E001"));
    assert!(well_formed("KILN-W003"));
    for bad in [
        "KILN-E01",
        "KILN-E0001",
        "KILN-X001",
        "kiln-e001",
        "KILN-E00a",
        "",
    ] {
        assert!(!well_formed(bad), "{bad}");
    }
}

#[test]
fn messages_keep_their_text() {
    let e = Error::SpirvBadMagic { found: 0xdeadbeef };
    assert_eq!(
        e.to_string(),
        "KILN-E004: bad SPIR-V magic number 0xdeadbeef at byte 0 (expected 0x07230203); \
         this is not a SPIR-V module"
    );
    let e = Error::NoSuchBinding {
        set: 1,
        binding: 4,
        available: vec![0, 2],
    };
    assert_eq!(
        e.to_string(),
        "KILN-E200: set 1 has no binding 4; the layout has bindings [0, 2]"
    );
    assert_eq!(Error::NoDevice.code(), "KILN-E101");
}

/// What `fn main() -> Result<(), Box<dyn std::error::Error>>` prints after `Error: `.
#[test]
fn debug_is_the_coded_message_not_a_struct_dump() {
    let e: Box<dyn std::error::Error> = Box::new(Error::NoSuchBindingName {
        set: 0,
        name: "weights".into(),
        available: vec!["params (binding 1)".into(), "Params (binding 1)".into()],
    });
    assert_eq!(
        format!("{e:?}"),
        "KILN-E201: set 0 has no binding named `weights`; the set has params (binding 1), \
         Params (binding 1)"
    );
    let e = Error::NoPipelineBound { what: "dispatch" };
    assert_eq!(
        format!("{e:#?}"),
        "KILN-E252: dispatch before a pipeline was bound; call bind_pipeline first"
    );
}

#[derive(Debug)]
struct Outer(Inner);
#[derive(Debug)]
struct Inner;
impl fmt::Display for Outer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the mount went away")
    }
}
impl std::error::Error for Outer {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}
impl fmt::Display for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("nfs server not responding")
    }
}
impl std::error::Error for Inner {}

#[test]
fn debug_adds_the_source_chain_the_message_does_not_quote() {
    let e = Error::ShaderFileRead {
        path: PathBuf::from("/mnt/shaders/a.spv"),
        source: std::io::Error::other(Outer(Inner)),
    };
    assert_eq!(
        format!("{e:?}"),
        "KILN-E012: cannot read SPIR-V file `/mnt/shaders/a.spv`: the mount went away; \
         check that the file exists and is readable\n\
         caused by: nfs server not responding"
    );
    // A source the message already quotes is not repeated.
    let e = Error::Allocation {
        object: "weights".into(),
        source: gpu_allocator::AllocationError::OutOfMemory,
    };
    assert_eq!(format!("{e:?}"), e.to_string());
}

#[test]
fn missing_shader_file_says_what_to_do() {
    let e = Error::ShaderFileRead {
        path: PathBuf::from("shaders/missing.spv"),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    };
    assert_eq!(e.code(), "KILN-E012");
    let shown = e.to_string();
    assert!(
        shown.starts_with("KILN-E012: cannot read SPIR-V file `shaders/missing.spv`: "),
        "{shown}"
    );
    assert!(shown.contains("check the path"), "{shown}");
    assert!(std::error::Error::source(&e).is_some());
}

#[test]
fn vk_results_keep_their_context() {
    let e =
        vk_wait_err("vkWaitSemaphores", Duration::from_secs(120), "upload")(vk::Result::TIMEOUT);
    assert_eq!(
        e.to_string(),
        "KILN-E108: timed out after 120000 ms waiting for the GPU during vkWaitSemaphores"
    );
    let e = vk_wait_err("vkWaitSemaphores", Duration::from_secs(1), "saxpy")(
        vk::Result::ERROR_DEVICE_LOST,
    );
    assert_eq!(
        e.to_string(),
        "KILN-E105: device lost during vkWaitSemaphores (last submission: `saxpy`); \
         the device must be recreated"
    );
    let e = vk_err_labeled("vkQueueSubmit", "frame 3")(vk::Result::ERROR_DEVICE_LOST);
    assert!(
        e.to_string().contains("(last submission: `frame 3`)"),
        "{e}"
    );
    // Without a known submission the message names none (not "``").
    let e = vk_err("vkCreateSampler")(vk::Result::ERROR_DEVICE_LOST);
    assert_eq!(
        e.to_string(),
        "KILN-E105: device lost during vkCreateSampler; the device must be recreated"
    );
    // A call that does not wait reports VK_TIMEOUT as it is, not as a 0 ms timeout.
    let e = vk_err("vkAcquireNextImageKHR")(vk::Result::TIMEOUT);
    assert_eq!(e.code(), "KILN-E104");
    assert_eq!(
        e.to_string(),
        "KILN-E104: vkAcquireNextImageKHR failed: TIMEOUT"
    );
    let e = vk_err("vkCreateBuffer")(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY);
    assert_eq!(
        e.to_string(),
        "KILN-E106: out of device memory during vkCreateBuffer; free resources and retry"
    );
    let e = vk_err("vkCreateBuffer")(vk::Result::ERROR_OUT_OF_HOST_MEMORY);
    assert!(e.to_string().contains("out of host memory"), "{e}");
}

/// `KILN-E105` with a post-mortem: the breadcrumbs and the driver's fault, as the log line
/// and `Display` show them (the H200's page-fault test prints the real one).
#[test]
fn device_lost_carries_the_post_mortem() {
    use crate::error::post_mortem::{
        Breadcrumb, DeviceFault, FaultAddress, PostMortem, VendorFault,
    };
    let spin = Breadcrumb {
        submission: "frame 3".into(),
        scope: "frame/spin".into(),
        file: "src/main.rs",
        line: 12,
    };
    let report = PostMortem {
        queue: Some(0),
        unfinished: vec!["frame 3".into()],
        last_started: Some(spin.clone()),
        first_unfinished: Some(Breadcrumb {
            scope: String::new(),
            file: "",
            line: 0,
            ..spin
        }),
        fault: Some(DeviceFault {
            description: "page fault".into(),
            addresses: vec![FaultAddress {
                kind: vk::DeviceFaultAddressTypeEXT::WRITE_INVALID,
                address: 0x1fff_dead_0000,
                precision: 4096,
            }],
            vendor: vec![VendorFault {
                description: "MMU fault".into(),
                code: 31,
                data: 7,
            }],
            vendor_binary_size: 0,
        }),
    };
    let e = Error::DeviceLost {
        call: "vkWaitSemaphores",
        label: "frame 3".into(),
        report: Some(Box::new(report)),
    };
    assert_eq!(
        e.to_string(),
        "KILN-E105: device lost during vkWaitSemaphores (last submission: `frame 3`); \
         breadcrumbs of kiln queue 0: last started: scope `frame/spin` of submission \
         `frame 3` (src/main.rs:12), first not finished: submission `frame 3`; device \
         fault: driver: \"page fault\", WRITE_INVALID at 0x1fffdead0000 (±0x1000), vendor \
         \"MMU fault\" code 0x1f data 0x7; the device must be recreated"
    );
    let e = Error::Timeout {
        call: "vkWaitSemaphores",
        ms: 5,
        label: String::new(),
        report: Some(Box::new(PostMortem {
            queue: Some(1),
            ..Default::default()
        })),
    };
    assert_eq!(
        e.to_string(),
        "KILN-E108: timed out after 5 ms waiting for the GPU during vkWaitSemaphores; \
         breadcrumbs of kiln queue 1: nothing started, everything finished"
    );
}

/// The codes [`RecordingError`] took over from the device and pipeline ranges.
const RECORDING: [&str; 16] = [
    "KILN-E120",
    "KILN-E123",
    "KILN-E250",
    "KILN-E252",
    "KILN-E253",
    "KILN-E254",
    "KILN-E255",
    "KILN-E257",
    "KILN-E258",
    "KILN-E259",
    "KILN-E260",
    "KILN-E265",
    "KILN-E266",
    "KILN-E283",
    "KILN-E286",
    "KILN-E287",
];

/// The codes [`SubmissionError`] took over from the device and pipeline ranges.
const SUBMISSION: [&str; 9] = [
    "KILN-E121",
    "KILN-E124",
    "KILN-E129",
    "KILN-E130",
    "KILN-E131",
    "KILN-E132",
    "KILN-E133",
    "KILN-E284",
    "KILN-E285",
];

/// Checks that every value of an area type has the code, `Display` and `Debug` of the
/// [`Error`] it converts into; returns the codes.
fn same_as_error<A>(all: Vec<A>, code: fn(&A) -> &'static str) -> Vec<&'static str>
where
    A: Into<Error> + std::error::Error,
{
    let mut codes = Vec::new();
    for area in all {
        let (area_code, shown, debug) = (code(&area), area.to_string(), format!("{area:?}"));
        assert!(shown.starts_with(&format!("{area_code}: ")), "{shown}");
        let error: Error = area.into();
        assert_eq!(error.code(), area_code, "{shown}");
        assert_eq!(error.to_string(), shown);
        assert_eq!(format!("{error:?}"), debug);
        codes.push(area_code);
    }
    codes
}

#[test]
fn every_area_variant_is_the_error_variant_of_its_code() {
    let areas = [
        (
            "E001",
            "E099",
            same_as_error(ShaderError::every_variant(), ShaderError::code),
        ),
        (
            "E100",
            "E149",
            same_as_error(DeviceError::every_variant(), DeviceError::code),
        ),
        (
            "E150",
            "E199",
            same_as_error(MemoryError::every_variant(), MemoryError::code),
        ),
        (
            "E200",
            "E249",
            same_as_error(DescriptorError::every_variant(), DescriptorError::code),
        ),
        (
            "E250",
            "E299",
            same_as_error(PipelineError::every_variant(), PipelineError::code),
        ),
    ];
    let mut in_areas = Vec::new();
    for (first, last, codes) in areas {
        assert!(!codes.is_empty(), "{first}..{last}");
        for code in codes {
            let number = &code["KILN-".len()..];
            assert!(
                (first..=last).contains(&number),
                "{code} outside {first}..{last}"
            );
            in_areas.push(code);
        }
    }
    // The list areas: their codes as given before they had types, new ones in their range.
    let lists = [
        (
            &RECORDING[..],
            "E300",
            "E349",
            same_as_error(RecordingError::every_variant(), RecordingError::code),
        ),
        (
            &SUBMISSION[..],
            "E350",
            "E399",
            same_as_error(SubmissionError::every_variant(), SubmissionError::code),
        ),
    ];
    for (listed, first, last, codes) in lists {
        for code in codes {
            let number = &code["KILN-".len()..];
            assert!(
                listed.contains(&code) || (first..=last).contains(&number),
                "{code} is neither listed nor in {first}..{last}"
            );
            in_areas.push(code);
        }
    }
    // Every variant of `Error` is in exactly one area.
    let mut all: Vec<_> = Error::every_variant().iter().map(Error::code).collect();
    all.sort_unstable();
    in_areas.sort_unstable();
    assert_eq!(in_areas, all);
}

#[test]
fn nested_area_errors_flatten_into_the_lower_error() {
    let lost = || DeviceError::DeviceLost {
        call: "vkAllocateMemory",
        label: String::new(),
        report: None,
    };
    let memory = MemoryError::from(lost());
    assert_eq!(memory.code(), "KILN-E105");
    assert_eq!(memory.to_string(), lost().to_string());
    assert_eq!(format!("{memory:?}"), format!("{:?}", lost()));
    assert!(matches!(
        Error::from(memory),
        Error::DeviceLost {
            call: "vkAllocateMemory",
            ..
        }
    ));
    // Two levels: a descriptor write's buffer check, a pipeline's device failure.
    let usage = || MemoryError::BufferUsage {
        object: "weights".into(),
        needed: vk::BufferUsageFlags::STORAGE_BUFFER,
        call: "a storage buffer binding",
    };
    let nested = PipelineError::Descriptor(DescriptorError::Memory(usage()));
    assert_eq!(nested.code(), usage().code());
    assert_eq!(nested.to_string(), usage().to_string());
    assert!(matches!(Error::from(nested), Error::BufferUsage { .. }));
    let nested = PipelineError::from(DescriptorError::from(MemoryError::from(lost())));
    assert!(matches!(Error::from(nested), Error::DeviceLost { .. }));
}

#[test]
fn an_error_narrows_to_the_area_of_its_own_variant_only() {
    for e in Error::every_variant() {
        let code = e.code();
        let shown = e.to_string();
        let narrowed = match DeviceError::try_from(e) {
            Ok(device) => {
                assert_eq!((device.code(), device.to_string()), (code, shown));
                true
            }
            Err(back) => {
                assert_eq!((back.code(), back.to_string()), (code, shown));
                false
            }
        };
        assert_eq!(
            narrowed,
            ("KILN-E100"..="KILN-E149").contains(&code)
                && !RECORDING.contains(&code)
                && !SUBMISSION.contains(&code),
            "{code}"
        );
    }
    assert!(matches!(
        ShaderError::try_from(Error::SpirvEmpty),
        Ok(ShaderError::SpirvEmpty)
    ));
}

/// A function that can fail only with shader errors, used with `?` where a
/// [`Result`] (of [`Error`]) is returned, and one that nests a [`DeviceError`].
#[test]
fn area_errors_convert_with_question_mark() {
    fn parse(bytes: &[u8]) -> std::result::Result<usize, ShaderError> {
        if bytes.is_empty() {
            return Err(ShaderError::SpirvEmpty);
        }
        Ok(bytes.len())
    }
    fn create(result: vk::Result) -> std::result::Result<(), MemoryError> {
        Err(vk_device_err("vkCreateBuffer")(result))?
    }
    fn both(bytes: &[u8]) -> Result<usize> {
        let len = parse(bytes)?;
        create(vk::Result::ERROR_OUT_OF_DEVICE_MEMORY)?;
        Ok(len)
    }
    assert!(matches!(both(&[]), Err(Error::SpirvEmpty)));
    let e = both(&[1, 2, 3, 4]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "KILN-E106: out of device memory during vkCreateBuffer; free resources and retry"
    );
}

/// Each value of the list areas converts into the [`Error`] of its code and narrows back to
/// the same value (code and message); the [`Error`]s of other areas do not narrow.
#[test]
fn list_areas_round_trip_through_error() {
    let recording = RecordingError::every_variant();
    assert_eq!(recording.len(), RECORDING.len());
    for area in recording {
        let (code, shown) = (area.code(), area.to_string());
        assert!(RECORDING.contains(&code), "{code}");
        let error = Error::from(area);
        assert_eq!((error.code(), error.to_string()), (code, shown.clone()));
        let back = RecordingError::try_from(error).expect("a recording variant narrows");
        assert_eq!((back.code(), back.to_string()), (code, shown.clone()));
        let error = Error::from(back);
        assert!(SubmissionError::try_from(error).is_err(), "{code}");
    }
    let submission = SubmissionError::every_variant();
    assert_eq!(submission.len(), SUBMISSION.len());
    for area in submission {
        let (code, shown) = (area.code(), area.to_string());
        assert!(SUBMISSION.contains(&code), "{code}");
        let error = Error::from(area);
        assert_eq!((error.code(), error.to_string()), (code, shown.clone()));
        let back = SubmissionError::try_from(error).expect("a submission variant narrows");
        assert_eq!((back.code(), back.to_string()), (code, shown));
        assert!(
            RecordingError::try_from(Error::from(back)).is_err(),
            "{code}"
        );
    }
    // Kept messages: a recording code from the pipeline range, a submission one from the
    // device range.
    let bound = RecordingError::NoPipelineBound { what: "dispatch" };
    assert_eq!(
        bound.to_string(),
        "KILN-E252: dispatch before a pipeline was bound; call bind_pipeline first"
    );
    let signals = SubmissionError::TooManySignals { count: 9, max: 8 };
    assert_eq!(signals.code(), "KILN-E133");
    assert!(matches!(
        Error::from(signals),
        Error::TooManySignals { count: 9, max: 8 }
    ));
}

/// Lower areas nest in the list areas and flatten on conversion: a submission's recording
/// of a pipeline error, a submission's device loss.
#[test]
fn list_areas_nest_the_lower_areas() {
    let usage = || PipelineError::WrongStage {
        entry: "main".into(),
        stage: vk::ShaderStageFlags::VERTEX,
        what: "a compute pipeline needs a compute shader",
    };
    let nested = SubmissionError::from(RecordingError::from(usage()));
    assert_eq!(nested.code(), "KILN-E251");
    assert_eq!(nested.to_string(), usage().to_string());
    assert_eq!(format!("{nested:?}"), format!("{:?}", usage()));
    assert!(matches!(
        Error::from(nested),
        Error::WrongStage { entry, .. } if entry == "main"
    ));
    let lost = SubmissionError::from(vk_err_labeled("vkQueueSubmit2", "frame")(
        vk::Result::ERROR_DEVICE_LOST,
    ));
    assert_eq!(lost.code(), "KILN-E105");
    assert!(matches!(
        Error::from(lost),
        Error::DeviceLost { label, .. } if label == "frame"
    ));
    // `?` from a recorder call into a submission error and into `kiln::Result`.
    fn record() -> std::result::Result<(), RecordingError> {
        Err(RecordingError::ScopeMismatch {
            what: "end_scope without begin_scope".into(),
        })
    }
    fn submit() -> std::result::Result<(), SubmissionError> {
        record()?;
        Ok(())
    }
    fn user() -> Result<()> {
        submit()?;
        Ok(())
    }
    assert!(matches!(user(), Err(Error::ScopeMismatch { .. })));
}
