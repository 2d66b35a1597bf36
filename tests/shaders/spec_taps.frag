#version 450
// Issue 30 for graphics: a fragment stage whose private array has TAPS elements
// (specialization constant 0, signed). TAPS 0 or below is refused before the driver
// (KILN-E064); TAPS 4 writes red 4 × 0.25 = 1.0.
layout(constant_id = 0) const int TAPS = 4;
layout(location = 0) out vec4 out_color;
void main() {
    float w[TAPS];
    for (int i = 0; i < TAPS; i++) w[i] = 0.25;
    float s = 0.0;
    for (int i = 0; i < TAPS; i++) s += w[i];
    out_color = vec4(s, 0.0, 0.0, 1.0);
}
