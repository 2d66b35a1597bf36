//! Pipeline executable statistics (VK_KHR_pipeline_executable_properties; Vulkan spec
//! "Pipeline Executable Properties", in the chapter "Pipelines"): what the driver's
//! compiler made of a pipeline's shaders, per executable (one per stage or merged stages),
//! as statistics the driver names itself: registers, spills, shared memory, instruction
//! counts, … (Vulkan's counterpart of `ptxas -v`). The names and their meaning are the
//! driver's; kiln passes every statistic through with its type.
//!
//! A pipeline reports them only when it was created with
//! `VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR` (`capture_statistics` of
//! [`ComputePipelineDesc`](super::ComputePipelineDesc) and
//! [`GraphicsPipelineDesc`](super::GraphicsPipelineDesc);
//! VUID-vkGetPipelineExecutableStatisticsKHR-pipeline-03274) on a device with the
//! `pipelineExecutableInfo` feature enabled (VUID-vkGetPipelineExecutablePropertiesKHR-pipelineExecutableInfo-03270,
//! VUID-vkGetPipelineExecutableStatisticsKHR-pipelineExecutableInfo-03272), which kiln
//! enables where the device has it ([`Features::pipeline_executable_info`](crate::Features::pipeline_executable_info)).
//! [`check`] is the one place both conditions are checked.

use std::ffi::CStr;

use ash::vk;

use crate::device::Shared;
use crate::error::{vk_device_err, PipelineError, Result};

/// The value of one statistic, in the type the driver reports it in
/// (`VkPipelineExecutableStatisticFormatKHR`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum StatisticValue {
    /// `VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR`.
    Bool(bool),
    /// `VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR`.
    I64(i64),
    /// `VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR`.
    U64(u64),
    /// `VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR`.
    F64(f64),
}

impl StatisticValue {
    /// The value as an unsigned integer: `U64` as is, `I64` when not negative, `Bool` as 0
    /// or 1, `F64` when it is a whole number from 0 to 2^53; `None` otherwise.
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            StatisticValue::Bool(b) => Some(b as u64),
            StatisticValue::I64(v) => u64::try_from(v).ok(),
            StatisticValue::U64(v) => Some(v),
            StatisticValue::F64(v) => {
                (v >= 0.0 && v.fract() == 0.0 && v <= (1u64 << 53) as f64).then_some(v as u64)
            }
        }
    }
}

impl std::fmt::Display for StatisticValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatisticValue::Bool(v) => write!(f, "{v}"),
            StatisticValue::I64(v) => write!(f, "{v}"),
            StatisticValue::U64(v) => write!(f, "{v}"),
            StatisticValue::F64(v) => write!(f, "{v}"),
        }
    }
}

/// One statistic of an executable (`VkPipelineExecutableStatisticKHR`).
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineExecutableStatistic {
    /// The driver's short name (e.g. lavapipe's `"Instruction count"`).
    pub name: String,
    /// The driver's description of it.
    pub description: String,
    /// Its value.
    pub value: StatisticValue,
}

/// One executable of a pipeline (`VkPipelineExecutablePropertiesKHR`) with its statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineExecutable {
    /// The driver's name of the executable.
    pub name: String,
    /// The driver's description of it.
    pub description: String,
    /// The shader stages compiled into it.
    pub stages: vk::ShaderStageFlags,
    /// The subgroup size it runs with (0 where the driver has no such notion).
    pub subgroup_size: u32,
    /// Every statistic the driver reports for it, in the driver's order.
    pub statistics: Vec<PipelineExecutableStatistic>,
}

impl PipelineExecutable {
    /// The value of the first statistic named `name` (the driver's name, compared
    /// without case), `None` if the driver reports none of that name.
    pub fn statistic(&self, name: &str) -> Option<StatisticValue> {
        self.statistics
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
            .map(|s| s.value)
    }
}

