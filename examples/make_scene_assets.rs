//! Writes the glTF 2.0 scene that `scene_gltf` renders: `examples/assets/scene.gltf`, its
//! buffer `scene.bin` and six 128×128 PNG textures, all made here in code (no downloads).
//!
//! The scene: a tiled ground plane, crates (a cube mesh; two of them children of a `stack`
//! node), balls (a UV sphere whose accessors two meshes share with different materials) and
//! pillars (a cylinder), some of them behind the camera or beside the ground so that the
//! renderer's culling pass has something to drop. Every primitive has POSITION, NORMAL,
//! TANGENT and TEXCOORD_0 and 16-bit indices; every material a base-colour and a normal
//! texture (procedural: tiles with grout, wooden planks, a dimpled surface, each normal map
//! derived from a height field).
//!
//! The JSON is written with serde_json and read back through the `gltf` crate (which
//! validates it) before anything is written. Run:
//! `cargo run -p kiln-examples --example make_scene_assets [-- OUT_DIR]`
//! (default `examples/assets`); the output is deterministic.

use std::path::PathBuf;

use serde_json::{json, Value};

/// Texture edge in texels (every texture of the scene has this size).
const TEX: u32 = 128;

/// One primitive's vertex streams and indices.
#[derive(Default)]
struct MeshData {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    tangents: Vec<[f32; 4]>,
    uvs: Vec<[f32; 2]>,
    indices: Vec<u16>,
}

impl MeshData {
    /// Adds a vertex; the tangent's w makes cross(normal, tangent) * w point along -v (glTF:
    /// the normal map's green channel points up the image, towards decreasing v).
    fn vertex(&mut self, p: [f32; 3], n: [f32; 3], t: [f32; 3], dpdv: [f32; 3], uv: [f32; 2]) {
        let b = cross(n, t);
        let w = if dot(b, dpdv) > 0.0 { -1.0 } else { 1.0 };
        self.positions.push(p);
        self.normals.push(n);
        self.tangents.push([t[0], t[1], t[2], w]);
        self.uvs.push(uv);
    }

    fn base(&self) -> u16 {
        self.positions.len() as u16
    }
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// A square of `size` on y = 0 facing +y, its uv repeating `repeat` times.
fn plane(size: f32, repeat: f32) -> MeshData {
    let mut m = MeshData::default();
    let h = size / 2.0;
    for (x, z) in [(-h, -h), (-h, h), (h, h), (h, -h)] {
        let uv = [(x + h) / size * repeat, (z + h) / size * repeat];
        m.vertex(
            [x, 0.0, z],
            [0.0, 1.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0],
            uv,
        );
    }
    m.indices.extend_from_slice(&[0, 1, 2, 0, 2, 3]);
    m
}

/// A unit cube centred on the origin, 4 vertices per face, uv 0..1 per face.
fn cube() -> MeshData {
    let mut m = MeshData::default();
    // (normal, u axis, v axis): v × u = normal, so the faces wind counter-clockwise.
    let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, -1.0, 0.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]),
        ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]),
        ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]),
    ];
    for (n, u, v) in faces {
        let base = m.base();
        for (su, sv) in [(-1.0, -1.0), (-1.0, 1.0), (1.0, 1.0), (1.0, -1.0)] {
            let p = std::array::from_fn(|i| 0.5 * (n[i] + u[i] * su + v[i] * sv));
            m.vertex(p, n, u, v, [(su + 1.0) / 2.0, (sv + 1.0) / 2.0]);
        }
        m.indices
            .extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    m
}

/// A UV sphere of `radius`: `slices` around, `stacks` from pole to pole.
fn sphere(radius: f32, slices: u16, stacks: u16) -> MeshData {
    let mut m = MeshData::default();
    let tau = std::f32::consts::TAU;
    for j in 0..=stacks {
        let v = j as f32 / stacks as f32;
        let theta = v * std::f32::consts::PI; // from +y down
        let (st, ct) = theta.sin_cos();
        for i in 0..=slices {
            let u = i as f32 / slices as f32;
            let (sp, cp) = (u * tau).sin_cos();
            let n = [st * cp, ct, -st * sp];
            let t = [-sp, 0.0, -cp]; // d/du
            let dpdv = [ct * cp, -st, -ct * sp];
            m.vertex(n.map(|c| c * radius), n, t, dpdv, [u * 2.0, v]);
        }
    }
    let row = slices + 1;
    for j in 0..stacks {
        for i in 0..slices {
            let a = j * row + i;
            let (b, c, d) = (a + row, a + row + 1, a + 1);
            m.indices.extend_from_slice(&[a, b, c, a, c, d]);
        }
    }
    m
}

