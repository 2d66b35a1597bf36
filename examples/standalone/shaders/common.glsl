// Included by scale.comp: kiln-build tracks includes, so editing this file rebuilds.
float scaled(float x, float by) { return x * by; }
