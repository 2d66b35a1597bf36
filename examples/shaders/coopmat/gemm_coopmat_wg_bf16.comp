// kiln: prebuilt
// The bf16 variant of gemm_coopmat_wg.comp (A and B bfloat16, C fp32): that module with its 16-bit
// float type re-encoded as bfloat16 (SPV_KHR_bfloat16) by scripts/spv_bf16.py, run from
// scripts/build_coopmat_spv.sh. No glslang here knows GL_EXT_bfloat16, so there is no GLSL
// source of its own; kiln-build copies gemm_coopmat_wg_bf16.comp.spv.
