//! The variants of [`Error`](super::Error) with codes E150–E199: memory, buffers and transfers (E180–E189: images, E190–E199: samplers).
//!
//! Written as a link of the chain `errors!` is built from (see the module docs of
//! [`error`](super)): the macro emits the area type [`MemoryError`](super::MemoryError) with this
//! range's variants, appends them to the ones it is given and hands them on to the next
//! macro named.

macro_rules! memory_errors {
    ($($chain:tt)*) => {
        link! { MemoryError "E150–E199: memory, buffers, transfers, images and samplers" [Device(DeviceError)] ($($chain)*)
            // ------------------------------------------------------------ E150–E199 memory / images
            /// gpu-allocator failed.
            #[code("KILN-E150")]
            #[error("memory allocation for `{object}` failed: {source}")]
            Allocation {
                object: String,
                #[source]
                source: gpu_allocator::AllocationError,
            },

            /// Host data does not fit the buffer.
            #[code("KILN-E151")]
            #[error("buffer `{object}` holds {capacity} bytes; {requested} bytes were requested at offset {offset}")]
            BufferOverflow {
                object: String,
                capacity: u64,
                offset: u64,
                requested: u64,
            },

            /// A buffer of size 0 (VUID-VkBufferCreateInfo-size-00912).
            #[code("KILN-E152")]
            #[error("buffer `{object}` would have size 0; Vulkan needs at least 1 byte")]
            ZeroSizedBuffer { object: String },

            /// Readback as `T` where the byte size is not a multiple of `size_of::<T>()`.
            #[code("KILN-E153")]
            #[error("buffer `{object}` has {size} bytes, not a multiple of the element size {elem}")]
            BufferElementMismatch {
                object: String,
                size: u64,
                elem: usize,
            },

            /// The allocation would exceed the memory heap it comes from (kiln never over-commits
            /// a heap: VUID-vkAllocateMemory-pAllocateInfo-01713 and the heap budget).
            #[code("KILN-E154")]
            #[error("buffer `{object}` needs {requested} bytes but heap {heap} has {available} of {heap_size} bytes left; free resources or use a smaller buffer")]
            HeapExhausted {
                object: String,
                requested: u64,
                available: u64,
                heap_size: u64,
                heap: usize,
            },

            /// A buffer copy Vulkan rejects: zero size or overlapping source and destination
            /// (VUID-VkBufferCopy-size-01988, VUID-vkCmdCopyBuffer-pRegions-00117).
            #[code("KILN-E155")]
            #[error("copy of {size} bytes from `{src}` at {src_offset} to `{dst}` at {dst_offset}: {detail}")]
            InvalidCopy {
                src: String,
                dst: String,
                src_offset: u64,
                dst_offset: u64,
                size: u64,
                detail: &'static str,
            },

            /// A byte size that does not fit in 64 bits (`len * size_of::<T>()`).
            #[code("KILN-E156")]
            #[error("buffer `{object}`: {len} elements of {elem} bytes overflow a 64-bit size")]
            SizeOverflow {
                object: String,
                len: u64,
                elem: usize,
            },

            /// A buffer used by a command its usage flags do not allow: a vertex buffer without
            /// VERTEX_BUFFER (VUID-vkCmdBindVertexBuffers-pBuffers-00627), an index buffer without
            /// INDEX_BUFFER (VUID-vkCmdBindIndexBuffer-buffer-00433). `call` is the kiln method.
            #[code("KILN-E157")]
            #[error("buffer `{object}` lacks usage {needed:?} needed for {call}; create it with that usage")]
            BufferUsage {
                object: String,
                needed: vk::BufferUsageFlags,
                call: &'static str,
            },

            /// `Buffer::device_address` of a buffer without SHADER_DEVICE_ADDRESS usage
            /// (VUID-VkBufferDeviceAddressInfo-buffer-02601) or on a device without
            /// `bufferDeviceAddress` (VUID-vkGetBufferDeviceAddress-bufferDeviceAddress-03324).
            #[code("KILN-E158")]
            #[error("buffer `{object}` has no device address: {reason}; create it with STORAGE_BUFFER, UNIFORM_BUFFER or SHADER_DEVICE_ADDRESS usage (kiln adds SHADER_DEVICE_ADDRESS to those) on a device with bufferDeviceAddress")]
            NoDeviceAddress { object: String, reason: String },

            /// A buffer larger than the device's `maxBufferSize` (VUID-VkBufferCreateInfo-size-06409).
            #[code("KILN-E159")]
            #[error("buffer `{object}` of {size} bytes exceeds maxBufferSize {max} of device `{device}`; split it into several buffers")]
            BufferTooLarge {
                object: String,
                size: u64,
                max: u64,
                device: String,
            },

            /// Host memory to import whose address or size is not a multiple of the device's
            /// `minImportedHostPointerAlignment` (VUID-VkImportMemoryHostPointerInfoEXT-pHostPointer-01749,
            /// VUID-VkMemoryAllocateInfo-allocationSize-01745).
            #[code("KILN-E160")]
            #[error("host memory `{object}` at {address:#x} ({len} bytes) cannot be imported: address and size must be multiples of {alignment} bytes (minImportedHostPointerAlignment); import page-aligned memory of a whole number of pages, or use Device::host_buffer")]
            HostMemoryMisaligned {
                object: String,
                address: u64,
                len: u64,
                alignment: u64,
            },

            /// A buffer larger than the device's `maxMemoryAllocationSize` (Vulkan spec
            /// `VkPhysicalDeviceMaintenance3Properties`: allocations beyond it may fail; the
            /// validation layer warns, UNASSIGNED-vkAllocateMemory-maxMemoryAllocationSize).
            #[code("KILN-E162")]
            #[error("buffer `{object}` of {size} bytes exceeds maxMemoryAllocationSize {max} of device `{device}`; split it into several buffers, or set DeviceDesc::allocations_beyond_limit where the driver documents larger allocations")]
            AllocationTooLarge {
                object: String,
                size: u64,
                max: u64,
                device: String,
            },

            /// A host buffer of imported memory used where it cannot be: after its import scope
            /// ended, or for host access (the importer reads and writes its own slice).
            #[code("KILN-E161")]
            #[error("host buffer `{object}` is imported memory: {detail}")]
            ImportedHostMemory {
                object: String,
                detail: &'static str,
            },

            /// External memory or a semaphore payload the device cannot share as asked: the
            /// extension is missing (`VK_KHR_external_memory_fd`, `VK_EXT_external_memory_dma_buf`,
            /// `VK_KHR_external_semaphore_fd`), the driver does not allow the handle type for the
            /// object (`vkGetPhysicalDeviceExternalBufferProperties`,
            /// `vkGetPhysicalDeviceExternalSemaphoreProperties`), a handle type of the other kind
            /// of object, a sync fd for a timeline semaphore
            /// (VUID-VkSemaphoreGetFdInfoKHR-handleType-03253), or an object that was not made
            /// exportable.
            #[code("KILN-E163")]
            #[error("cannot {what} `{object}` as {handle:?} on device `{device}`: {why}; use a handle type the device offers (Features::external_memory_fd, external_memory_dma_buf, external_semaphore_fd), or share through host memory")]
            ExternalHandleUnsupported {
                object: String,
                what: &'static str,
                handle: $crate::error::ExternalHandle,
                device: String,
                why: String,
            },

            /// An import whose described memory does not fit the buffer or image: an allocation
            /// smaller than its memory requirements, or a memory type it (or a DMA-BUF fd) does
            /// not allow (VUID-VkMemoryAllocateInfo-allocationSize-01742,
            /// VUID-vkBindBufferMemory-size-01037, VUID-vkBindBufferMemory-memory-01035).
            #[code("KILN-E164")]
            #[error("imported memory for `{object}` does not fit: {allocation_size} bytes of memory type {memory_type_index}, but it needs {needed} bytes of one of the types {type_bits:#b}; import with the ExternalMemory the exporter returned, into a buffer no larger than the exported one (an image: of the exported one's ImageDesc)")]
            ExternalImportMismatch {
                object: String,
                allocation_size: u64,
                memory_type_index: u32,
                needed: u64,
                type_bits: u32,
            },

            /// An fd that is not an exported allocation (or semaphore payload) of that handle type
            /// that this device can import (VK_ERROR_INVALID_EXTERNAL_HANDLE, §11.2.7). Nothing was
            /// imported; the fd is still the caller's.
            #[code("KILN-E165")]
            #[error("`{object}`: the fd is not {handle:?} memory or payload this device can import ({detail}); pass an fd from Buffer::export_memory / TimelineSemaphore::export of a device on the same physical device (or the matching CUDA export); the fd is still yours to close")]
            InvalidExternalHandle {
                object: String,
                handle: $crate::error::ExternalHandle,
                detail: String,
            },

            /// Host pages for a host buffer (`HostBufferMemory::Imported`) could not be mapped
            /// (`mmap` refused: out of memory or address space, or the device's import alignment
            /// does not divide 2 MiB).
            #[code("KILN-E166")]
            #[error("host buffer `{object}`: kiln could not map {size} bytes of host pages to import ({detail}); free host memory, or create the device with HostBufferMemory::Driver")]
            HostMemoryMap {
                object: String,
                size: u64,
                detail: String,
            },

            /// An image description Vulkan would reject (zero extent, too many mips, unsupported
            /// format/usage; VUID-VkImageCreateInfo-extent-00944, -mipLevels-00947, -usage-00964).
            #[code("KILN-E180")]
            #[error("image `{object}`: {detail}")]
            InvalidImage { object: String, detail: String },

            /// Host data for an image level has the wrong size.
            #[code("KILN-E181")]
            #[error("image `{object}` mip {level} is {width}x{height}x{depth}, {layers} layer(s), of {format:?} = {expected} bytes, but {found} bytes were given")]
            ImageDataSize {
                object: String,
                level: u32,
                width: u32,
                height: u32,
                depth: u32,
                layers: u32,
                format: vk::Format,
                expected: u64,
                found: u64,
            },

            /// An image used in a way its usage flags do not allow
            /// (VUID-VkWriteDescriptorSet-descriptorType-00337 ff.).
            #[code("KILN-E182")]
            #[error("image `{object}` lacks usage {needed:?} needed for {what}; create it with that usage")]
            ImageUsage {
                object: String,
                needed: vk::ImageUsageFlags,
                what: &'static str,
            },

            /// A command needs format features the device lacks for the image's format with
            /// optimal tiling (`vkGetPhysicalDeviceFormatProperties`): mip generation needs
            /// BLIT_SRC, BLIT_DST and SAMPLED_IMAGE_FILTER_LINEAR
            /// (VUID-VkBlitImageInfo2-srcImage-01999, -dstImage-02000, -filter-02001), a
            /// buffer view the texel-buffer features its usages need
            /// (VUID-VkBufferViewCreateInfo-buffer-00933, -00934).
            #[code("KILN-E183")]
            #[error("{object}: {what} needs format features {needed:?} of {format:?}, but the device gives it {found:?}; use a format that has them (vkGetPhysicalDeviceFormatProperties lists them per format)")]
            FormatFeature {
                object: String,
                format: vk::Format,
                needed: vk::FormatFeatureFlags,
                found: vk::FormatFeatureFlags,
                what: &'static str,
            },

            /// A buffer view Vulkan would reject: an offset not a multiple of
            /// `minTexelBufferOffsetAlignment`, a range outside the buffer, not a whole
            /// number of texels or beyond `maxTexelBufferElements`
            /// (VUID-VkBufferViewCreateInfo-offset-00926, -range-00928 … -00931).
            #[code("KILN-E167")]
            #[error("buffer view of `{object}`: {detail}")]
            InvalidBufferView { object: String, detail: String },

            // ------------------------------------------------------------ E170–E179 acceleration structures
            /// An acceleration structure description or build Vulkan would reject: a vertex
            /// format without ACCELERATION_STRUCTURE_VERTEX_BUFFER in its buffer features
            /// (VUID-VkAccelerationStructureGeometryTrianglesDataKHR-vertexFormat-03797), a
            /// stride or offset not a multiple of the component or index size (-vertexStride-03735,
            /// VUID-vkCmdBuildAccelerationStructuresKHR-pInfos-03711, -03712), vertices or indices
            /// beyond their buffer, an index type other than UINT16/UINT32 (-indexType-03798),
            /// both PREFER_FAST_TRACE and PREFER_FAST_BUILD
            /// (VUID-VkAccelerationStructureBuildGeometryInfoKHR-flags-03796), an instance of a
            /// top-level structure or with a custom index or record offset beyond 24 bits, one
            /// structure built twice by one command (VUID-vkCmdBuildAccelerationStructuresKHR-dstAccelerationStructure-03698),
            /// a top-level build whose bottom-level structures were never built.
            #[code("KILN-E170")]
            #[error("acceleration structure `{object}`: {detail}")]
            AccelerationStructureInput { object: String, detail: String },

            /// An acceleration structure with more geometries, triangles or instances than the
            /// device allows (`maxGeometryCount`, `maxPrimitiveCount`, `maxInstanceCount` of
            /// VkPhysicalDeviceAccelerationStructurePropertiesKHR;
            /// VUID-VkAccelerationStructureBuildGeometryInfoKHR-type-03793, -03794, -03795).
            #[code("KILN-E171")]
            #[error("acceleration structure `{object}` has {count} {what}, beyond {limit} ({name}) of device `{device}`; split it into several structures")]
            AccelerationStructureLimit {
                object: String,
                count: u64,
                what: &'static str,
                limit: u64,
                name: &'static str,
                device: String,
            },

            /// A sampler description Vulkan would reject (VUID-VkSamplerCreateInfo-*).
            #[code("KILN-E190")]
            #[error("sampler: {detail}")]
            InvalidSampler { detail: String },
        }
    };
}