/// A cylinder on y = 0..height, with caps.
fn cylinder(radius: f32, height: f32, slices: u16) -> MeshData {
    let mut m = MeshData::default();
    let tau = std::f32::consts::TAU;
    for i in 0..=slices {
        let u = i as f32 / slices as f32;
        let (sp, cp) = (u * tau).sin_cos();
        let n = [cp, 0.0, -sp];
        let t = [-sp, 0.0, -cp];
        for (y, v) in [(height, 0.0), (0.0, 1.0)] {
            m.vertex(
                [radius * cp, y, -radius * sp],
                n,
                t,
                [0.0, -1.0, 0.0],
                [u * 3.0, v * 2.0],
            );
        }
    }
    for i in 0..slices {
        let a = i * 2;
        m.indices
            .extend_from_slice(&[a, a + 1, a + 3, a, a + 3, a + 2]);
    }
    for (y, ny) in [(height, 1.0f32), (0.0, -1.0)] {
        let centre = m.base();
        m.vertex(
            [0.0, y, 0.0],
            [0.0, ny, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 0.0, ny],
            [0.5, 0.5],
        );
        for i in 0..=slices {
            let (sp, cp) = (i as f32 / slices as f32 * tau).sin_cos();
            m.vertex(
                [radius * cp, y, -radius * sp],
                [0.0, ny, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 0.0, ny],
                [0.5 + 0.5 * cp, 0.5 - 0.5 * sp * ny],
            );
        }
        for i in 0..slices {
            let (a, b) = (centre + 1 + i, centre + 2 + i);
            if ny > 0.0 {
                m.indices.extend_from_slice(&[centre, a, b]);
            } else {
                m.indices.extend_from_slice(&[centre, b, a]);
            }
        }
    }
    m
}

/// A deterministic hash of two integers to 0..1.
fn hash(x: u32, y: u32) -> f32 {
    let mut h = x.wrapping_mul(0x9E37_79B1) ^ y.wrapping_mul(0x85EB_CA77);
    h ^= h >> 15;
    h = h.wrapping_mul(0x2C1B_3C6D);
    h ^= h >> 12;
    (h & 0xFFFF) as f32 / 65535.0
}

/// An RGB texture from `f(x, y) -> [0..1; 3]`.
fn texture(f: impl Fn(u32, u32) -> [f32; 3]) -> image::RgbImage {
    image::RgbImage::from_fn(TEX, TEX, |x, y| {
        image::Rgb(f(x, y).map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8))
    })
}

/// A tangent-space normal map of a tiling height field (glTF's convention: +x right, +y
/// up the image).
fn normal_map(strength: f32, height: impl Fn(u32, u32) -> f32) -> image::RgbImage {
    let at = |x: i64, y: i64| {
        let w = |c: i64| c.rem_euclid(TEX as i64) as u32;
        height(w(x), w(y))
    };
    texture(|x, y| {
        let (x, y) = (x as i64, y as i64);
        let dx = (at(x + 1, y) - at(x - 1, y)) * strength;
        let dy = (at(x, y + 1) - at(x, y - 1)) * strength;
        // Height rising to the right tilts the normal left; rising down the image (+v)
        // tilts it up the image (+y).
        let n = [-dx, dy, 1.0];
        let l = dot(n, n).sqrt();
        n.map(|c| c / l * 0.5 + 0.5)
    })
}

/// Height of the ground tiles: 1 on a tile, 0 in the grout, with a bevelled edge.
fn tile_height(x: u32, y: u32) -> f32 {
    let edge = |c: u32| {
        let d = (c % 32).min(31 - c % 32) as f32;
        ((d - 1.0) / 3.0).clamp(0.0, 1.0)
    };
    edge(x).min(edge(y))
}

/// Height of the crate's planks: four planks with grooves between them and a frame.
fn plank_height(x: u32, y: u32) -> f32 {
    let frame = x.min(TEX - 1 - x).min(y).min(TEX - 1 - y);
    if frame < 12 {
        return if frame < 2 { 0.5 } else { 1.0 };
    }
    let d = (y % 26).min(25 - y % 26) as f32;
    0.6 + 0.4 * ((d - 0.5) / 2.0).clamp(0.0, 1.0)
}

/// Height of the dimpled surface: 8×8 round dimples per texture.
fn dimple_height(x: u32, y: u32) -> f32 {
    let c = |v: u32| (v % 16) as f32 + 0.5 - 8.0;
    let r2 = c(x) * c(x) + c(y) * c(y);
    if r2 < 36.0 {
        (r2 / 36.0).sqrt()
    } else {
        1.0
    }
}

