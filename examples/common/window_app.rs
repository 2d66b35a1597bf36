//! The seed scene in a window: winit 0.30 `ApplicationHandler`, kiln's `Presenter`
//! (surface via ash-window, swapchain, frames in flight). Shared by `examples/window.rs`
//! and the window test (`tests/window.rs`).
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln::hooks::{FaultInjector, FaultSite};
use kiln::vk;
use kiln::window::{Frame, FrameStatus, Presenter, PresenterDesc};
use kiln::{
    Buffer, ColorAttachment, DepthAttachment, DescriptorSet, Device, DeviceDesc, Image, ImageDesc,
    Recorder, RenderingDesc, ValidationReport,
};
use winit::application::ApplicationHandler;
use winit::dpi::PhysicalSize;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::window::{Window, WindowId};

use super::scene::{Scene, BACKGROUND, DEPTH_FORMAT};

/// How the window app runs.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Exit after this many presented frames (`KILN_WINDOW_FRAMES`).
    pub frames: Option<u64>,
    /// Exit after this long (`KILN_WINDOW_SECONDS`).
    pub seconds: Option<f64>,
    /// Save the last presented frame as a PNG here (`KILN_WINDOW_SCREENSHOT`).
    pub screenshot: Option<std::path::PathBuf>,
    /// Keep the camera still (`KILN_WINDOW_STATIC=1`), so a screenshot matches the
    /// offscreen golden image.
    pub still: bool,
    /// Ask for a new window size after this many presented frames
    /// (`KILN_WINDOW_RESIZE=N:WIDTHxHEIGHT`).
    pub resize: Option<(u64, [u32; 2])>,
    /// Once, record a frame for a zero-sized (minimised) window and count it as skipped:
    /// exercises the minimise path where no window manager can minimise (Xvfb).
    pub probe_minimised: bool,
    /// Once, make a frame's recording fail and carry on: exercises the error path (the
    /// acquired image is released and later frames still present).
    pub probe_error: bool,
    /// Run the fault probes (`KILN_WINDOW_FAULTS=1`): with a fault injector on the device,
    /// a frame whose submission fails (once, then once more with the discard batch failing
    /// too), a failed fence wait, an out-of-date acquire and an out-of-date present; each
    /// must leave the presenter usable (see [`FaultReport`]).
    pub probe_faults: bool,
    /// Force the validation layer on.
    pub validation: Option<bool>,
    /// Allow the event loop off the main thread (tests).
    pub any_thread: bool,
}

impl Config {
    pub fn from_env() -> Config {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
        Config {
            frames: var("KILN_WINDOW_FRAMES").and_then(|v| v.parse().ok()),
            seconds: var("KILN_WINDOW_SECONDS").and_then(|v| v.parse().ok()),
            screenshot: var("KILN_WINDOW_SCREENSHOT").map(Into::into),
            still: var("KILN_WINDOW_STATIC").is_some_and(|v| v == "1"),
            resize: var("KILN_WINDOW_RESIZE").and_then(|v| {
                let (n, wh) = v.split_once(':')?;
                let (w, h) = wh.split_once('x')?;
                Some((n.parse().ok()?, [w.parse().ok()?, h.parse().ok()?]))
            }),
            probe_minimised: false,
            probe_error: false,
            probe_faults: var("KILN_WINDOW_FAULTS").is_some_and(|v| v == "1"),
            validation: None,
            any_thread: false,
        }
    }
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    pub presented: u64,
    pub skipped: u64,
    pub recreated_or_suboptimal: u64,
    pub swapchains_created: u64,
    pub failed_frames: u64,
    pub extent: [u32; 2],
    pub format: Option<vk::Format>,
    pub screenshot: Option<(u32, u32, Vec<u8>)>,
    pub validation: Option<ValidationReport>,
    pub device: String,
    /// What the fault probes saw ([`Config::probe_faults`]).
    pub faults: FaultReport,
}

/// What the fault probes saw: the code of each failed frame, in order, and whether the
/// frames whose submission failed left the depth image's layout as it was (a failed
/// submission must not commit the layouts its recording moved images to).
#[derive(Debug, Default)]
pub struct FaultReport {
    pub injected: u64,
    pub codes: Vec<&'static str>,
    pub statuses: Vec<FrameStatus>,
    pub layouts_kept: Vec<bool>,
}

/// The fault probes, by presented-frame count: (frame, what to arm).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Probe {
    /// The frame's submission fails (OUT_OF_HOST_MEMORY), its discard batch succeeds.
    Submit,
    /// The frame's submission fails (OUT_OF_DEVICE_MEMORY) and so does the discard batch.
    SubmitAndDiscard,
    /// The wait for the slot's fence fails (OUT_OF_HOST_MEMORY).
    Wait,
    /// The acquire reports OUT_OF_DATE.
    Acquire,
    /// The present reports OUT_OF_DATE.
    Present,
}

