//! A glTF 2.0 scene read with the `gltf` crate into what the renderer
//! (`gltf_render.rs`) uploads: one interleaved vertex array and one index array for every
//! primitive (primitives that share accessors share their data), one object per (node,
//! primitive) with its world matrix and world-space bounding sphere, the materials, and
//! the base-colour and normal images as layers of two texture arrays.
//!
//! Files are found through a resolver (`uri -> bytes`): [`load_dir`] reads them beside the
//! `.gltf` file, [`load_embedded`] takes the copy of `examples/assets/` compiled into the
//! crate (what the tests render: no file of the build machine is read at run time).
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;

use super::scene::{mul, Mat4};

/// Edge of every texture layer in texels: images of other sizes are resized to it.
pub const LAYER_SIZE: u32 = 128;

/// The vertex of every primitive (48 bytes; `scene.vert`'s inputs 0..3).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Vertex {
    pub position: [f32; 3],
    pub normal: [f32; 3],
    /// xyz along +u; w: the bitangent's sign (glTF's TANGENT).
    pub tangent: [f32; 4],
    pub uv: [f32; 2],
}

/// One object of `frame.glsl` (std430, 96 bytes): an indexed draw with its transform.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Object {
    pub model: Mat4,
    /// World-space bounding sphere: centre, radius.
    pub sphere: [f32; 4],
    pub index_count: u32,
    pub first_index: u32,
    pub vertex_offset: i32,
    pub material: u32,
}

/// One material of `scene.frag` (std430, 32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Material {
    pub base_color: [f32; 4],
    pub base_layer: u32,
    pub normal_layer: u32,
    pub normal_scale: f32,
    pub specular: f32,
}

/// A loaded scene, ready to upload.
pub struct SceneData {
    pub vertices: Vec<Vertex>,
    pub indices: Vec<u32>,
    pub objects: Vec<Object>,
    /// The node name of each object.
    pub names: Vec<String>,
    pub materials: Vec<Material>,
    /// RGBA8 layers of `LAYER_SIZE`², sRGB-encoded base colours (a white layer for
    /// materials without a base-colour texture).
    pub base_layers: Vec<Vec<u8>>,
    /// RGBA8 layers of `LAYER_SIZE`², tangent-space normals (a flat layer for materials
    /// without a normal texture).
    pub normal_layers: Vec<Vec<u8>>,
}

pub type LoadError = Box<dyn std::error::Error + Send + Sync>;

/// The scene under `examples/assets/` as compiled into this crate.
pub fn load_embedded() -> Result<SceneData, LoadError> {
    const FILES: [(&str, &[u8]); 8] = [
        ("scene.bin", include_bytes!("../assets/scene.bin")),
        (
            "tiles_color.png",
            include_bytes!("../assets/tiles_color.png"),
        ),
        (
            "tiles_normal.png",
            include_bytes!("../assets/tiles_normal.png"),
        ),
        (
            "crate_color.png",
            include_bytes!("../assets/crate_color.png"),
        ),
        (
            "crate_normal.png",
            include_bytes!("../assets/crate_normal.png"),
        ),
        (
            "dimpled_color.png",
            include_bytes!("../assets/dimpled_color.png"),
        ),
        (
            "dimpled_normal.png",
            include_bytes!("../assets/dimpled_normal.png"),
        ),
        ("scene.gltf", include_bytes!("../assets/scene.gltf")),
    ];
    let gltf = FILES[7].1;
    load(gltf, |uri| {
        FILES
            .iter()
            .find(|(n, _)| *n == uri)
            .map(|(_, b)| b.to_vec())
            .ok_or_else(|| format!("`{uri}` is not one of the embedded assets").into())
    })
}

/// The `.gltf` file at `path`, its buffers and images read from its folder.
pub fn load_dir(path: &Path) -> Result<SceneData, LoadError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let gltf = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    load(&gltf, |uri| {
        let p = dir.join(uri);
        std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()).into())
    })
}

/// Geometry already appended for a (POSITION accessor, indices accessor) pair.
#[derive(Clone, Copy)]
struct Geometry {
    first_index: u32,
    index_count: u32,
    vertex_offset: i32,
    /// Local bounding sphere (from the POSITION accessor's bounds).
    sphere: [f32; 4],
}

