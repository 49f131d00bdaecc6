"""A refine's rules are read in their order, on the hit's neighbours and then on the log's clue
lines (issue 8; reasoning._refined). A container started with bare ``--device /dev/nvidia*``
flags and no GPU runtime has the device nodes but not the host driver's libcuda, so cudart's
"CUDA driver version is insufficient" (35) there is the missing NVIDIA Container Toolkit, not a
prebuilt program's old driver (NVIDIA/nvidia-docker#24, maintainer flx42), wherever the
`docker run` line is in the log. Without that line, or with the GPU runtime on it, the prebuilt
program's reading stays."""
import pytest

from test_explain_patterns import codes_of as codes

QUERY = ("./deviceQuery Starting...\n"
         " CUDA Device Query (Runtime API) version (CUDART static linking)\n"
         "cudaGetDeviceCount returned 35\n"
         "-> CUDA driver version is insufficient for CUDA runtime version\n"
         "Result = FAIL\n")
FILLER = "\n".join(f"note {i}: the host driver is 535.104.05" for i in range(6)) + "\n"


@pytest.mark.parametrize("run", [
    "docker run --device /dev/nvidia0:/dev/nvidia0 --device /dev/nvidiactl:/dev/nvidiactl -it nvidia/cuda:12.2.0-devel-ubuntu22.04 bash",
    "$ docker run --device=/dev/nvidia-uvm --device=/dev/nvidia0 --device=/dev/nvidiactl -it img",
    "    podman run --device /dev/nvidia0 --device /dev/nvidiactl --device /dev/nvidia-uvm img ./deviceQuery",
])
@pytest.mark.parametrize("where", ["after", "before"])
def test_bare_device_flags_name_the_missing_toolkit(run, where):
    text = QUERY + FILLER + run + "\n" if where == "after" else run + "\n" + FILLER + QUERY
    assert codes(text)[0] == "container-toolkit-missing", text


@pytest.mark.parametrize("run", [
    "docker run --gpus all --device /dev/nvidia0 -it nvidia/cuda bash",
    "docker run --runtime nvidia --device=/dev/nvidia0 -it nvidia/cuda bash",
    "nvidia-docker run --device /dev/nvidia0 -it nvidia/cuda bash",
    "docker run --device /dev/fuse -it nvidia/cuda bash",
])
def test_the_gpu_runtime_or_another_device_keeps_the_old_driver_reading(run):
    assert codes(QUERY + FILLER + run + "\n")[0] == "driver-too-old-for-build"


def test_without_a_run_line_the_prebuilt_program_reading_stays():
    assert codes(QUERY)[0] == "driver-too-old-for-build"