fn textures() -> Vec<(&'static str, image::RgbImage)> {
    let tiles = texture(|x, y| {
        let h = tile_height(x, y);
        let tint = 0.62 + 0.12 * hash(x / 32, y / 32);
        let grain = 0.03 * hash(x / 2, y / 2);
        let g = 0.25 + (tint + grain - 0.25) * h;
        [g * 1.0, g * 0.93, g * 0.82]
    });
    let crate_ = texture(|x, y| {
        let frame = x.min(TEX - 1 - x).min(y).min(TEX - 1 - y) < 12;
        let wave = (y as f32 * 0.7 + (x as f32 * 0.09).sin() * 2.5).sin();
        let plank = hash(y / 26, 7);
        let base = if frame { 0.42 } else { 0.55 + 0.1 * plank };
        // Darker in the grooves between the planks.
        let g = (base + 0.06 * wave) * (0.6 + 0.4 * plank_height(x, y));
        [g, g * 0.7, g * 0.42]
    });
    let dimpled = texture(|x, y| {
        let band = ((x / 16 + y / 16) % 2) as f32;
        let g = 0.86 + 0.1 * band;
        [g, g, g]
    });
    vec![
        ("tiles_color.png", tiles),
        ("tiles_normal.png", normal_map(2.0, tile_height)),
        ("crate_color.png", crate_),
        ("crate_normal.png", normal_map(2.0, plank_height)),
        ("dimpled_color.png", dimpled),
        ("dimpled_normal.png", normal_map(1.2, dimple_height)),
    ]
}

/// The binary buffer and the accessors/buffer views describing it.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Bin {
    /// Appends `data` as a buffer view and an accessor of `type_`; returns the accessor.
    fn push<T: bytemuck::Pod>(
        &mut self,
        data: &[T],
        type_: &str,
        component: u32,
        minmax: bool,
    ) -> usize {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(bytemuck::cast_slice(data));
        let target = if component == 5123 { 34963 } else { 34962 };
        self.views.push(json!({
            "buffer": 0,
            "byteOffset": offset,
            "byteLength": std::mem::size_of_val(data),
            "target": target,
        }));
        let mut acc = json!({
            "bufferView": self.views.len() - 1,
            "componentType": component,
            "count": data.len(),
            "type": type_,
        });
        if minmax {
            // POSITION accessors must carry their bounds (glTF 2.0 §5.1.1).
            let floats: &[[f32; 3]] = bytemuck::cast_slice(data);
            let min: [f32; 3] =
                std::array::from_fn(|i| floats.iter().map(|p| p[i]).fold(f32::MAX, f32::min));
            let max: [f32; 3] =
                std::array::from_fn(|i| floats.iter().map(|p| p[i]).fold(f32::MIN, f32::max));
            acc["min"] = json!(min);
            acc["max"] = json!(max);
        }
        self.accessors.push(acc);
        self.accessors.len() - 1
    }

    /// The attributes and indices of `m`: (attributes object, indices accessor).
    fn mesh(&mut self, m: &MeshData) -> (Value, usize) {
        let attributes = json!({
            "POSITION": self.push(&m.positions, "VEC3", 5126, true),
            "NORMAL": self.push(&m.normals, "VEC3", 5126, false),
            "TANGENT": self.push(&m.tangents, "VEC4", 5126, false),
            "TEXCOORD_0": self.push(&m.uvs, "VEC2", 5126, false),
        });
        (attributes, self.push(&m.indices, "SCALAR", 5123, false))
    }
}

/// A rotation of `degrees` about +y as a glTF quaternion (x, y, z, w).
fn yaw(degrees: f32) -> [f32; 4] {
    let (s, c) = (degrees.to_radians() / 2.0).sin_cos();
    [0.0, s, 0.0, c]
}

fn node(name: &str, mesh: usize, t: [f32; 3], degrees: f32, scale: f32) -> Value {
    json!({
        "name": name,
        "mesh": mesh,
        "translation": t,
        "rotation": yaw(degrees),
        "scale": [scale, scale, scale],
    })
}