/// Reads a glTF document (`.gltf` JSON or `.glb`), resolving external files with `resolve`.
pub fn load(
    bytes: &[u8],
    resolve: impl Fn(&str) -> Result<Vec<u8>, LoadError>,
) -> Result<SceneData, LoadError> {
    let gltf = gltf::Gltf::from_slice(bytes)?;
    let mut buffers = Vec::new();
    for b in gltf.buffers() {
        let data = match b.source() {
            gltf::buffer::Source::Uri(uri) => resolve(uri)?,
            gltf::buffer::Source::Bin => gltf.blob.clone().ok_or("a .glb without its BIN chunk")?,
        };
        if data.len() < b.length() {
            return Err(format!(
                "buffer {} has {} bytes, not {}",
                b.index(),
                data.len(),
                b.length()
            )
            .into());
        }
        buffers.push(data);
    }
    let mut out = SceneData {
        vertices: Vec::new(),
        indices: Vec::new(),
        objects: Vec::new(),
        names: Vec::new(),
        materials: Vec::new(),
        base_layers: Vec::new(),
        normal_layers: Vec::new(),
    };
    layers_and_materials(&gltf, &resolve, &mut out)?;
    let scene = gltf
        .default_scene()
        .or_else(|| gltf.scenes().next())
        .ok_or("the document has no scene")?;
    let mut geometry = HashMap::new();
    let identity = [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ];
    let mut stack: Vec<(gltf::Node, Mat4)> = scene.nodes().map(|n| (n, identity)).collect();
    stack.reverse();
    while let Some((node, parent)) = stack.pop() {
        let world = mul(&parent, &node.transform().matrix());
        if let Some(mesh) = node.mesh() {
            for p in mesh.primitives() {
                let g = primitive(&p, &buffers, &mut geometry, &mut out)?;
                out.objects.push(Object {
                    model: world,
                    sphere: world_sphere(&world, g.sphere),
                    index_count: g.index_count,
                    first_index: g.first_index,
                    vertex_offset: g.vertex_offset,
                    // Primitives without a material use the default one, the last.
                    material: p
                        .material()
                        .index()
                        .map_or(out.materials.len() as u32 - 1, |i| i as u32),
                });
                out.names.push(node.name().unwrap_or("").to_string());
            }
        }
        let children: Vec<_> = node.children().map(|c| (c, world)).collect();
        stack.extend(children.into_iter().rev());
    }
    if out.objects.is_empty() {
        return Err("the scene draws nothing (no node with a mesh)".into());
    }
    Ok(out)
}

/// Appends the primitive's geometry (once per pair of accessors).
fn primitive(
    p: &gltf::Primitive,
    buffers: &[Vec<u8>],
    cache: &mut HashMap<(usize, Option<usize>), Geometry>,
    out: &mut SceneData,
) -> Result<Geometry, LoadError> {
    if p.mode() != gltf::mesh::Mode::Triangles {
        return Err(format!(
            "primitive mode {:?}: only triangle lists are drawn",
            p.mode()
        )
        .into());
    }
    let pos = p
        .get(&gltf::Semantic::Positions)
        .ok_or("a primitive without POSITION")?;
    let key = (pos.index(), p.indices().map(|a| a.index()));
    if let Some(g) = cache.get(&key) {
        return Ok(*g);
    }
    let reader = p.reader(|b| buffers.get(b.index()).map(|d| d.as_slice()));
    let positions: Vec<[f32; 3]> = reader
        .read_positions()
        .ok_or("unreadable POSITION")?
        .collect();
    let normals: Vec<[f32; 3]> = match reader.read_normals() {
        Some(n) => n.collect(),
        None => return Err("a primitive without NORMAL (flat normals are not generated)".into()),
    };
    let uvs: Vec<[f32; 2]> = match reader.read_tex_coords(0) {
        Some(t) => t.into_f32().collect(),
        None => vec![[0.0; 2]; positions.len()],
    };
    let tangents: Vec<[f32; 4]> = match reader.read_tangents() {
        Some(t) => t.collect(),
        // Any tangent perpendicular to the normal: the normal map tilts along it.
        None => normals
            .iter()
            .map(|n| {
                if n[0].abs() < 0.9 {
                    [0.0, -n[2], n[1], 1.0]
                } else {
                    [n[2], 0.0, -n[0], 1.0]
                }
            })
            .collect(),
    };
    if normals.len() != positions.len()
        || uvs.len() != positions.len()
        || tangents.len() != positions.len()
    {
        return Err("a primitive whose attributes differ in count".into());
    }
    let indices: Vec<u32> = match reader.read_indices() {
        Some(i) => i.into_u32().collect(),
        None => (0..positions.len() as u32).collect(),
    };
    if let Some(bad) = indices.iter().find(|&&i| i as usize >= positions.len()) {
        return Err(format!(
            "index {bad} past the primitive's {} vertices",
            positions.len()
        )
        .into());
    }
    let bb = p.bounding_box();
    let centre: [f32; 3] = std::array::from_fn(|i| (bb.min[i] + bb.max[i]) / 2.0);
    let half: [f32; 3] = std::array::from_fn(|i| (bb.max[i] - bb.min[i]) / 2.0);
    let g = Geometry {
        first_index: out.indices.len() as u32,
        index_count: indices.len() as u32,
        vertex_offset: i32::try_from(out.vertices.len())?,
        sphere: [
            centre[0],
            centre[1],
            centre[2],
            half.iter().map(|h| h * h).sum::<f32>().sqrt(),
        ],
    };
    for i in 0..positions.len() {
        out.vertices.push(Vertex {
            position: positions[i],
            normal: normals[i],
            tangent: tangents[i],
            uv: uvs[i],
        });
    }
    out.indices.extend_from_slice(&indices);
    cache.insert(key, g);
    Ok(g)
}