const PROBES: [(u64, Probe); 5] = [
    (5, Probe::Submit),
    (8, Probe::SubmitAndDiscard),
    (11, Probe::Wait),
    (14, Probe::Acquire),
    (17, Probe::Present),
];

struct State {
    // Field order is drop order: the presenter waits for the GPU before anything it used
    // is dropped.
    presenter: Presenter,
    faults: Option<Arc<FaultInjector>>,
    /// Presented-frame counts whose probe already ran.
    probed: Vec<u64>,
    depth: Vec<Option<Image>>,
    cameras: Vec<(Buffer, DescriptorSet)>,
    scene: Scene,
    window: Arc<Window>,
    device: Device,
}

struct App {
    config: Config,
    state: Option<State>,
    summary: Summary,
    start: Instant,
    error: Option<Box<dyn std::error::Error>>,
}

impl App {
    fn init(&mut self, event_loop: &ActiveEventLoop) -> Result<(), Box<dyn std::error::Error>> {
        let attrs = Window::default_attributes()
            .with_title("kiln — material scene")
            .with_inner_size(PhysicalSize::new(512, 512));
        let window = Arc::new(event_loop.create_window(attrs)?);
        let faults = self
            .config
            .probe_faults
            .then(|| Arc::new(FaultInjector::new()));
        let device = Device::with_desc(
            &DeviceDesc::default()
                .validation(self.config.validation)
                .faults(faults.clone())
                .instance_extensions(kiln::window::surface_extensions(event_loop)?),
        )?;
        self.summary.device = device.info().to_string();
        let presenter = Presenter::new(&device, window.clone(), &PresenterDesc::default())?;
        let scene = Scene::new(&device, presenter.format())?;
        let mut cameras = Vec::new();
        for _ in 0..presenter.frames_in_flight() {
            cameras.push(scene.camera_set(&device)?);
        }
        self.summary.format = Some(presenter.format());
        window.request_redraw();
        self.state = Some(State {
            depth: vec![None; presenter.frames_in_flight()],
            presenter,
            faults,
            probed: Vec::new(),
            cameras,
            scene,
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
        let presented = self.summary.presented;
        if let Some((n, [w, h])) = self.config.resize {
            if presented == n {
                let _ = st.window.request_inner_size(PhysicalSize::new(w, h));
            }
        }
        let mut size = st.window.inner_size();
        if self.config.probe_minimised && presented == 2 && self.summary.skipped == 0 {
            size = PhysicalSize::new(0, 0);
        }
        let last = self.config.frames.is_some_and(|n| presented + 1 >= n);
        if last && self.config.screenshot.is_some() {
            st.presenter.capture_next_frame();
        }
        let probe = next_probe(st, presented);
        let State {
            presenter,
            depth,
            cameras,
            scene,
            device,
            faults,
            ..
        } = st;
        let mut work = FrameWork {
            device,
            depth,
            cameras,
            scene,
            faults: faults.as_deref(),
            angle: if self.config.still {
                0.0
            } else {
                self.start.elapsed().as_secs_f32() * 0.4
            },
            fail: self.config.probe_error && presented == 3 && self.summary.failed_frames == 0,
            probe,
            layout_before: None,
            depth_used: None,
        };
        work.arm_probe();
        let status = presenter.frame(device, [size.width, size.height], |r, frame| {
            work.record(r, frame)
        });
        if let Some(f) = work.faults {
            self.summary.faults.injected = f.injected();
        }
        self.summary.tally(presenter, status, &work)
    }
}

/// The probe to arm for the frame after `presented` frames (each once), noted in `probed`.
fn next_probe(st: &mut State, presented: u64) -> Option<Probe> {
    st.faults.as_ref()?;
    if st.probed.contains(&presented) {
        return None;
    }
    let probe = PROBES
        .iter()
        .find(|(n, _)| *n == presented)
        .map(|(_, p)| *p)?;
    st.probed.push(presented);
    Some(probe)
}

/// What one frame's recording uses and what it leaves for the tally.
struct FrameWork<'a> {
    device: &'a Device,
    depth: &'a mut Vec<Option<Image>>,
    cameras: &'a [(Buffer, DescriptorSet)],
    scene: &'a Scene,
    faults: Option<&'a FaultInjector>,
    /// The camera's angle (radians).
    angle: f32,
    /// The recording fails (the error probe).
    fail: bool,
    probe: Option<Probe>,
    /// With a submission probe: the depth image's layout when the failing frame was
    /// recorded (its committed one), and the image.
    layout_before: Option<vk::ImageLayout>,
    depth_used: Option<Image>,
}

impl<'w> FrameWork<'w> {
    /// Arms the `nth` failure of `site` with `result`, where faults are injected.
    fn arm(&self, site: FaultSite, nth: u64, result: vk::Result) {
        if let Some(f) = self.faults {
            f.fail_nth(site, nth, result);
        }
    }