fn document(bin: &mut Bin, bin_name: &str, images: &[&str]) -> Value {
    let (ground, ground_idx) = bin.mesh(&plane(16.0, 8.0));
    let (cube_attr, cube_idx) = bin.mesh(&cube());
    let (ball_attr, ball_idx) = bin.mesh(&sphere(0.5, 32, 16));
    let (pillar_attr, pillar_idx) = bin.mesh(&cylinder(0.35, 1.6, 24));
    let prim = |attr: &Value, idx: usize, material: usize| json!({ "attributes": attr, "indices": idx, "material": material, "mode": 4 });
    let meshes = json!([
        { "name": "ground", "primitives": [prim(&ground, ground_idx, 0)] },
        { "name": "crate", "primitives": [prim(&cube_attr, cube_idx, 1)] },
        { "name": "ball_red", "primitives": [prim(&ball_attr, ball_idx, 2)] },
        { "name": "ball_teal", "primitives": [prim(&ball_attr, ball_idx, 3)] },
        { "name": "pillar", "primitives": [prim(&pillar_attr, pillar_idx, 4)] },
    ]);
    let material = |name: &str, color: usize, normal: usize, factor: [f32; 4], scale: f32| {
        json!({
            "name": name,
            "pbrMetallicRoughness": {
                "baseColorTexture": { "index": color },
                "baseColorFactor": factor,
                "metallicFactor": 0.0,
                "roughnessFactor": 0.6,
            },
            "normalTexture": { "index": normal, "scale": scale },
        })
    };
    let materials = json!([
        material("tiles", 0, 1, [1.0, 1.0, 1.0, 1.0], 1.0),
        material("crate", 2, 3, [1.0, 1.0, 1.0, 1.0], 1.0),
        material("ball_red", 4, 5, [0.85, 0.16, 0.12, 1.0], 1.0),
        material("ball_teal", 4, 5, [0.12, 0.62, 0.66, 1.0], 1.0),
        material("gold", 4, 5, [0.95, 0.68, 0.22, 1.0], 0.6),
    ]);
    // Nodes 0..: the scene's roots; `stack` (a parent) holds two crates.
    let mut nodes = vec![
        node("ground", 0, [0.0, 0.0, 0.0], 0.0, 1.0),
        node("crate_a", 1, [-1.7, 0.5, 0.3], 20.0, 1.0),
        json!({ "name": "stack", "translation": [1.5, 0.0, -1.3], "rotation": yaw(-15.0), "children": [10, 11] }),
        node("ball_red", 2, [0.3, 0.6, 1.3], 0.0, 1.2),
        node("ball_teal_a", 3, [-0.5, 0.35, -1.7], 30.0, 0.7),
        node("ball_teal_b", 3, [2.6, 0.4, 1.1], 0.0, 0.8),
        node("pillar_a", 4, [-2.9, 0.0, -2.4], 0.0, 1.0),
        node("pillar_b", 4, [3.2, 0.0, -3.1], 0.0, 1.0),
        // Behind the camera, on the ground: culled for the camera, casts a shadow.
        node("crate_behind", 1, [-3.0, 0.5, 7.6], 10.0, 1.0),
    ];
    // Far beside the ground: outside the camera's frustum and the light's box.
    nodes.push(node("pillar_far", 4, [-15.0, 0.0, -2.0], 0.0, 1.0));
    nodes.push(node("stack_low", 1, [0.0, 0.4, 0.0], 0.0, 0.8));
    nodes.push(node("stack_high", 1, [0.1, 1.2, 0.05], 30.0, 0.8));
    let roots: Vec<usize> = (0..10).collect();
    json!({
        "asset": { "version": "2.0", "generator": "kiln examples/make_scene_assets.rs" },
        "scene": 0,
        "scenes": [{ "name": "scene", "nodes": roots }],
        "nodes": nodes,
        "meshes": meshes,
        "materials": materials,
        "textures": (0..images.len()).map(|i| json!({ "source": i, "sampler": 0 })).collect::<Vec<_>>(),
        "samplers": [{ "magFilter": 9729, "minFilter": 9987, "wrapS": 10497, "wrapT": 10497 }],
        "images": images.iter().map(|n| json!({ "uri": n })).collect::<Vec<_>>(),
        "buffers": [{ "uri": bin_name, "byteLength": bin.bytes.len() }],
        "bufferViews": bin.views,
        "accessors": bin.accessors,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out: PathBuf = std::env::args()
        .nth(1)
        .map(Into::into)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets"));
    std::fs::create_dir_all(&out)?;
    let textures = textures();
    let names: Vec<&str> = textures.iter().map(|(n, _)| *n).collect();
    let mut bin = Bin::default();
    let doc = document(&mut bin, "scene.bin", &names);
    let text = serde_json::to_string_pretty(&doc)?;
    // Read back through the gltf crate, which validates the document (indices in range,
    // required fields, accessor types) before anything is written.
    let parsed = gltf::Gltf::from_slice(text.as_bytes())?;
    let meshes = parsed.meshes().count();
    let nodes = parsed.nodes().count();
    std::fs::write(out.join("scene.gltf"), text + "\n")?;
    std::fs::write(out.join("scene.bin"), &bin.bytes)?;
    let mut total = bin.bytes.len() as u64;
    for (name, img) in &textures {
        let path = out.join(name);
        img.save(&path)?;
        total += std::fs::metadata(&path)?.len();
    }
    total += std::fs::metadata(out.join("scene.gltf"))?.len();
    println!(
        "wrote {}: scene.gltf ({meshes} meshes, {nodes} nodes), scene.bin ({} bytes), {} PNGs; {total} bytes in all",
        out.display(),
        bin.bytes.len(),
        textures.len()
    );
    Ok(())
}
