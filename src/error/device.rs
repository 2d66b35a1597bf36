//! The variants of [`Error`](super::Error) with codes E100–E149: the Vulkan instance, device and
//! driver (E140–E149: window, surface). The range's recording codes (E120, E123) are
//! [`RecordingError`](super::RecordingError)'s (`recording.rs`), its submission codes (E121,
//! E124, E129–E133) [`SubmissionError`](super::SubmissionError)'s (`submission.rs`).
//!
//! Written as a link of the chain `errors!` is built from (see the module docs of
//! [`error`](super)): the macro emits the area type [`DeviceError`](super::DeviceError) with this
//! range's variants, appends them to the ones it is given and hands them on to the next
//! macro named.

macro_rules! device_errors {
    ($($chain:tt)*) => {
        link! { DeviceError "E100–E149: the Vulkan instance, device and driver, window and surface" [] ($($chain)*)
            // ------------------------------------------------------------ E100–E149 Vulkan / device
            /// The Vulkan loader (libvulkan.so.1) could not be loaded.
            #[code("KILN-E100")]
            #[error("cannot load the Vulkan loader: {detail}; install it (Debian/Ubuntu: `apt-get install libvulkan1`)")]
            LoaderMissing { detail: String },

            /// No physical device (driver) is present.
            #[code("KILN-E101")]
            #[error("no Vulkan device found; install a driver (no GPU: `apt-get install mesa-vulkan-drivers` for lavapipe)")]
            NoDevice,

            /// `KILN_DEVICE` matched no device.
            #[code("KILN-E102")]
            #[error("KILN_DEVICE={wanted:?} matches no device; available: {available}")]
            DeviceNotMatched { wanted: String, available: String },

            /// No queue family supports compute.
            #[code("KILN-E103")]
            #[error("device `{device}` has no queue family with compute support")]
            NoComputeQueue { device: String },

            /// A Vulkan call failed with a result kiln has no specific variant for.
            #[code("KILN-E104")]
            #[error("{call} failed: {result:?}")]
            Vulkan {
                call: &'static str,
                result: vk::Result,
            },

            /// VK_ERROR_DEVICE_LOST (Vulkan spec §5.2.3 "Lost Device"). `label` is the label of the
            /// last submission when the failing call knows it (a submit or a wait), empty otherwise.
            /// `report` is the post-mortem (`kiln::PostMortem`): the breadcrumbs' last scope
            /// started and first not finished, and the driver's fault report
            /// (VK_EXT_device_fault) where the device has it; `None` when kiln knows neither.
            #[code("KILN-E105")]
            #[error("device lost during {call}{}{}; the device must be recreated", last_submission(label), post_mortem(report))]
            DeviceLost {
                call: &'static str,
                label: String,
                report: Option<Box<$crate::error::post_mortem::PostMortem>>,
            },

            /// VK_ERROR_OUT_OF_DEVICE_MEMORY / VK_ERROR_OUT_OF_HOST_MEMORY.
            #[code("KILN-E106")]
            #[error("out of {kind} memory during {call}; free resources and retry")]
            OutOfMemory {
                call: &'static str,
                kind: &'static str,
            },

            /// A required device extension or feature is missing.
            #[code("KILN-E107")]
            #[error("device `{device}` lacks {what}")]
            MissingFeature { device: String, what: String },

            /// The GPU did not finish within the wait timeout (`ms`, the time waited;
            /// `DeviceDesc::wait_timeout`, `KILN_WAIT_TIMEOUT_MS`). `label` names the submission
            /// waited for and its scopes when the wait knows them, empty otherwise. `report`
            /// holds the breadcrumbs (`kiln::PostMortem`: the scope the GPU is in) when they
            /// are on.
            #[code("KILN-E108")]
            #[error("timed out after {ms} ms waiting for the GPU during {call}{}{}", submission(label), post_mortem(report))]
            Timeout {
                call: &'static str,
                ms: u64,
                label: String,
                report: Option<Box<$crate::error::post_mortem::PostMortem>>,
            },

            /// An object of one device was used with another device (VUID-*-commonparent).
            #[code("KILN-E109")]
            #[error("{object} belongs to another kiln device; objects cannot be shared between devices")]
            ForeignObject { object: String },

            /// A SPIR-V capability that kiln's capability table (`device/capabilities.rs`) does not
            /// list, so kiln cannot tell which feature it needs (the driver would see
            /// VUID-VkShaderModuleCreateInfo-pCode-08740).
            #[code("KILN-E110")]
            #[error("module `{module}` declares SPIR-V capability {capability}, which kiln does not know; compile without the feature that uses it, or report it so kiln's capability table can map it to its Vulkan feature")]
            UnknownCapability { module: String, capability: String },

            /// A capability that no Vulkan environment has: OpenCL's (`Kernel`, `Addresses`,
            /// `Linkage`, …), OpenGL's, FPGA ones (Vulkan spec appendix "SPIR-V Capabilities"
            /// does not list it).
            #[code("KILN-E111")]
            #[error("module `{module}` declares SPIR-V capability {capability}, which no Vulkan environment allows (it is for OpenCL kernels or other APIs); compile the shader for Vulkan (glslc --target-env=vulkan1.3, clspv for OpenCL C)")]
            CapabilityNotVulkan { module: String, capability: String },

            /// A module uses cooperative matrices of a scope this device does not allow: `Workgroup`
            /// needs VK_NV_cooperative_matrix2's `cooperativeMatrixWorkgroupScope` (Vulkan spec,
            /// VK_NV_cooperative_matrix2; VUID-RuntimeSpirv-cooperativeMatrixWorkgroupScope-10164),
            /// and no scope other than `Subgroup` or `Workgroup` is valid in Vulkan.
            #[code("KILN-E112")]
            #[error("module `{module}` uses cooperative matrices of scope {scope} on device `{device}`, which {why}; use subgroup-scope matrices (gl_ScopeSubgroup, a configuration from ComputeProperties::cooperative_matrix), or a device with VK_NV_cooperative_matrix2 enabled (Features::cooperative_matrix2; KILN_VALIDATION=0 where the validation layer predates it)")]
            CooperativeMatrixScope {
                module: String,
                device: String,
                scope: String,
                why: String,
            },

            /// kiln broke an invariant of its own: a bug in kiln, not in the caller's use of it nor
            /// in the driver. Nothing was recorded or submitted by the failing call.
            #[code("KILN-E113")]
            #[error("kiln internal error: {what}; this is a bug in kiln: please report it with this message")]
            Internal { what: &'static str },

            /// GPU timing on a queue whose family writes no timestamps (`timestampValidBits` is 0,
            /// VUID-vkCmdWriteTimestamp2-timestamp-03863), or a device without `hostQueryReset`
            /// (Vulkan 1.2), which kiln's reused query pools need.
            #[code("KILN-E122")]
            #[error("queue family {family} of `{device}` cannot time work: {what}; time the work on another queue (QueueKind::Main) or turn timing off")]
            TimestampsUnsupported {
                device: String,
                family: u32,
                what: &'static str,
            },

            /// Validation-layer features the layer cannot run together (Khronos validation layer
            /// 1.3.239: debug printf and GPU-assisted validation share the instrumentation).
            #[code("KILN-E126")]
            #[error("the validation layer cannot run {features} together; enable one of them (DeviceDesc::layer_features, KILN_VALIDATION)")]
            LayerFeaturesConflict { features: &'static str },

            /// `KILN_VALIDATION` holds a value kiln does not know.
            #[code("KILN-E127")]
            #[error("KILN_VALIDATION={value:?}: unknown setting `{token}`; use a comma-separated list of 0, 1, printf, gpu, sync, nosync")]
            ValidationSetting { value: String, token: String },

            /// `KILN_WAIT_TIMEOUT_MS` is not a number of milliseconds.
            #[code("KILN-E128")]
            #[error("KILN_WAIT_TIMEOUT_MS={value:?} is not a whole number of milliseconds; set it to e.g. 120000, or unset it")]
            WaitTimeoutSetting { value: String },

            /// Creating a window surface or swapchain failed, or the window cannot be presented to.
            #[code("KILN-E140")]
            #[error("window/surface: {detail}")]
            Surface { detail: String },
        }
    };
}
