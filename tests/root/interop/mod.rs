//! Compute beside other code (issue 28): explicit dependencies between submissions on any
//! queue and host waits with a deadline (`dependencies`); buffers and timeline semaphores
//! shared by fd between two kiln devices (`external`), images too (`external_image`), and
//! with CUDA on the H200 (`cuda`: `KILN_REQUIRE_CUDA=1` makes a missing CUDA driver a
//! failure); several devices side by side (`devices`) and copies between them (`between`:
//! `KILN_REQUIRE_GPUS=2` makes a missing second GPU a failure); compute pipelines compiled
//! in the background (`background`), graphics ones and hot reload on the same pool
//! (`background_graphics`).

mod background;
mod background_graphics;
mod between;
mod cuda;
mod dependencies;
mod devices;
mod external;
mod external_image;
