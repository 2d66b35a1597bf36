//! The glTF scene in a window: winit 0.30's `ApplicationHandler` and kiln's `Presenter`,
//! as `window_app.rs` does for the seed scene (whose [`Config`] and environment variables
//! it takes: `KILN_WINDOW_FRAMES`, `KILN_WINDOW_SECONDS`, `KILN_WINDOW_SCREENSHOT`,
//! `KILN_WINDOW_STATIC`). Each frame in flight has its own [`FrameTargets`] (uniform,
//! draw lists, shadow map, multisampled colour and depth), recreated when the extent
//! changes; the frame's recording is [`Renderer::record`] into the swapchain image.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln::vk;
use kiln::window::{FrameStatus, Presenter, PresenterDesc};
use kiln::{Device, DeviceDesc, ValidationReport};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

use super::gltf_render::{choose_samples, FrameTargets, IndirectPath, Renderer, View};
use super::gltf_scene::SceneData;
pub use super::window_app::Config;

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub presented: u64,
    pub extent: [u32; 2],
    pub format: Option<vk::Format>,
    pub samples: Option<vk::SampleCountFlags>,
    pub path: Option<IndirectPath>,
    pub screenshot: Option<(u32, u32, Vec<u8>)>,
    pub validation: Option<ValidationReport>,
    pub device: String,
}

struct State {
    // Field order is drop order: the presenter waits for the GPU first.
    presenter: Presenter,
    targets: Vec<Option<FrameTargets>>,
    renderer: Renderer,
    window: Arc<Window>,
    device: Device,
}

struct App {
    config: Config,
    scene: SceneData,
    state: Option<State>,
    summary: Summary,
    start: Instant,
    error: Option<Box<dyn std::error::Error>>,
}

impl App {
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<(), Box<dyn std::error::Error>> {
        let attrs = Window::default_attributes()
            .with_title("kiln — glTF scene")
            .with_inner_size(PhysicalSize::new(640, 480));
        let window = Arc::new(event_loop.create_window(attrs)?);
        let device = Device::with_desc(
            &DeviceDesc::default()
                .validation(self.config.validation)
                .instance_extensions(kiln::window::surface_extensions(event_loop)?),
        )?;
        self.summary.device = device.info().to_string();
        // sRGB swapchain formats first: the shader writes linear colour.
        let desc = PresenterDesc::default().preferred_formats(vec![
            vk::Format::B8G8R8A8_SRGB,
            vk::Format::R8G8B8A8_SRGB,
            vk::Format::B8G8R8A8_UNORM,
            vk::Format::R8G8B8A8_UNORM,
        ]);
        let presenter = Presenter::new(&device, window.clone(), &desc)?;
        let samples = choose_samples(&device, vk::SampleCountFlags::TYPE_4);
        let renderer = Renderer::new(&device, &self.scene, presenter.format(), samples)?;
        self.summary.format = Some(presenter.format());
        self.summary.samples = Some(samples);
        self.summary.path = Some(renderer.path);
        window.request_redraw();
        let mut targets = Vec::new();
        targets.resize_with(presenter.frames_in_flight(), || None);
        self.state = Some(State {
            presenter,
            targets,
            renderer,
            window,
            device,
        });
        Ok(())
    }

    fn done(&self) -> bool {
        self.config
            .frames
            .is_some_and(|n| self.summary.presented >= n)
            || self
                .config
                .seconds
                .is_some_and(|s| self.start.elapsed() >= Duration::from_secs_f64(s))
    }

    fn redraw(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        let Some(st) = self.state.as_mut() else {
            return Ok(());
        };
        let size = st.window.inner_size();
        let last = self
            .config
            .frames
            .is_some_and(|n| self.summary.presented + 1 >= n);
        if last && self.config.screenshot.is_some() {
            st.presenter.capture_next_frame();
        }
        let angle = if self.config.still {
            0.0
        } else {
            self.start.elapsed().as_secs_f32() * 0.3
        };
        let State {
            presenter,
            targets,
            renderer,
            device,
            ..
        } = st;
        let status = presenter.frame(device, [size.width, size.height], |r, frame| {
            let slot = &mut targets[frame.slot];
            if slot.as_ref().is_none_or(|t| t.extent != frame.extent) {
                *slot = Some(renderer.targets(device, frame.extent)?);
            }
            let t = slot.as_ref().ok_or(kiln::Error::RenderingState {
                what: "no frame targets",
            })?;
            let view = View {
                angle,
                ..View::new(frame.extent.width, frame.extent.height)
            };
            t.uniform.upload(&[view.uniform(
                renderer.object_count,
                renderer.encode_srgb(),
                renderer.path,
            )])?;
            renderer.record(r, t, frame.target)
        })?;
        match status {
            FrameStatus::Presented | FrameStatus::Suboptimal => self.summary.presented += 1,
            // OutOfDate, Minimised and any later kind: nothing presented.
            _ => {}
        }
        let e = presenter.extent();
        self.summary.extent = [e.width, e.height];
        if let Some(shot) = presenter.take_capture()? {
            self.summary.screenshot = Some((shot.width, shot.height, shot.pixels));
        }
        Ok(())
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.state.is_none() {
            if let Err(e) = self.init(event_loop) {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(_) => {
                if let Some(st) = self.state.as_mut() {
                    st.presenter.resized();
                    st.window.request_redraw();
                }
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw() {
                    self.error = Some(e);
                    event_loop.exit();
                    return;
                }
                if self.done() {
                    event_loop.exit();
                } else if let Some(st) = self.state.as_ref() {
                    let size = st.window.inner_size();
                    if size.width > 0 && size.height > 0 {
                        st.window.request_redraw();
                    }
                }
            }
            _ => {}
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(st) = self.state.take() {
            let watch = st.device.validation_watch();
            drop(st); // presenter first (waits idle), then the targets, renderer and device
            self.summary.validation = Some(watch.report());
        }
    }
}

/// Shows `scene` until the window is closed or the configured frames or time are reached.
pub fn run(config: Config, scene: SceneData) -> Result<Summary, Box<dyn std::error::Error>> {
    let mut builder = EventLoop::builder();
    if config.any_thread {
        use winit::platform::x11::EventLoopBuilderExtX11;
        builder.with_any_thread(true);
    }
    let event_loop = builder.build()?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        config,
        scene,
        state: None,
        summary: Summary::default(),
        start: Instant::now(),
        error: None,
    };
    event_loop.run_app(&mut app)?;
    if let Some(e) = app.error.take() {
        return Err(e);
    }
    if let (Some(path), Some((w, h, px))) = (&app.config.screenshot, &app.summary.screenshot) {
        image::save_buffer(path, px, *w, *h, image::ExtendedColorType::Rgba8)?;
    }
    Ok(app.summary)
}
