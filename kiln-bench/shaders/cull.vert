#version 450
// `kiln bench` GPU-driven frame: the quad of instance gl_VertexIndex / 4 (the culling
// pass's vertexOffset is 4 * instance; indices 0..3 pick the corner).
layout(set = 0, binding = 0) readonly buffer Instances {
    vec4 instances[];
};

void main() {
    uint i = uint(gl_VertexIndex) >> 2;
    uint c = uint(gl_VertexIndex) & 3u;
    vec4 s = instances[i];
    vec2 corner = vec2(float(c & 1u), float(c >> 1)) * 2.0 - 1.0;
    gl_Position = vec4(s.xy + corner * s.w, 0.0, 1.0);
}
