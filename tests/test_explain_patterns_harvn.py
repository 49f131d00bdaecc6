"""Harvest harvn: the environment messages of HPC container runtimes (Apptainer/SingularityCE,
enroot/pyxis, Charliecloud) and of extension builds that fail because of where or how they are
built (docs/dev/harvest-harvn.md).

Each message is the text its program prints, taken from its source (cited per line) or, for
nvcc and CMake, printed here by the real tools (CUDA 13.0's nvcc, CMake 3.25) with the values
users pass: the variable parts (paths, values) filled in as users' logs show them.

New codes: ``cuda-arch-value-malformed`` (an -arch/-gencode/CMAKE_CUDA_ARCHITECTURES value in the
wrong syntax), ``build-path-has-spaces`` (nvcc's 'A single input file is required ...'),
``build-dir-unusable`` (a build or cache directory that cannot be written or mapped executable),
``container-image-mount-failed`` (loop devices, squashfs, FUSE), ``unprivileged-userns-unavailable``
(the node refuses unprivileged user namespaces).
"""

from __future__ import annotations

from test_explain_patterns import family_tests, healthy_test, sourced_roots_test, codes_of as _codes

FAMILIES = {
    "no-nvidia-driver": [
        # apptainer/apptainer internal/pkg/runtime/launch/launcher_linux.go addGPUBinds,
        # sylabs/singularity internal/pkg/runtime/launcher/native/launcher_linux.go:
        # sylog.Warningf("Could not find any %s files on this host!", "nv")
        "WARNING: Could not find any nv files on this host!",
        # hpc/charliecloud bin/ch-fromhost (--nvidia)
        "ch-fromhost[2211]: error: nvidia-container-cli failed; does this host have GPUs?",
    ],
    "rocm-gpu-unavailable": [
        # apptainer/apptainer launcher_linux.go addGPUBinds with gpuPlatform "rocm"
        "WARNING: Could not find any rocm files on this host!",
        "WARNING: Could not find any rocm libraries on this host!",
    ],
    "container-image-mount-failed": [
        # apptainer container_linux.go ('failed to find loop device: %s'), pkg/util/loop/loop.go
        # ('no loop devices available'), rpc/server/server_linux.go ('could not attach image file to loop device: %v')
        "FATAL:   container creation failed: mount /proc/self/fd/3->/var/apptainer/mnt/session/rootfs error: "
        "while mounting image /proc/self/fd/3: failed to find loop device: could not attach image file "
        "to loop device: no loop devices available",
        # apptainer internal/pkg/image/driver/imagedriver.go ('error starting squashfuse_ll: %v')
        'FATAL:   container creation failed: while running FUSE drivers: error starting squashfuse_ll: '
        'exec: "squashfuse_ll": executable file not found in $PATH',
        # apptainer cmd/starter/c/starter.c fatalf("Failed to open /dev/fuse: %s\n", strerror(errno))
        "FATAL:   Failed to open /dev/fuse: Permission denied",
        # apptainer engine/apptainer/prepare_linux.go
        "FATAL:   container creation failed: configuration disallows users from mounting squashFS in setuid mode, try --userns",
        "FATAL:   container creation failed: fusemount disabled by configuration 'enable fusemount = no'",
        # apptainer internal/pkg/image/unpacker/squashfs.go
        "FATAL:   While performing build: conveyor failed to get: while extracting image: "
        "file does not exist: could not extract squashfs data, unsquashfs not found",
        # hpc/charliecloud bin/ch-run.c FATAL(0, "this ch-run does not support internal SquashFS mounts")
        "ch-run[4242]: error: this ch-run does not support internal SquashFS mounts (ch-run.c:213)",
        # libfuse lib/mount.c (before 3.18 / 3.18+), util/fusermount.c, as squashfuse prints them
        "squashfuse: fuse: device not found, try 'modprobe fuse' first",
        "fuse: device /dev/fuse not found. Kernel module not loaded?",
        "fusermount: mount failed: Operation not permitted",
        # NVIDIA/enroot src/runtime.sh common::err "Failed to mount: ${image}", inside pyxis' log
        "slurmstepd: error: pyxis:     [ERROR] Failed to mount: /lustre/home/alice/pytorch+24.05.sqsh",
        # NERSC/shifter src/shifter.c, src/shifter_core.c
        "FAILED to mount image on loop device.",
        "ERROR: no apparent support for loop devices!",
        # eth-cscs/sarus src/libsarus/utility/mount.cpp ('Failed to loop mount %s on %s')
        "[1.234567] [nid001234-5678] [main] [ERROR] Failed to loop mount /scratch/alice/.sarus/images/pytorch.squashfs "
        "on /var/sarus/rootfs",
    ],
    "apptainer-nvccli-unusable": [
        # apptainer/apptainer engine/apptainer/prepare_linux.go, launch/launcher_linux.go, util/gpu/nvidia.go
        "FATAL:   container creation failed: nvidia-container-cli not allowed in setuid mode",
        "FATAL:   While setting GPU configuration: --fakeroot does not support --nvccli in set-uid installations",
        "FATAL:   container creation failed: /usr/bin not writable in the container",
        "FATAL:   container creation failed: nvidia-container-cli is not owned by root user",
    ],
    "container-gpu-device-unknown": [
        # NVIDIA/nvidia-container-toolkit internal/modifier/cdi/registry.go
        'time="2025-01-01T10:00:00Z" level=warning msg="could not resolve CDI devices: [nvidia.com/gpu=all]"',
    ],
    "nvidia-hook-mode-not-legacy": [
        # NVIDIA/nvidia-container-toolkit cmd/nvidia-container-runtime-hook/hook_config.go assertModeIsLegacy
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: "
        "OCI runtime create failed: runc create failed: unable to start container process: error during container "
        "init: error running hook #0: error running hook: exit status 1, stdout: , stderr: invoking the NVIDIA "
        "Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not supported. Please use the "
        "NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead.: unknown.",
    ],
    "unprivileged-userns-unavailable": [
        # apptainer cmd/starter/c/starter.c: fatalf("Failed to create user namespace: %s\n", nserror(...))
        # and nserror's texts
        "FATAL:   Failed to create user namespace: user namespace disabled",
        "FATAL:   Failed to create user namespace: maximum number of user namespaces exceeded, check /proc/sys/user/max_user_namespaces",
        "FATAL:   Failed to create user namespace: user namespace requires to set /proc/sys/kernel/unprivileged_userns_clone to 1",
        # starter.c infof("Unprivileged user namespaces may not be enabled\n")
        "INFO:    Unprivileged user namespaces may not be enabled",
        # apptainer engine/apptainer/prepare_linux.go sylog.Fatalf
        "FATAL:   User namespace required but not allowed by configuration.",
        # apptainer launch/launcher_linux.go sylog.Fatalf("--fakeroot requires either being in %v, ...")
        "FATAL:   --fakeroot requires either being in /etc/subuid, unprivileged user namespaces, or the fakeroot command",
        # hpc/charliecloud bin/ch_core.c Zf(unshare(...), "can't init user+mount namespaces")
        "ch-run[1234]: error: can't init user+mount namespaces (ch_core.c:739 22 Invalid argument)",
        # NVIDIA/enroot bin/enroot-nsenter.c err(EXIT_FAILURE, "failed to create user namespace")
        "enroot-nsenter: failed to create user namespace: Operation not permitted",
    ],
    "env-torch-cuda-arch-list-invalid": [
        # torch/utils/cpp_extension.py _get_cuda_arch_flags (named right before this harvest: a comma list)
        "ValueError: Unknown CUDA arch (8.6,8.9) or GPU not supported",
    ],
    "cuda-arch-value-malformed": [
        # nvcc (CUDA 13.0) run here: -arch=sm_86;sm_89, -arch=sm_86,sm_89, -arch=8.6, -arch=sm_8.6
        "nvcc fatal   : Unsupported gpu architecture 'sm_86;sm_89'",
        "nvcc fatal   : Unsupported gpu architecture 'sm_86,sm_89'",
        "nvcc fatal   : Unsupported gpu architecture '8.6'",
        "nvcc fatal   : Unsupported gpu architecture 'sm_8.6'",
        # nvcc's older wording of the same check ('Value '%s' is not defined for option '%s'')
        "nvcc fatal   : Value '8.6' is not defined for option 'gpu-architecture'",
        "nvcc fatal   : Value 'sm_80,sm_86' is not defined for option 'gpu-architecture'",
        # nvcc run here: -gencode=arch=compute_86 (no code=)
        "nvcc fatal   : Option '--generate-code arch=compute_86', missing code",
        # CMake 3.25 Modules/CMakeDetermineCUDACompiler.cmake:277 and :279 (run here)
        "CMake Error at /usr/share/cmake-3.25/Modules/CMakeDetermineCUDACompiler.cmake:277 (message):\n"
        "  CMAKE_CUDA_ARCHITECTURES must be non-empty if set.",
        "CMake Error at /usr/share/cmake-3.25/Modules/CMakeDetermineCUDACompiler.cmake:279 (message):\n"
        "  CMAKE_CUDA_ARCHITECTURES:\n\n    sm_86\n\n  is not one of the following:\n\n"
        "    * a semicolon-separated list of integers, each optionally\n      followed by '-real' or '-virtual'",
        # CMake 3.25's C++ side (run here with set_property(TARGET k PROPERTY CUDA_ARCHITECTURES ""))
        'CMake Error in CMakeLists.txt:\n  CUDA_ARCHITECTURES is empty for target "k".',
    ],
    "build-path-has-spaces": [
        # nvcc (CUDA 13.0) run here: nvcc -c a b.cu -o x.o
        "nvcc fatal   : A single input file is required for a non-link phase when an outputfile is specified",
    ],
    "msvc-given-gcc-flags": [
        # MSVC (closed source) as training-side threads paste it: CharlesShang/FastMaskRCNN#173,
        # PartnershipOnAI/safelife#11, libigl/libigl-example-project#2
        "cl : Command line error D8021 : invalid numeric argument '/Wno-cpp'",
        "cl : Command line error D8021 : invalid numeric argument '/Wno-shorten-64-to-32'",
        "cl : Command line error D8021 : invalid numeric argument '/Wextra'",
    ],
    "build-dir-unusable": [
        # setuptools/_distutils/dir_util.py mkpath: DistutilsFileError(f"could not create '{name}': {exc.args[-1]}")
        "error: could not create 'build/lib.linux-x86_64-cpython-310/flash_attn': Permission denied",
        "error: could not create 'build/temp.linux-x86_64-cpython-311': Read-only file system",
        # torch/utils/cpp_extension.py _get_build_directory (os.makedirs under TORCH_EXTENSIONS_DIR)
        "PermissionError: [Errno 13] Permission denied: '/home/shared/.cache/torch_extensions/py310_cu121'",
        # glibc's loader on a noexec /tmp, when torch dlopens what it built there
        "ImportError: /tmp/torch_extensions/py310_cu121/fused_adam/fused_adam.so: failed to map segment from shared object: Operation not permitted",
        "ImportError: /tmp/torchinductor_alice/triton/0/ab/cuda_utils.so: failed to map segment from shared object",
        # nvcc (CUDA 13.0) run here with TMPDIR=/nonexistent; GNU as with -o into a missing directory
        "nvcc fatal   : Could not open output file '/nonexistent/tmpxft_00003f0f_0000000a'",
        "Fatal error: can't create build/temp.linux-x86_64-cpython-310/csrc/selective_scan.o: No such file or directory",
        # ninja src/disk_interface.cc RealDiskInterface::MakeDir
        "ninja: error: mkdir(/opt/conda/lib/python3.10/site-packages/xformers/build/temp): Permission denied",
        # torch/utils/cpp_extension.py _create_if_not_exist (the precompiled header beside torch's headers)
        "RuntimeError: Fail to create path /usr/lib/python3/dist-packages/torch/include/torch",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES)

test_new_codes_are_sourced_roots = sourced_roots_test([
    "cuda-arch-value-malformed", "build-path-has-spaces", "build-dir-unusable",
    "container-image-mount-failed", "unprivileged-userns-unavailable", "nvidia-hook-mode-not-legacy",
    "apptainer-nvccli-unusable", "msvc-given-gcc-flags",
])

# notices of healthy runs with the same words: they must name nothing
test_healthy_notices_name_nothing = healthy_test([
    # apptainer launch/launcher_linux.go setNvCCLIConfig (Infof)
    "INFO:    Setting 'NVIDIA_VISIBLE_DEVICES=all' to emulate legacy GPU binding.",
    "INFO:    Setting --writable-tmpfs (required by nvidia-container-cli)",
    # apptainer cmd/internal/cli/build_linux.go: a warning about %test sections, not a failure
    "WARNING: Due to writable-tmpfs limitations, %test sections will fail with --nvccli & --fakeroot",
    # apptainer launch/launcher_linux.go and cmd/internal/cli/build_linux.go (fakeroot fallbacks)
    "INFO:    Using fakeroot command combined with root-mapped namespace",
    "INFO:    User not listed in /etc/subuid, trying root-mapped namespace",
    # apptainer internal/pkg/image/driver/imagedriver.go: the SIF is then extracted to a sandbox
    "INFO:    squashfuse not found, will not be able to mount SIF or other squashfs files",
    "INFO:    fuse-overlayfs not found, will not be able to use FUSE overlay",
    "INFO:    Converting SIF file to temporary sandbox...",
    # compat32 only: 64-bit programs are unaffected
    "WARNING: Could not find any 32-bit nv libraries on this host!",
    # correct architecture syntax
    "nvcc -gencode=arch=compute_86,code=sm_86 -gencode=arch=compute_89,code=sm_89 -c kernel.cu -o kernel.o",
    'export TORCH_CUDA_ARCH_LIST="8.6;8.9+PTX"',
    "-- CMAKE_CUDA_ARCHITECTURES=86;89 (from CUDAARCHS)",
    # torch/utils/cpp_extension.py _get_cuda_arch_flags (logger.debug today, a warning in torch 1.x/2.0-2.5)
    "TORCH_CUDA_ARCH_LIST is not set, using TORCH_CUDA_ARCH_LIST='8.6;9.0+PTX' for visible GPU architectures. "
    "Set os.environ['TORCH_CUDA_ARCH_LIST'] to override.",
    # setuptools and torch's cpp_extension on healthy builds
    "creating build/temp.linux-x86_64-cpython-310/csrc",
    "Using /home/alice/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...",
    # nvidia-ctk's notices on a healthy CDI setup
    'time="2025-01-01T10:00:00Z" level=info msg="Auto-detected mode as \'legacy\'"',
])


def test_a_known_architecture_nvcc_is_too_old_for_stays_nvcc_arch_unsupported():
    # one architecture in the right syntax: the toolkit is older than it, not the value misspelt
    assert _codes("nvcc fatal   : Unsupported gpu architecture 'compute_120'\n")[:1] == ["nvcc-arch-unsupported"]
    assert _codes("nvcc fatal   : Value 'sm_90a' is not defined for option 'gpu-architecture'\n")[:1] == \
        ["nvcc-arch-unsupported"]
    assert _codes("nvcc fatal   : Unsupported gpu architecture 'compute_35'\n")[:1] == ["nvcc-arch-dropped"]
    # CMake's empty `native` detection keeps its own cause
    assert _codes("nvcc fatal   : Unsupported gpu architecture 'compute_'\n")[:1] == ["build-native-arch-without-gpu"]


def test_a_library_that_cannot_be_mapped_for_lack_of_memory_is_no_noexec_mount():
    assert "build-dir-unusable" not in _codes(
        "OSError: /scratch/x/lib.so: failed to map segment from shared object: Cannot allocate memory\n")


def test_the_nv_libraries_line_still_outranks_the_files_line():
    log = ("WARNING: Could not find any nv files on this host!\n"
           "WARNING: Could not find any nv libraries on this host!\n"
           "RuntimeError: Found no NVIDIA driver on your system.\n")
    assert _codes(log)[:1] == ["no-nvidia-driver"]
