"""harv35c: an unbiased harvest of RL, robotics simulation and headless rendering (MuJoCo and
dm_control, pybullet, gym/pyglet, Isaac Gym, habitat, SAPIEN/ManiSkill, nvdiffrast, EGL and Vulkan
in containers), scored blind, and the general fixes its misses ask for (docs/dev/harv35c.md).

Twenty new training-side logs; explain named fourteen first before any change. The fixed misses
(A1, a program's own message without a signature):
- pybullet's GUI connects to an X display itself: bullet3's X11OpenGLWindow::createWindow prints
  ``\\n\\tcannot connect to X server\\n\\n`` and exits when XOpenDisplay(NULL) fails (Qt 4's
  qt_init says ``<app>: cannot connect to X server <display>``, OpenCV's Qt window the same);
  xukechun/Vision-Language-Grasping#9, med-air/SurRoL#12, RoboVerseOrg/RoboVerse#433,
  peteanderson80/Matterport3DSimulator#102 were unknown (one a wrong guess); now
  ``no-display-for-rendering``;
- MuJoCo's mjr_makeContext raises ``mujoco.FatalError: gladLoadGL error`` when no OpenGL context
  is current (google-deepmind/mujoco src/render/render_context.c; newer releases say ``an OpenGL
  platform library has not been loaded into this process``): the default GLFW backend on a
  headless machine (google-deepmind/dm_control#283); now ``no-display-for-rendering``, with
  ``egl-device-display-unavailable`` as its could_be (MUJOCO_GL=egl with a broken NVIDIA EGL).
Each message is the program's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses.
"""

from __future__ import annotations

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from stackpeel.knowledge import load as load_kb
from test_explain_patterns import codes_of as _codes, family_tests

# bullet3 examples/OpenGLWindow/X11OpenGLWindow.cpp createWindow (stderr, tab-indented)
BULLET_NO_X = "\tcannot connect to X server"
# Qt 4 qapplication_x11.cpp qt_init: qFatal("%s: cannot connect to X server %s", appName, display)
QT4_NO_X = "kded: cannot connect to X server :0.0"
QT4_NO_X_NONAME = ": cannot connect to X server localhost:11.0"
# pyglet 1.1 canvas/xlib.py
PYGLET_OLD_NO_X = "pyglet.window.xlib.XlibException: Cannot connect to X server"
# google-deepmind/mujoco src/render/render_context.c mjr_makeContext -> mujoco.FatalError
MUJOCO_GLAD = "mujoco.FatalError: gladLoadGL error"
MUJOCO_NO_PLATFORM = ("mujoco.FatalError: an OpenGL platform library has not been loaded into this process, this "
                      "most likely means that a valid OpenGL context has not been created before mjr_makeContext "
                      "was called")

