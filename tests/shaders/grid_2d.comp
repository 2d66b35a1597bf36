#version 450
// Writes y * width + x + 1 at element y * width + x for every invocation inside
// width × height (dispatch_threads_2d rounds up to 8×8 workgroups; the rest return).
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0) writeonly buffer Out { uint v[]; } dst;
layout(push_constant) uniform Size { uint width; uint height; } size;
void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x < size.width && p.y < size.height) {
        uint i = p.y * size.width + p.x;
        dst.v[i] = i + 1u;
    }
}
