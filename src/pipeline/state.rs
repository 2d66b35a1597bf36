//! The fixed-function state of graphics pipelines: colour blending per attachment, the
//! depth test, the stencil test and depth bias (Vulkan spec §28 "Fragment Operations",
//! §29 "The Framebuffer"; `VkPipelineColorBlendStateCreateInfo`,
//! `VkPipelineDepthStencilStateCreateInfo`, `VkPipelineRasterizationStateCreateInfo`).
//! Each description checks itself against the pipeline's attachments and the device's
//! features; the error text is the detail of `KILN-E282`.

use ash::vk;

use crate::device::Features;

/// A colour blend equation (`VkPipelineColorBlendAttachmentState`'s factors and ops).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlendMode {
    /// No blending: the fragment replaces the attachment.
    #[default]
    Opaque,
    /// `src.rgb * src.a + dst.rgb * (1 - src.a)`.
    Alpha,
    /// `src.rgb + dst.rgb * (1 - src.a)`.
    Premultiplied,
    /// `src.rgb + dst.rgb`.
    Additive,
}

/// Depth test and write (used only when the pipeline has a depth format).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DepthState {
    /// Depth test on.
    pub test: bool,
    /// Depth writes on.
    pub write: bool,
    /// The depth comparison (LESS by default).
    pub compare: vk::CompareOp,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { DepthState {
    test: bool,
    write: bool,
    compare: vk::CompareOp,
} }

impl Default for DepthState {
    /// Test and write, LESS (clear depth to 1.0).
    fn default() -> Self {
        DepthState {
            test: true,
            write: true,
            compare: vk::CompareOp::LESS,
        }
    }
}

/// Blending and write mask of one colour attachment
/// ([`GraphicsPipelineDesc::color_blend`](super::GraphicsPipelineDesc::color_blend)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ColorBlendAttachment {
    /// The blend equation.
    pub blend: BlendMode,
    /// The components written (`colorWriteMask`; RGBA by default, empty to write none).
    pub write_mask: vk::ColorComponentFlags,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { ColorBlendAttachment {
    blend: BlendMode,
    write_mask: vk::ColorComponentFlags,
} }

impl Default for ColorBlendAttachment {
    /// Opaque, every component written.
    fn default() -> Self {
        ColorBlendAttachment {
            blend: BlendMode::Opaque,
            write_mask: vk::ColorComponentFlags::RGBA,
        }
    }
}