/// Checks that statistics can be read from pipeline `pipeline` of device `device`: the
/// device has `pipelineExecutableInfo` enabled (`feature`) and the pipeline was created to
/// capture them (`captured`). Public (hidden) so that tests can reach the missing-feature
/// path on devices that have the feature.
///
/// Errors: `KILN-E267` no feature, `KILN-E268` not captured.
pub fn check(
    pipeline: &str,
    device: &str,
    feature: bool,
    captured: bool,
) -> Result<(), PipelineError> {
    if !feature {
        return Err(PipelineError::ExecutableStatisticsUnsupported {
            pipeline: pipeline.to_string(),
            device: device.to_string(),
        });
    }
    if !captured {
        return Err(PipelineError::ExecutableStatisticsNotCaptured {
            pipeline: pipeline.to_string(),
        });
    }
    Ok(())
}

/// The create flags of a pipeline named `pipeline` that is to capture statistics or not
/// (`capture`): `CAPTURE_STATISTICS_KHR`, checked against the device's feature first.
///
/// Errors: `KILN-E267` capture without `pipelineExecutableInfo`.
pub(crate) fn create_flags(
    shared: &Shared,
    pipeline: &str,
    capture: bool,
) -> Result<vk::PipelineCreateFlags, PipelineError> {
    if !capture {
        return Ok(vk::PipelineCreateFlags::empty());
    }
    check(
        pipeline,
        &shared.info.name,
        shared.features.pipeline_executable_info,
        true,
    )?;
    Ok(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)
}

fn text(s: std::result::Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    s.map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every executable of `raw` (named `label`, created with capture `captured`) with its
/// statistics (vkGetPipelineExecutablePropertiesKHR, vkGetPipelineExecutableStatisticsKHR).
///
/// Errors: those of [`check`]; `KILN-E104`/`KILN-E111` a failed query.
pub(crate) fn executables(
    shared: &Shared,
    raw: vk::Pipeline,
    label: &str,
    captured: bool,
) -> Result<Vec<PipelineExecutable>, PipelineError> {
    check(
        label,
        &shared.info.name,
        shared.features.pipeline_executable_info,
        captured,
    )?;
    let ext = crate::device::loader::walking(|| {
        ash::khr::pipeline_executable_properties::Device::new(&shared.instance.raw, &shared.raw)
    });
    let info = vk::PipelineInfoKHR::default().pipeline(raw);
    // SAFETY: the extension and its pipelineExecutableInfo feature are enabled (checked
    // above: VUID-vkGetPipelineExecutablePropertiesKHR-pipelineExecutableInfo-03270);
    // `raw` is a live pipeline of this device; `info` is a local alive for the call.
    let props = unsafe { ext.get_pipeline_executable_properties(&info) }
        .map_err(vk_device_err("vkGetPipelineExecutablePropertiesKHR"))?;
    let mut out = Vec::with_capacity(props.len());
    for (index, p) in props.iter().enumerate() {
        let exec = vk::PipelineExecutableInfoKHR::default()
            .pipeline(raw)
            .executable_index(index as u32);
        // SAFETY: as above; the index is below the count the driver returned
        // (VUID-VkPipelineExecutableInfoKHR-executableIndex-03275), and the pipeline was
        // created with CAPTURE_STATISTICS (checked: VUID-vkGetPipelineExecutableStatisticsKHR-pipeline-03274).
        let stats = unsafe { ext.get_pipeline_executable_statistics(&exec) }
            .map_err(vk_device_err("vkGetPipelineExecutableStatisticsKHR"))?;
        let statistics = stats
            .iter()
            .map(|s| PipelineExecutableStatistic {
                name: text(s.name_as_c_str()),
                description: text(s.description_as_c_str()),
                // SAFETY: `format` says which member of the union the driver wrote.
                value: unsafe {
                    match s.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => {
                            StatisticValue::Bool(s.value.b32 == vk::TRUE)
                        }
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => {
                            StatisticValue::I64(s.value.i64)
                        }
                        vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => {
                            StatisticValue::F64(s.value.f64)
                        }
                        // UINT64, the only other format Vulkan defines.
                        _ => StatisticValue::U64(s.value.u64),
                    }
                },
            })
            .collect();
        out.push(PipelineExecutable {
            name: text(p.name_as_c_str()),
            description: text(p.description_as_c_str()),
            stages: p.stages,
            subgroup_size: p.subgroup_size,
            statistics,
        });
    }
    Ok(out)
}