    /// Arms the wait, acquire and present probes (the submission probes are armed while
    /// recording, for the frame's own submission).
    fn arm_probe(&self) {
        match self.probe {
            Some(Probe::Wait) => self.arm(FaultSite::Wait, 1, vk::Result::ERROR_OUT_OF_HOST_MEMORY),
            Some(Probe::Acquire) => {
                self.arm(FaultSite::Acquire, 1, vk::Result::ERROR_OUT_OF_DATE_KHR)
            }
            Some(Probe::Present) => {
                self.arm(FaultSite::Present, 1, vk::Result::ERROR_OUT_OF_DATE_KHR)
            }
            _ => {}
        }
    }

    /// Records the frame: the scene into the frame's target and its slot's depth image.
    fn record<'a>(&mut self, r: &mut Recorder<'a, '_>, frame: &Frame<'_>) -> kiln::Result<()>
    where
        'w: 'a,
    {
        if self.fail {
            return Err(kiln::Error::RenderingState {
                what: "probe: a frame whose recording fails",
            });
        }
        let e = frame.extent;
        let d = &mut self.depth[frame.slot];
        if d.as_ref().is_none_or(|d| d.extent() != e) {
            *d = Some(self.device.image(&ImageDesc::depth_target(
                "depth",
                e.width,
                e.height,
                DEPTH_FORMAT,
            ))?);
        }
        let cameras: &'w [(Buffer, DescriptorSet)] = self.cameras;
        let (cam_buf, cam_set) = &cameras[frame.slot];
        cam_buf.upload(&[Scene::camera(e.width as f32 / e.height as f32, self.angle)])?;
        let depth_image = d.as_ref().ok_or(kiln::Error::RenderingState {
            what: "no depth image",
        })?;
        r.begin_rendering(
            &RenderingDesc::new(&[ColorAttachment::clear(frame.target, BACKGROUND)]).depth(Some(
                DepthAttachment::clear(depth_image, 1.0)
                    .store(false)
                    .stencil_clear(None),
            )),
        )?;
        let scene: &'w Scene = self.scene;
        scene.draw(r, cam_set)?;
        r.end_rendering()?;
        if matches!(self.probe, Some(Probe::Submit | Probe::SubmitAndDiscard)) {
            // Moved by this frame's recording: a failed submission must not commit it.
            self.layout_before = Some(depth_image.layout());
            self.depth_used = Some(depth_image.clone());
            r.transition(depth_image, vk::ImageLayout::GENERAL)?;
            // The next submission is this frame's (and then its discard batch).
            self.arm(
                FaultSite::QueueSubmit,
                1,
                vk::Result::ERROR_OUT_OF_HOST_MEMORY,
            );
            if self.probe == Some(Probe::SubmitAndDiscard) {
                self.arm(
                    FaultSite::QueueSubmit,
                    2,
                    vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
                );
            }
        }
        Ok(())
    }
}

impl Summary {
    /// Counts a frame's outcome: a probed frame's status or error code (and whether a
    /// failed submission kept the depth image's layout), the error probe's failure, a
    /// presented, suboptimal, out-of-date or skipped frame; then the presenter's extent,
    /// swapchain count and capture.
    fn tally(
        &mut self,
        presenter: &mut Presenter,
        status: kiln::Result<FrameStatus>,
        work: &FrameWork<'_>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        if work.probe.is_some() {
            match &status {
                Ok(s) => self.faults.statuses.push(*s),
                Err(e) => {
                    self.faults.codes.push(e.code());
                    if let (Some(before), Some(d)) = (work.layout_before, &work.depth_used) {
                        self.faults.layouts_kept.push(d.layout() == before);
                    }
                    self.failed_frames += 1;
                    return Ok(());
                }
            }
        }
        let status = match status {
            Err(kiln::Error::RenderingState { what }) if work.fail && what.starts_with("probe") => {
                self.failed_frames += 1;
                return Ok(());
            }
            other => other?,
        };
        match status {
            FrameStatus::Presented => self.presented += 1,
            FrameStatus::Suboptimal => {
                self.presented += 1;
                self.recreated_or_suboptimal += 1;
            }
            FrameStatus::OutOfDate => self.recreated_or_suboptimal += 1,
            // Minimised, and any later kind of frame that drew nothing.
            _ => self.skipped += 1,
        }
        let e = presenter.extent();
        self.extent = [e.width, e.height];
        self.swapchains_created = presenter.swapchains_created();
        if let Some(shot) = presenter.take_capture()? {
            self.screenshot = Some((shot.width, shot.height, shot.pixels));
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
                    if size.width > 0 && size.height > 0 || self.config.probe_minimised {
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
            drop(st); // presenter first (waits idle), then the scene, window and device
            self.summary.validation = Some(watch.report());
        }
    }
}

/// Runs the window until it is closed or the configured frame count / time is reached.
pub fn run(config: Config) -> Result<Summary, Box<dyn std::error::Error>> {
    let mut builder = EventLoop::builder();
    if config.any_thread {
        use winit::platform::x11::EventLoopBuilderExtX11;
        builder.with_any_thread(true);
    }
    let event_loop = builder.build()?;
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        config,
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
