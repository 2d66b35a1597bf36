#version 450
// Each invocation writes its workgroup id + 1 at its global index: which groups an
// (indirect) dispatch ran is visible in the bytes read back.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint v[]; } dst;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < uint(dst.v.length())) {
        dst.v[i] = gl_WorkGroupID.x + 1u;
    }
}
