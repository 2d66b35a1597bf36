// kiln: prebuilt
// The bf16 variant of gemm_coopmat_tensor (A and B bfloat16, C fp32): that module with its 16-bit
// float type re-encoded as bfloat16 (SPV_KHR_bfloat16) by scripts/spv_bf16.py, run from
// scripts/build_coopmat_spv.sh; kiln-build copies gemm_coopmat_tensor_bf16.comp.spv.
