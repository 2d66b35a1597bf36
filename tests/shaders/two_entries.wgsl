// Two entry points in one module (naga writes both into one SPIR-V module).
// `scale` uses bindings 0 and 1; `clear` uses binding 1 only.
struct Params { factor: f32, count: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> data: array<f32>;

@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < params.count) {
        data[id.x] = data[id.x] * params.factor;
    }
}

@compute @workgroup_size(32, 2)
fn clear(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < arrayLength(&data)) {
        data[id.x] = 0.0;
    }
}