/// The stencil test (used only when the depth format has a stencil aspect): Vulkan's
/// per-face `VkStencilOpState`s. Their `reference` is ignored: the reference is dynamic
/// state, 0 at every `begin_rendering` and set by
/// [`Recorder::set_stencil_reference`](crate::Recorder::set_stencil_reference).
#[derive(Clone, Copy, Debug, Default)]
#[non_exhaustive]
pub struct StencilState {
    /// Stencil test on (off by default).
    pub test: bool,
    /// Operations for front-facing primitives.
    pub front: vk::StencilOpState,
    /// Operations for back-facing primitives.
    pub back: vk::StencilOpState,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { StencilState {
    test: bool,
    front: vk::StencilOpState,
    back: vk::StencilOpState,
} }

impl StencilState {
    /// The test on with `ops` for both faces.
    pub fn both(ops: vk::StencilOpState) -> Self {
        StencilState {
            test: true,
            front: ops,
            back: ops,
        }
    }
}

/// Depth bias (`depthBiasConstantFactor`, `depthBiasClamp`, `depthBiasSlopeFactor`), e.g.
/// against shadow acne in a shadow map's depth pass. A non-zero `clamp` needs the
/// `depthBiasClamp` feature.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct DepthBias {
    /// Constant depth added to each fragment.
    pub constant_factor: f32,
    /// The largest (or, negative, smallest) bias applied; 0 for no clamp.
    pub clamp: f32,
    /// Factor of the fragment's depth slope.
    pub slope_factor: f32,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { DepthBias {
    constant_factor: f32,
    clamp: f32,
    slope_factor: f32,
} }

/// The blend states of `count` colour attachments: `per` (one per attachment, in order) or,
/// when empty, `blend` with every component for each. Attachments that differ need
/// `independentBlend` (VUID-VkPipelineColorBlendStateCreateInfo-pAttachments-00605);
/// integer formats do not blend (VUID-VkGraphicsPipelineCreateInfo-renderPass-06041).
pub(crate) fn color_blend(
    blend: BlendMode,
    per: &[ColorBlendAttachment],
    formats: &[vk::Format],
    features: &Features,
) -> Result<Vec<vk::PipelineColorBlendAttachmentState>, String> {
    let all = ColorBlendAttachment {
        blend,
        ..Default::default()
    };
    if !per.is_empty() && per.len() != formats.len() {
        return Err(format!(
            "{} colour blend states for {} colour attachments; give one per attachment (or \
             none, for `blend` everywhere)",
            per.len(),
            formats.len()
        ));
    }
    if per.windows(2).any(|w| w[0] != w[1]) && !features.independent_blend {
        return Err(
            "attachments with different blend states need the independentBlend \
                    feature, which the device lacks (Features::independent_blend)"
                .into(),
        );
    }
    let mut out = Vec::with_capacity(formats.len());
    for (i, &format) in formats.iter().enumerate() {
        let a = per.get(i).copied().unwrap_or(all);
        let float = crate::device::format_info(format)
            .is_some_and(|f| f.class == crate::device::NumClass::Float);
        if a.blend != BlendMode::Opaque && !float {
            return Err(format!(
                "colour attachment {i} ({format:?}) is an integer format, which cannot blend; \
                 use BlendMode::Opaque for it"
            ));
        }
        out.push(blend_state(a.blend).color_write_mask(a.write_mask));
    }
    Ok(out)
}

/// The depth-stencil state for `depth_format`. Errors: a stencil test without a stencil
/// aspect in the depth format.
pub(crate) fn depth_stencil(
    depth: &DepthState,
    stencil: &StencilState,
    depth_format: Option<vk::Format>,
) -> Result<vk::PipelineDepthStencilStateCreateInfo<'static>, String> {
    let aspect = depth_format
        .and_then(crate::device::format_info)
        .map_or(vk::ImageAspectFlags::empty(), |f| f.aspect);
    let has_depth = aspect.contains(vk::ImageAspectFlags::DEPTH);
    let has_stencil = aspect.contains(vk::ImageAspectFlags::STENCIL);
    if stencil.test && !has_stencil {
        return Err(format!(
            "the stencil test needs a depth format with stencil (D24_UNORM_S8_UINT, \
             D32_SFLOAT_S8_UINT), not {depth_format:?}"
        ));
    }
    Ok(vk::PipelineDepthStencilStateCreateInfo::default()
        .depth_test_enable(has_depth && depth.test)
        .depth_write_enable(has_depth && depth.write)
        .depth_compare_op(depth.compare)
        .stencil_test_enable(stencil.test)
        .front(stencil.front)
        .back(stencil.back)
        .max_depth_bounds(1.0))
}

/// Checks a depth bias against the device. Errors: a clamp without `depthBiasClamp`
/// (VUID-VkGraphicsPipelineCreateInfo-pDynamicStates-00754).
pub(crate) fn check_depth_bias(bias: Option<DepthBias>, features: &Features) -> Result<(), String> {
    match bias {
        Some(b) if b.clamp != 0.0 && !features.depth_bias_clamp => Err(
            "a depth bias clamp needs the depthBiasClamp feature, which the device lacks \
             (Features::depth_bias_clamp); set clamp to 0"
                .into(),
        ),
        Some(b)
            if !(b.constant_factor.is_finite()
                && b.clamp.is_finite()
                && b.slope_factor.is_finite()) =>
        {
            Err(format!("depth bias {b:?} is not finite"))
        }
        _ => Ok(()),
    }
}