FAMILIES = {
    "no-display-for-rendering": [BULLET_NO_X, QT4_NO_X, QT4_NO_X_NONAME, PYGLET_OLD_NO_X, MUJOCO_GLAD,
                                 MUJOCO_NO_PLATFORM],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


PYBULLET_BANNER = (
    "pybullet build time: Nov 28 2023 23:50:19\n"
    "startThreads creating 1 threads.\n"
    "starting thread 0\n"
    "started thread 0 \n"
    "argc=2\n"
    "argv[0] = --unused\n"
    "argv[1] = --start_demo_name=Physics Server\n"
    "ExampleBrowserThreadFunc started\n"
    "X11 functions dynamically loaded using dlopen/dlsym OK!\n"
    "\n"
    "\tcannot connect to X server\n"
    "\n"
)


def test_pybullet_gui_paste_names_no_display():
    # med-air/SurRoL#12 and RoboVerseOrg/RoboVerse#433: p.connect(p.GUI) on a cluster / headless run
    assert _codes("I ran `python data_generation.py --env NeedlePick-v0`\n```\n" + PYBULLET_BANNER + "```\n")[:1] == [
        "no-display-for-rendering"]


def test_pybullet_message_inside_a_chinese_sentence():
    # xukechun/Vision-Language-Grasping#9 (the reporter's sentence quotes pybullet's message)
    text = ("在linux下pybullet，界面无法显示在本地\n\n"
            "我现在在运行您的测试代码时会出现问题，cannot connect to X server  导致界面无法显示在本地，请问这样的问题有解决方案吗?\n")
    assert _codes(text)[:1] == ["no-display-for-rendering"]


def test_opencv_window_in_a_container_names_no_display():
    # peteanderson80/Matterport3DSimulator#102: cv2.namedWindow in docker, display forwarded over ssh
    text = (">>> import cv2\n"
            ">>> cv2.namedWindow('Python RGB')\n"
            ": cannot connect to X server \n")
    assert _codes(text)[:1] == ["no-display-for-rendering"]


def test_mujoco_gladloadgl_in_a_renderer_traceback():
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/prin/sbatch_tests/train_clust.py", line 45, in <module>\n'
        '    env = gym.make("soft_bot/SurfaceBot-v0", model_path=xml_path, framerate=60, vis=True)\n'
        '  File "/usr/local/lib/python3.10/dist-packages/mujoco/renderer.py", line 83, in __init__\n'
        "    self._mjr_context = _render.MjrContext(\n"
        + MUJOCO_GLAD + "\n"
    )
    assert _codes(text)[:1] == ["no-display-for-rendering"]


def test_mujoco_gladloadgl_could_be_a_broken_egl():
    entry = next(e for e in load().entries if e.id == "mujoco-no-gl-context-at-make-context")
    assert "egl-device-display-unavailable" in entry.could_be
    # with MuJoCo's own EGL error beside it, EGL is the cause, not a missing display
    text = ("ImportError: Cannot initialize a EGL device display. This likely means that your EGL driver does not "
            "support the PLATFORM_DEVICE extension, which is required for creating a headless rendering context.\n"
            + MUJOCO_GLAD + "\n")
    assert "egl-device-display-unavailable" in _codes(text)[:2]


def test_glfw_warnings_then_platform_library_error():
    # google-deepmind/mujoco#716 (a headless Raspberry Pi): GLFW's warnings, then mjr_makeContext
    text = (
        "/home/pi/Quadrotor/.venv/lib/python3.9/site-packages/glfw/__init__.py:912: GLFWError: (65544) "
        "b'X11: The DISPLAY environment variable is missing'\n"
        "  warnings.warn(message, GLFWError)\n"
        '  File "/home/pi/Quadrotor/.venv/lib/python3.9/site-packages/mujoco/renderer.py", line 86, in __init__\n'
        "    self._mjr_context = _render.MjrContext(\n"
        + MUJOCO_NO_PLATFORM + "\n"
    )
    assert _codes(text)[:1] == ["no-display-for-rendering"]


def test_fix_names_pybullet_direct_and_headless_backends():
    code = load_kb().get("no-display-for-rendering")
    assert "p.DIRECT" in code.fix and "MUJOCO_GL=egl" in code.fix and "xvfb-run" in code.fix
    assert "cannot connect to X server" in code.meaning and "gladLoadGL error" in code.meaning


def test_near_misses_stay_quiet():
    for text in (
        "Successfully connected to X server :0",
        "connect to X server :1 ok, GLX 1.4",
        "gladLoadGL OK: OpenGL 4.6",
        "[glad] gladLoadGL() returned 1",
        "logger->error(\"gladLoadGL Error: {}\", err);",
        "the OpenGL platform library has been loaded (EGL)",
    ):
        ids = _ids(text)
        assert "xlib-cannot-connect-to-x-server" not in ids, text
        assert "mujoco-no-gl-context-at-make-context" not in ids, text


def test_near_miss_log_names_nothing_of_display():
    text = ("pybullet build time: Nov 28 2023 23:50:19\n"
            "X11 functions dynamically loaded using dlopen/dlsym OK!\n"
            "GL_VENDOR=NVIDIA Corporation\n"
            "episode 1 reward 12.5\n")
    assert "no-display-for-rendering" not in [c.code for c in explain_text(text).candidates]
