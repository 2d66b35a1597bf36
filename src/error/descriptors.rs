//! The variants of [`Error`](super::Error) with codes E200–E249: descriptor set layouts, sets, pools, writes, binding and push descriptors.
//!
//! Written as a link of the chain `errors!` is built from (see the module docs of
//! [`error`](super)): the macro emits the area type [`DescriptorError`](super::DescriptorError) with this
//! range's variants, appends them to the ones it is given and hands them on to the next
//! macro named.

macro_rules! descriptors_errors {
    ($($chain:tt)*) => {
        link! { DescriptorError "E200–E249: descriptor set layouts, sets, pools, writes and binding" [Device(DeviceError), Memory(MemoryError), Shader(ShaderError)] ($($chain)*)
            // ------------------------------------------------------------ E200–E249 descriptors
            /// The set layout has no such binding.
            #[code("KILN-E200")]
            #[error("set {set} has no binding {binding}; the layout has bindings {available:?}")]
            NoSuchBinding {
                set: u32,
                binding: u32,
                available: Vec<u32>,
            },

            /// No binding of that reflected name (instance names, `scene` in `uniform Scene {..}
            /// scene;`, and block names, `Scene`, are both accepted).
            #[code("KILN-E201")]
            #[error("set {set} has no binding named `{name}`; {}", names_hint(available))]
            NoSuchBindingName {
                set: u32,
                name: String,
                /// The names the set has, as `name (binding n)`, sorted.
                available: Vec<String>,
            },

            /// Writing a descriptor of the wrong type (VUID-VkWriteDescriptorSet-descriptorType-00330 ff.).
            #[code("KILN-E202")]
            #[error("set {set} binding {binding} is {expected:?} but a {found:?} was written; {hint}")]
            DescriptorTypeMismatch {
                set: u32,
                binding: u32,
                expected: vk::DescriptorType,
                found: vk::DescriptorType,
                hint: &'static str,
            },

            /// Array element beyond the binding's descriptor count.
            #[code("KILN-E203")]
            #[error("set {set} binding {binding} has {count} descriptors; element {element} is out of range")]
            ArrayElementOutOfRange {
                set: u32,
                binding: u32,
                count: u32,
                element: u32,
            },

            /// A set bound to a pipeline whose layout differs at that set number. When the two
            /// differ only in stage flags, `diff` ends with the call that makes them one layout.
            #[code("KILN-E204")]
            #[error("set {set} is not compatible with the pipeline layout: {diff}")]
            IncompatibleSet { set: u32, diff: String },

            /// The pipeline's layout has no set at that number.
            #[code("KILN-E205")]
            #[error("the pipeline layout has {set_count} set(s); set {set} does not exist")]
            NoSuchSet { set: u32, set_count: u32 },

            /// A buffer range exceeds maxUniformBufferRange / maxStorageBufferRange.
            #[code("KILN-E206")]
            #[error("set {set} binding {binding}: range of {range} bytes exceeds the device limit {limit} ({limit_name}); bind a sub-range, or pass the buffer by device address (Buffer::device_address, GLSL buffer_reference), which has no range limit")]
            BufferRangeTooLarge {
                set: u32,
                binding: u32,
                range: u64,
                limit: u64,
                limit_name: &'static str,
            },

            /// A binding that the pipeline reads was never written (VUID-vkCmdDispatch-None-08114).
            #[code("KILN-E207")]
            #[error("set {set} binding {binding} was never written; write it before dispatch")]
            BindingNotWritten { set: u32, binding: u32 },

            /// Offset not aligned to min{Uniform,Storage}BufferOffsetAlignment.
            #[code("KILN-E208")]
            #[error("set {set} binding {binding}: offset {offset} is not a multiple of {alignment} ({limit_name})")]
            MisalignedOffset {
                set: u32,
                binding: u32,
                offset: u64,
                alignment: u64,
                limit_name: &'static str,
            },

            /// A set layout description Vulkan rejects (VUID-VkDescriptorSetLayoutCreateInfo-binding-00279,
            /// VUID-VkDescriptorSetLayoutBindingFlagsCreateInfo-*, -flags-03000).
            #[code("KILN-E209")]
            #[error("invalid set layout: {detail}")]
            InvalidSetLayout { detail: String },

            /// An image bound through a set whose view does not match the shader's image type:
            /// the view type must be the `OpTypeImage` dimensionality (a `sampler2D` a 2D view,
            /// `samplerCube` a cube view, …, arrayed an array view) and the image multisampled
            /// exactly when the type is (VUID-vkCmdDispatch-viewType-07752, -OpTypeImage-07468,
            /// VUID-vkCmdDraw-viewType-07752 and their twins).
            #[code("KILN-E214")]
            #[error("image `{image}` (set {set}, binding {binding}) has a {view:?} view with {samples:?} but the shader declares {shader}; write an image of that type (ImageDesc::view_type, samples)")]
            ImageViewMismatch {
                image: String,
                set: u32,
                binding: u32,
                view: vk::ImageViewType,
                samples: vk::SampleCountFlags,
                shader: String,
            },

            /// A bottom-level acceleration structure written to a descriptor: shaders trace rays
            /// only through top-level ones (VUID-VkWriteDescriptorSetAccelerationStructureKHR-pAccelerationStructures-03579).
            #[code("KILN-E230")]
            #[error("acceleration structure `{object}` written to set {set} binding {binding} is bottom-level; write the top-level structure whose instances refer to it")]
            AccelerationStructureLevel { object: String, set: u32, binding: u32 },

            /// A write of bytes into an inline uniform block outside the rules: offset and size
            /// multiples of 4 (VUID-VkWriteDescriptorSet-descriptorType-02219, -02220), not
            /// empty, within the block (its reflected size rounded up to 4,
            /// VUID-VkWriteDescriptorSet-descriptorType-02221 ff.).
            #[code("KILN-E215")]
            #[error("set {set} binding {binding}: {len} bytes at offset {offset} cannot be written into its inline uniform block of {size} bytes: {detail}")]
            InlineUniformBlockWrite {
                set: u32,
                binding: u32,
                offset: u32,
                len: u64,
                size: u32,
                detail: &'static str,
            },

            /// An image write whose view is a view of another image than the one given (a
            /// pushed `PushResource::Image`): the automatic barriers would move the wrong image.
            #[code("KILN-E216")]
            #[error("set {set} binding {binding}: the view is of image `{view_image}`, not of `{image}`; pass the view's own image (ImageView::image)")]
            ViewOfOtherImage {
                view_image: String,
                image: String,
                set: u32,
                binding: u32,
            },

            // ------------------------------------------------------------ E210–E214 push descriptors
            /// A push-descriptor command on a set that is not the pipeline's push-descriptor set,
            /// or a pipeline asked for a push-descriptor set the device or the layout cannot have
            /// (VUID-vkCmdPushDescriptorSetKHR-set-00364, -00365,
            /// VUID-VkDescriptorSetLayoutCreateInfo-flags-00280, -00281).
            #[code("KILN-E210")]
            #[error("push descriptor set {set} of `{pipeline}`: {detail}")]
            PushDescriptor {
                pipeline: String,
                set: u32,
                detail: String,
            },
        }
    };
}
