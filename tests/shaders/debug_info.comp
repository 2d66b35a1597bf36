#version 460
// kiln: debug-info=nonsemantic
// Compiled with NonSemantic.Shader.DebugInfo.100 (kiln-build runs glslangValidator -gVS
// for this line): reflection skips the non-semantic instructions
// (tests/root/reflection/own.rs).
layout(local_size_x = 8, local_size_y = 2) in;
layout(set = 0, binding = 1) readonly buffer Src { float src[]; };
layout(set = 0, binding = 2) buffer Dst { float dst[]; };
layout(push_constant) uniform Push { float scale; uint count; };
struct Pair { float a; float b; };
float twice(Pair p) { return (p.a + p.b) * scale; }
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < count) {
        Pair p = Pair(src[i], src[i]);
        dst[i] = twice(p);
    }
}
