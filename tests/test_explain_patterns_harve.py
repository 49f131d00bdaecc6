"""Environment messages harvested from the system layer's own source (harve): the NVIDIA driver
installer, DKMS, kmod and the kernel module's NVRM lines; the NVIDIA container toolkit; CUPTI and
the Nsight profilers; MuJoCo / dm_control / PyOpenGL / GLFW rendering; setuptools, pip and CMake
build front-ends; the Go and C daemons of the stack (k8s-device-plugin, DCGM, dcgm-exporter).

Each message is the program's own text with its variable parts filled in (the file that prints
it is named above each group; docs/dev/harvest-harve.md has the tables). ``family_tests`` runs
each through the wrappers pasted logs put around lines (rank and worker prefixes, timestamps,
quotes, backticks, wrapping). The healthy lines are notices the same programs print on runs
that work (or commands and config lines with the same words): they must name nothing.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import assert_sourced_root, family_tests, healthy_test

FAMILIES = {
    # NVIDIA/nvidia-installer kernel.c (determine_kernel_source_path, check_kernel_source_path,
    # build_kernel_interface, the step status), misc.c (check_development_tools); the Linux
    # kernel's module loader (kernel/module/main.c) and kmod; dell/dkms; dpkg
    "nvidia-module-missing-for-kernel": [
        "ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make sure you "
        "have installed the kernel source files for your kernel and that they are properly configured",
        "ERROR: The kernel header file '/lib/modules/6.5.0-14-generic/build/include/linux/kernel.h' does not "
        "exist.  The most likely reason for this is that the kernel source path "
        "'/lib/modules/6.5.0-14-generic/build' is incorrect.",
        "ERROR: Neither the '/usr/src/linux/include/linux/version.h' nor the "
        "'/usr/src/linux/include/generated/uapi/linux/version.h' kernel header file exists.",
        'ERROR: An error occurred while performing the step: "Building kernel modules". See '
        "/var/log/nvidia-installer.log for details.",
        "ERROR: The nvidia kernel module was not created.",
        "ERROR: Unable to find the development tool `make` in your path; please make sure that you have the "
        "package 'make' installed.",
        "[   12.345678] nvidia: Unknown symbol drm_gem_object_free (err -2)",
        "[   12.345678] nvidia: disagrees about version of symbol module_layout",
        "modprobe: ERROR: could not insert 'nvidia': Unknown symbol in module, or unknown parameter (see dmesg)",
        "Error! The /var/lib/dkms/nvidia/535.129.03/source/dkms.conf for module nvidia includes a "
        "BUILD_EXCLUSIVE directive which does not match this kernel/arch/config.",
        "Consult /var/lib/dkms/nvidia/535.129.03/build/make.log for more information.",
        "installed nvidia-dkms-535 package post-installation script subprocess returned error exit status 10",
    ],
    # nvidia-installer kernel.c test_kernel_modules
    "secure-boot-rejects-module": [
        "ERROR: The kernel module failed to load because it was not signed by a key that is trusted by the "
        "kernel. Please try installing the driver again, and sign the kernel module when prompted to do so.",
    ],
    # nvidia-installer kernel.c check_for_loaded_kernel_module; kmod modprobe -r / rmmod
    "nvidia-module-in-use": [
        "ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.  This may "
        "be because it is in use (for example, by an X server, a CUDA program, or the NVIDIA Persistence Daemon)",
        "WARNING: An NVIDIA kernel module 'nvidia-drm' appears to be already loaded in your kernel.",
        "modprobe: FATAL: Module nvidia_drm is in use.",
        "rmmod: ERROR: Module nvidia is in use by: nvidia_uvm nvidia_modeset",
    ],
    # open-gpu-kernel-modules kernel-open/nvidia/nv-pci.c nv_pci_probe
    "nouveau-holds-gpu": [
        "[    3.141592] NVRM: request_mem_region failed for 16M @ 0xf6000000. This can occur when a driver "
        "such as rivatv is loaded and claims ownership of the device's registers.",
    ],
    # open-gpu-kernel-modules kernel-open/nvidia/nv.c nvidia_init_module; kmod (-ENODEV)
    "nvidia-gpu-init-failed": [
        "[    3.141592] NVRM: No NVIDIA GPU found.",
        "modprobe: ERROR: could not insert 'nvidia': No such device",
    ],
    # open-gpu-kernel-modules nv_pci_probe (legacy GPU on a newer branch, or the reverse)
    "proprietary-kernel-module-unsupported-gpu": [
        "NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2204) installed in this system is not supported by "
        "the NVIDIA 390.157 driver release.",
    ],
    # NVIDIA/k8s-device-plugin internal/rm/health.go; open-gpu-kernel-modules RmInitAdapter
    "gpu-hardware-fault": [
        "I0501 12:00:00.123456       1 health.go:151] XidCriticalError: Xid=79 on Device=GPU-2c3a4f1e; "
        "marking device as unhealthy.",
        "[    3.141592] NVRM: GPU 0000:01:00.0: GPU does not have the necessary power cables connected.",
    ],
    # libnvidia-container src/nvc_container.c, src/cgroup_legacy.c
    "container-device-cgroup-denied": [
        "nvidia-container-cli: container error: failed to get device cgroup mount path: relative path in "
        "mount prefix: ../../..: unknown",
        "nvidia-container-cli: mount error: open failed: /sys/fs/cgroup/devices/user.slice/devices.allow: "
        "permission denied: unknown",
    ],
    # NVIDIA/DCGM dcgm_structs.h
    "nvml-unavailable": [
        "Error: DCGM_ST_NVML_NOT_LOADED: NVML library not loaded",
    ],
    # NVIDIA/go-dcgm pkg/dcgm/admin.go, NVIDIA/DCGM dcgmi, NVIDIA/dcgm-exporter pkg/cmd/app.go
    "dcgm-hostengine-unreachable": [
        'level=fatal msg="Error connecting to nv-hostengine: Host engine connection invalid/disconnected"',
        'level=ERROR msg="Failed to connect to remote hostengine" mode=standalone address=localhost:5555',
        "Error: unable to establish a connection to the specified host: localhost",
        "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.",
    ],
    # CUPTI result strings (pytorch/kineto libkineto/src/DeviceUtil.h CUPTI_CALL, TensorFlow's
    # cupti_tracer), Nsight Compute, nvprof
    "gpu-profiling-restricted-to-admin": [
        "W0501 12:00:00.123 4821 CuptiActivityApi.cpp:120] function "
        "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL) failed with error CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)",
        "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
        "Counters on the target device 0.",
        "==4821== Warning: The user does not have permission to profile on the target device. See the "
        "following link for instructions to enable permissions and get more information: "
        "https://developer.nvidia.com/NVSOLN1000",
    ],
    # google-deepmind/mujoco python/mujoco/egl, google-deepmind/dm_control _render/pyopengl,
    # PyOpenGL OpenGL/platform/egl.py
    "egl-device-display-unavailable": [
        "ImportError: eglQueryDevicesEXT is not available.",
        "ImportError: eglGetPlatformDisplayEXT is not available.",
        "RuntimeError: Cannot create an EGL context.",
        "RuntimeError: Failed to make the EGL context current.",
        "RuntimeError: EGL failed to find a framebuffer configuration that matches the desired attributes: "
        "(12324, 8, 12323, 8, 12322, 8)",
        "ImportError: Unable to load EGL library",
        "AttributeError: 'NoneType' object has no attribute 'eglQueryString'",
        "OpenGL.error.GLError: GLError(err = 12289, baseOperation = eglInitialize, result = 0)",
    ],
    # glfw/glfw src/x11_init.c, pyglet canvas/xlib.py, Qt xcb, MuJoCo 2.x via mujoco-py,
    # dm_control _render/__init__.py
    "no-display-for-rendering": [
        "GLFWError: (65544) b'X11: The DISPLAY environment variable is missing'",
        "glfw.GLFWError: (65544) b'X11: Failed to open display :0'",
        'pyglet.canvas.xlib.NoSuchDisplayException: Cannot connect to "None"',
        "qt.qpa.xcb: could not connect to display",
        "ERROR: GLEW initalization error: Missing GL version",
        "RuntimeError: No OpenGL rendering backend is available.",
        "ERROR: Could not initialize GLFW",
    ],
    # PyOpenGL ctypesloader, Mesa src/loader/loader.c, openai/mujoco-py, NVIDIA/dcgm-exporter
    "system-library-missing": [
        "ImportError: ('Unable to load OpenGL library', 'OSMesa: cannot open shared object file: No such file "
        "or directory', 'OSMesa', None)",
        "libGL error: MESA-LOADER: failed to open swrast: /usr/lib/dri/swrast_dri.so: cannot open shared "
        "object file: No such file or directory (search paths /usr/lib/x86_64-linux-gnu/dri, suffix _dri)",
        "Exception: You appear to be missing MuJoCo.  We expected to find the file here: /root/.mujoco/mujoco210",
        "Exception: Missing path to your environment variable. Current values LD_LIBRARY_PATH=/usr/local/cuda/lib64 "
        "Please add following line to .bashrc: export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/root/.mujoco/mujoco210/bin",
        'time=2024-05-01T12:00:00Z level=ERROR msg="the libdcgm.so.4 library was not found. Install Data '
        'Center GPU Manager (DCGM)."',
    ],
    # pypa/setuptools _distutils/compilers/C/msvc.py; nvidia-installer misc.c; Kitware/CMake
    # cmGlobalGenerator::EnableLanguage, CMakeDetermine{C,CXX}Compiler.cmake
    "no-c-compiler": [
        "distutils.errors.DistutilsPlatformError: Unable to find a compatible Visual Studio installation.",
        "ERROR: Unable to find the development tool `cc` in your path; please make sure that you have the "
        "package 'gcc' installed.",
        "CMake Error: CMAKE_C_COMPILER not set, after EnableLanguage",
        "The CMAKE_CXX_COMPILER: cl is not a full path and was not found in the PATH.",
    ],
    # nvidia-installer misc.c check_development_tools
    "libc-headers-missing": [
        "ERROR: You do not appear to have libc header files installed on your system.  Please install your "
        "distribution's libc development package.",
    ],
    # Kitware/CMake Modules/CMakeDetermineCUDACompiler.cmake, FindCUDA.cmake, FindCUDAToolkit.cmake
    "nvcc-missing": [
        "CMake Error: CMAKE_CUDA_COMPILER not set, after EnableLanguage",
        "No CMAKE_CUDA_COMPILER could be found.",
        "Failed to find nvcc. Compiler requires the CUDA toolkit.  Please set the CUDAToolkit_ROOT variable.",
        "Could NOT find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR CUDA_NVCC_EXECUTABLE CUDA_INCLUDE_DIRS "
        "CUDA_CUDART_LIBRARY)",
        'Could NOT find CUDAToolkit (missing: CUDAToolkit_INCLUDE_DIR CUDA_CUDART) (found version "12.1.105")',
    ],
    # Kitware/CMake Modules/FindPython
    "python-headers-missing": [
        "Could NOT find Python3 (missing: Python3_INCLUDE_DIRS Development Development.Module "
        'Development.Embed) (found version "3.10.12")',
    ],
    # Kitware/CMake Modules/FindOpenMP.cmake
    "openmp-missing": [
        "Could NOT find OpenMP_CXX (missing: OpenMP_CXX_FLAGS OpenMP_CXX_LIB_NAMES)",
    ],
    # Kitware/CMake cmGlobalGenerator.cxx, cmGlobalNinjaGenerator.cxx
    "ninja-missing": [
        'CMake Error: CMake was unable to find a build program corresponding to "Ninja".  CMAKE_MAKE_PROGRAM '
        "is not set.  You probably need to select a different build tool.",
        "CMake Error at CMakeLists.txt:5 (project): Running '/usr/bin/ninja' '--version' failed with: No such "
        "file or directory",
    ],
    # CPython subprocess on Windows
    "cmake-missing": [
        "OSError: [WinError 2] The system cannot find the file specified: 'cmake'",
    ],
    # Kitware/CMake cmCMakeMinimumRequired.cxx, cmPolicies.cxx (4.0)
    "cmake-version-unsupported": [
        "CMake Error at CMakeLists.txt:1 (cmake_minimum_required): CMake 3.18 or higher is required.  You "
        "are running version 3.10.2",
        "CMake Error at CMakeLists.txt:1 (cmake_minimum_required): Compatibility with CMake < 3.5 has been "
        "removed from CMake.",
        "Or, add -DCMAKE_POLICY_VERSION_MINIMUM=3.5 to try configuring anyway.",
    ],
    # pypa/pip UnsupportedPythonVersion
    "package-no-matching-wheel": [
        "ERROR: Package 'vllm' requires a different Python: 3.8.10 not in '>=3.9'",
    ],
    # pypa/pip install.py, setuptools CompileError, scikit-build-core
    "extension-build-failed": [
        "ERROR: Could not build wheels for llama-cpp-python, which is required to install "
        "pyproject.toml-based projects",
        "setuptools.errors.CompileError: command '/usr/bin/g++' failed with exit code 1",
        "*** CMake configuration failed",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)


# warnings these programs print on runs that go on (explain counts a WARNING line as an error
# line, so it may exit 1 with "unknown error"; what matters is that it names no cause)
QUIET_WARNINGS = [
    "WARNING: Failed to register the NVIDIA kernel modules with DKMS. The NVIDIA kernel modules will be "
    "installed, but will not be automatically rebuilt if you change your kernel.",
    "WARNING: Unable to find a suitable destination to install 32-bit compatibility libraries. Your system "
    "may not be set up for 32-bit compatibility.",
    "[    3.141592] nvidia: module verification failed: signature and/or required key missing - tainting kernel",
    "UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find ninja.. "
    "Falling back to using the slow distutils backend.",
    "UserWarning: There are no g++ version bounds defined for CUDA version 12.1",
]


@pytest.mark.parametrize("line", QUIET_WARNINGS)
def test_fallback_warnings_name_no_cause(line):
    assert explain_text(line + "\n").candidates == (), line


# notices these programs print on healthy runs, and commands or settings with the same words
test_healthy_notices_name_nothing = healthy_test([
    "[    3.141592] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023",
    "[    3.141592] nvidia: loading out-of-tree module taints kernel.",
    "sudo modprobe -r nvidia_drm nvidia_modeset nvidia_uvm nvidia",
    "Auto-detected mode as 'cdi'",
    "I0501 12:00:00.123456       1 main.go:287] Retrieving plugins.",
    'level=info msg="Not collecting DCP metrics: This request is serviced by a module of DCGM that is not '
    'currently loaded"',
    "Started host engine version 3.3.5 using port number: 5555",
    "dcgmi discovery -l",
    "==PROF== Connected to process 4821 (/usr/bin/python3.10)",
    "options nvidia NVreg_RestrictProfilingToAdminUsers=0",
    "INFO:absl:MUJOCO_GL=egl, attempting to import specified OpenGL backend.",
    "INFO:absl:Successfully imported OpenGL backend: egl",
    "MUJOCO_GL=egl PYOPENGL_PLATFORM=egl python train.py --render",
    "xvfb-run -a python render.py",
    "export DISPLAY=:0",
    "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour "
    "with the system package manager.",
    '-- Found CUDAToolkit: /usr/local/cuda/include (found version "12.1.105")',
    '-- Found OpenMP_CXX: -fopenmp (found version "4.5")',
    '-- Found Python3: /usr/bin/python3.10 (found version "3.10.12") found components: Interpreter Development',
    "cmake_minimum_required(VERSION 3.18)",
    "export CMAKE_POLICY_VERSION_MINIMUM=3.5",
    "-- The CUDA compiler identification is NVIDIA 12.1.105",
    "Successfully built llama-cpp-python",
    "WARNING: lavapipe is not a conformant vulkan implementation, testing use only.",
])


def test_new_codes_are_sourced_roots():
    for code in ("nvidia-module-in-use", "no-display-for-rendering", "dcgm-hostengine-unreachable",
                 "cmake-version-unsupported"):
        assert_sourced_root(code)


def test_installer_log_names_the_missing_kernel_headers_first():
    # the .run installer's own order: the headers line, then the generic failure lines
    log = "\n".join([
        "Verifying archive integrity... OK",
        "ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make sure "
        "you have installed the kernel source files for your kernel",
        "ERROR: Installation has failed.  Please see the file '/var/log/nvidia-installer.log' for details.",
    ])
    assert [c.code for c in explain_text(log + "\n").candidates][:1] == ["nvidia-module-missing-for-kernel"]


def test_a_glfw_warning_under_a_headless_egl_failure_keeps_the_egl_cause():
    # dm_control tries glfw first: its DISPLAY warning is printed before the EGL backend's own failure
    log = "\n".join([
        "/opt/conda/lib/python3.10/site-packages/glfw/__init__.py:912: GLFWError: (65544) b'X11: The DISPLAY "
        "environment variable is missing'",
        "  warnings.warn(message, GLFWError)",
        "Traceback (most recent call last):",
        '  File "train.py", line 3, in <module>',
        "ImportError: Cannot initialize a headless EGL display.",
    ])
    codes = [c.code for c in explain_text(log + "\n").candidates]
    assert "egl-device-display-unavailable" in codes[:2], codes


def test_uvm_unknown_symbols_are_not_a_module_built_for_another_kernel():
    # nvidia_uvm's unknown symbols are the core nvidia module's (it is not loaded): the training log
    # tensorflow-5473 is a driver that is not running, not a module built for another kernel
    for line in ("modprobe: ERROR: could not insert 'nvidia_367_uvm': Unknown symbol in module, or unknown "
                 "parameter (see dmesg)",
                 "[   12.345678] nvidia_uvm: Unknown symbol nvUvmInterfaceRegisterGpu (err 0)"):
        codes = [c.code for c in explain_text(line + "\n").candidates]
        assert "nvidia-module-missing-for-kernel" not in codes, (line, codes)
