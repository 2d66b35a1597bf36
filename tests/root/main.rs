//! kiln's integration tests in one binary, a module per subject (the shape of wgpu's
//! `tests/tests/root.rs`): one build and one link for all of them. Every GPU test runs on a
//! real Vulkan device (lavapipe in CI) under the Khronos validation layer with
//! synchronization validation on and fails on any message (`common::device`,
//! `common::assert_clean`).
//!
//! Tests that need a process of their own are this package's other binaries: `env` (they
//! set environment variables kiln reads), `no_driver` and `no_validation_layer` (they hide
//! the driver or the layer from the loader), `window` (it runs itself under `xvfb-run`).

mod acceleration_structures;
mod capabilities;
mod capture;
mod compressed;
mod compute;
mod descriptor_sets;
mod device_address;
mod dispatch;
mod dynamic_state;
mod errors;
mod executable_statistics;
mod first_hour;
mod gemm;
mod gpu_av;
mod graphics;
mod hot_reload;
mod images;
mod indirect_draws;
mod inline_uniform_blocks;
mod interop;
mod layouts;
mod lifetime;
mod local_read;
mod mesh_shading;
mod observe;
mod pipeline_state;
mod post_mortem;
mod profiling;
mod push_descriptors;
mod queues;
mod recording;
mod reflection;
mod reliability;
mod scene_gltf;
mod semaphores;
mod specialization;
mod subgroups;
mod tessellation_geometry;
mod texel_buffers;
mod threads;
mod transfer_edges;
mod transfers;
mod typed_bindings;