/// `sphere` (local) through `m`: the centre transformed, the radius scaled by the largest
/// axis scale.
pub fn world_sphere(m: &Mat4, s: [f32; 4]) -> [f32; 4] {
    let c: [f32; 3] =
        std::array::from_fn(|r| m[0][r] * s[0] + m[1][r] * s[1] + m[2][r] * s[2] + m[3][r]);
    let scale = (0..3)
        .map(|c| (m[c][0] * m[c][0] + m[c][1] * m[c][1] + m[c][2] * m[c][2]).sqrt())
        .fold(0.0f32, f32::max);
    [c[0], c[1], c[2], s[3] * scale]
}

/// Decodes an image of the document to an RGBA8 layer of `LAYER_SIZE`².
fn decode(
    image: gltf::Image,
    buffers_json: &gltf::Gltf,
    resolve: &impl Fn(&str) -> Result<Vec<u8>, LoadError>,
) -> Result<Vec<u8>, LoadError> {
    let bytes = match image.source() {
        gltf::image::Source::Uri { uri, .. } => resolve(uri)?,
        gltf::image::Source::View { view, .. } => {
            let blob = buffers_json
                .blob
                .as_ref()
                .ok_or("an image in a buffer view of a .gltf: use a .glb or a URI")?;
            blob.get(view.offset()..view.offset() + view.length())
                .ok_or("an image view past the BIN chunk")?
                .to_vec()
        }
    };
    let mut img = image::load_from_memory(&bytes)?.to_rgba8();
    if img.dimensions() != (LAYER_SIZE, LAYER_SIZE) {
        img = image::imageops::resize(
            &img,
            LAYER_SIZE,
            LAYER_SIZE,
            image::imageops::FilterType::Triangle,
        );
    }
    Ok(img.into_raw())
}

/// Fills the texture layers and the materials (plus a default material, last).
fn layers_and_materials(
    gltf: &gltf::Gltf,
    resolve: &impl Fn(&str) -> Result<Vec<u8>, LoadError>,
    out: &mut SceneData,
) -> Result<(), LoadError> {
    let texels = (LAYER_SIZE * LAYER_SIZE) as usize;
    let mut base_of: HashMap<usize, u32> = HashMap::new();
    let mut normal_of: HashMap<usize, u32> = HashMap::new();
    // Layer 0 of each array: white base colour, flat normal.
    out.base_layers.push([255u8; 4].repeat(texels));
    out.normal_layers
        .push([128u8, 128, 255, 255].repeat(texels));
    let layer = |image: gltf::Image,
                 map: &mut HashMap<usize, u32>,
                 layers: &mut Vec<Vec<u8>>|
     -> Result<u32, LoadError> {
        if let Some(l) = map.get(&image.index()) {
            return Ok(*l);
        }
        let l = layers.len() as u32;
        layers.push(decode(image.clone(), gltf, resolve)?);
        map.insert(image.index(), l);
        Ok(l)
    };
    for m in gltf.materials() {
        let pbr = m.pbr_metallic_roughness();
        let base_layer = match pbr.base_color_texture() {
            Some(t) => layer(t.texture().source(), &mut base_of, &mut out.base_layers)?,
            None => 0,
        };
        let (normal_layer, normal_scale) = match m.normal_texture() {
            Some(t) => (
                layer(t.texture().source(), &mut normal_of, &mut out.normal_layers)?,
                t.scale(),
            ),
            None => (0, 1.0),
        };
        out.materials.push(Material {
            base_color: pbr.base_color_factor(),
            base_layer,
            normal_layer,
            normal_scale,
            // Rougher surfaces, dimmer highlights.
            specular: 0.5 * (1.0 - pbr.roughness_factor()),
        });
    }
    out.materials.push(Material {
        base_color: [0.8, 0.8, 0.8, 1.0],
        base_layer: 0,
        normal_layer: 0,
        normal_scale: 1.0,
        specular: 0.1,
    });
    Ok(())
}
