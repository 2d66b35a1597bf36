//! Code the examples share with the tests: GEMM on the tiled and cooperative-matrix paths
//! (`gemm`, its workgroup-scope kernels in `gemm_wg`: `examples/gemm.rs` and the `gemm`
//! tests) and the cooperative-matrix ceiling
//! (`coopmat_peak`: `gemm --peak`), the seed scene (`scene`, rendered offscreen by
//! `material_scene` and the golden-image test), the glTF scene (`gltf_scene`: the loader,
//! `gltf_render`: culling, shadow map, MSAA, `gltf_window`: in a window; the `scene_gltf`
//! example and tests), the chunked stream over three queues
//! (`stream`: the `stream_overlap` example and the `queues` tests) and the scene in a window
//! (`window_app`, feature `window`: the `window` example and the window test under Xvfb). The examples
//! themselves are this package's `[[example]]` targets (`cargo run -p kiln-examples
//! --example vector_add`).

#[path = "common/coopmat_peak.rs"]
pub mod coopmat_peak;
#[path = "common/gemm.rs"]
pub mod gemm;
#[path = "common/gemm_stats.rs"]
pub mod gemm_stats;
#[path = "common/gemm_wg.rs"]
pub mod gemm_wg;
#[path = "common/gltf_render.rs"]
pub mod gltf_render;
#[path = "common/gltf_scene.rs"]
pub mod gltf_scene;
#[cfg(feature = "window")]
#[path = "common/gltf_window.rs"]
pub mod gltf_window;
#[path = "common/scene.rs"]
pub mod scene;
#[path = "common/stream.rs"]
pub mod stream;
#[cfg(feature = "window")]
#[path = "common/window_app.rs"]
pub mod window_app;
