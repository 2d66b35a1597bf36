#version 450
// 40 storage buffers in one stage (lavapipe allows 32 per stage).
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer B { uint x; } bufs[40];
void main() { bufs[39].x = bufs[0].x; }
