#version 450
// std140 block with the classic vec3 trap: v sits at offset 16, not 4.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform Padded { float x; vec3 v; float y; } padded;
layout(set = 0, binding = 1) buffer Out { float o[]; };
layout(push_constant) uniform Push { vec3 dir; float len; } pc;
void main() { o[0] = padded.x + padded.v.y + padded.y + pc.dir.x * pc.len; }