fn blend_state(mode: BlendMode) -> vk::PipelineColorBlendAttachmentState {
    use vk::BlendFactor as F;
    let base = vk::PipelineColorBlendAttachmentState::default()
        .color_write_mask(vk::ColorComponentFlags::RGBA)
        .color_blend_op(vk::BlendOp::ADD)
        .alpha_blend_op(vk::BlendOp::ADD);
    let (src, dst) = match mode {
        BlendMode::Opaque => return base.blend_enable(false),
        BlendMode::Alpha => (F::SRC_ALPHA, F::ONE_MINUS_SRC_ALPHA),
        BlendMode::Premultiplied => (F::ONE, F::ONE_MINUS_SRC_ALPHA),
        BlendMode::Additive => (F::ONE, F::ONE),
    };
    base.blend_enable(true)
        .src_color_blend_factor(src)
        .dst_color_blend_factor(dst)
        .src_alpha_blend_factor(F::ONE)
        .dst_alpha_blend_factor(F::ONE_MINUS_SRC_ALPHA)
}

/// The stencil attachment format of a depth attachment of `depth`: itself when it has a
/// stencil aspect (VUID-VkGraphicsPipelineCreateInfo-renderPass-06589 wants both formats
/// named for a combined depth-stencil attachment), else UNDEFINED.
pub(crate) fn stencil_format(depth: Option<vk::Format>) -> vk::Format {
    match depth.and_then(crate::device::format_info) {
        Some(f) if f.aspect.contains(vk::ImageAspectFlags::STENCIL) => depth.unwrap_or_default(),
        _ => vk::Format::UNDEFINED,
    }
}

/// The pipeline's sample count is one count the device's framebuffers allow for its
/// attachments (VUID-VkGraphicsPipelineCreateInfo-multisampledRenderToSingleSampled-06853,
/// the limits `framebufferColorSampleCounts` and `framebufferDepthSampleCounts`).
pub(crate) fn check_samples(
    shared: &crate::device::Shared,
    desc: &super::GraphicsPipelineDesc<'_>,
) -> std::result::Result<(), String> {
    let n = desc.samples;
    if n.as_raw().count_ones() != 1 || n.as_raw() > 64 {
        return Err(format!(
            "samples {n:?} is not one sample count (TYPE_1 … TYPE_64)"
        ));
    }
    let limits = shared.limits();
    if !desc.color_formats.is_empty() && !limits.framebuffer_color_sample_counts.contains(n) {
        return Err(format!(
            "{n:?} colour attachments: the device allows {:?} (framebufferColorSampleCounts)",
            limits.framebuffer_color_sample_counts
        ));
    }
    if desc.depth_format.is_some() && !limits.framebuffer_depth_sample_counts.contains(n) {
        return Err(format!(
            "{n:?} depth attachments: the device allows {:?} (framebufferDepthSampleCounts)",
            limits.framebuffer_depth_sample_counts
        ));
    }
    Ok(())
}

/// The fixed-function enums of `desc` are values Vulkan defines (VUID-VkPipelineInputAssemblyStateCreateInfo-topology-parameter,
/// VUID-VkPipelineRasterizationStateCreateInfo-polygonMode-parameter, -cullMode-parameter,
/// -frontFace-parameter): a raw value such as `PrimitiveTopology::from_raw(999)` is
/// refused here instead of reaching the driver.
pub(crate) fn check_fixed_state(desc: &super::GraphicsPipelineDesc<'_>) -> Result<(), String> {
    let t = desc.topology;
    if !(0..=10).contains(&t.as_raw()) {
        return Err(format!(
            "topology {t:?} is not a VkPrimitiveTopology (POINT_LIST … PATCH_LIST)"
        ));
    }
    let p = desc.polygon_mode;
    if ![
        vk::PolygonMode::FILL,
        vk::PolygonMode::LINE,
        vk::PolygonMode::POINT,
    ]
    .contains(&p)
    {
        return Err(format!("polygon mode {p:?} is not FILL, LINE or POINT"));
    }
    if !vk::CullModeFlags::FRONT_AND_BACK.contains(desc.cull_mode) {
        return Err(format!(
            "cull mode {:?} has bits beyond FRONT_AND_BACK",
            desc.cull_mode
        ));
    }
    let f = desc.front_face;
    if ![vk::FrontFace::COUNTER_CLOCKWISE, vk::FrontFace::CLOCKWISE].contains(&f) {
        return Err(format!(
            "front face {f:?} is not COUNTER_CLOCKWISE or CLOCKWISE"
        ));
    }
    Ok(())
}
