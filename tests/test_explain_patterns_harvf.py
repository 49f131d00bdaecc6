"""Environment messages harvested from the distributed-training stack's own source (harvf):
torch.distributed (c10d, gloo, torchrun/elastic), Horovod, Open MPI, UCX, aws-ofi-nccl (EFA),
Ray, Slurm and the Kubernetes device plugin. Each message below is the library's text with its
variable parts filled in (the file that raises or prints it is named above it); each must rank
its code first in every wrapper pasted logs put around it. The healthy lines are notices these
programs print on runs that go on: they must name nothing. docs/dev/harvest-harvf.md has the
table of what explain named for each message before and after.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

FAMILIES = {
    "torch-distributed-backend-not-built": [
        # torch/distributed/distributed_c10d.py _new_process_group_helper
        "RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if you build "
        "PyTorch from source on a host that has MPI installed.",
        "RuntimeError: Distributed package doesn't have Gloo built in",
    ],
    "collective-rendezvous-unreachable": [
        # torch/distributed/distributed_c10d.py _store_based_barrier
        "torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on "
        "rank 3, for key: store_based_barrier_key:1 (world_size=8, num_workers_joined=4, timeout=0:30:00 "
        "error=Socket Timeout)",
        # torch/csrc/distributed/c10d/TCPStore.cpp wait
        "torch.distributed.DistStoreError: wait timeout after 300000ms, keys: /default_pg/0//cuda//0",
    ],
    "collective-peer-lost": [
        # torch/csrc/distributed/c10d/Utils.hpp recvBytes
        "torch.distributed.DistNetworkError: Failed to recv, got 0 bytes. Connection was likely closed. "
        "Did the remote server shutdown or crash?",
    ],
    "collective-hang": [
        # gloo/transport/tcp/unbound_buffer.cc waitRecv
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting "
        "1800000ms for recv operation to complete",
    ],
    "torch-cuda-unavailable": [
        # torch/distributed/run.py determine_local_world_size (--nproc-per-node gpu)
        "ValueError: Cuda is not available.",
    ],
    "horovod-built-without-feature": [
        # horovod/common/util.py check_extension
        "ImportError: Extension horovod.torch has not been built: /usr/local/lib/python3.8/dist-packages/"
        "horovod/torch/mpi_lib_v2.cpython-38-x86_64-linux-gnu.so not found",
        # horovod/runner/launch.py
        "ValueError: Gloo support has not been built.  If this is not expected, ensure CMake is installed "
        "and reinstall Horovod with HOROVOD_WITH_GLOO=1 to debug the build error.",
        "ValueError: MPI support has not been built.  If this is not expected, ensure MPI is installed and "
        "reinstall Horovod with HOROVOD_WITH_MPI=1 to debug the build error.",
        "ValueError: Neither MPI nor Gloo support has been built. Try reinstalling Horovod ensuring that "
        "either MPI is installed (MPI) or CMake is installed (Gloo).",
        "ValueError: Gloo support is required to use elastic training, but has not been built.  Ensure "
        "CMake is installed and reinstall Horovod with HOROVOD_WITH_GLOO=1 to debug the build error.",
        # horovod/common/basics.py
        "ValueError: Horovod has not been built with MPI support. Ensure MPI is installed and reinstall "
        "Horovod with HOROVOD_WITH_MPI=1 to debug the build error.",
        # horovod/runner/mpi_run.py _MPI_NOT_FOUND_ERROR_MSG
        "Exception: horovod does not find an installed MPI.",
        # horovod CMakeLists.txt message(FATAL_ERROR ...)
        "  MPI is not installed, try changing HOROVOD_CPU_OPERATIONS.",
        "  Horovod requires NCCL 2.0 or later version please upgrade.",
    ],
    "extension-torch-mismatch": [
        # horovod/common/exceptions.py get_version_mismatch_message
        "horovod.common.exceptions.HorovodVersionMismatchError: Framework pytorch installed with version "
        "2.1.0+cu121 but found version 2.2.1+cu121.",
    ],
    "mpi-run-as-root-refused": [
        # Open MPI orterun.c (v1-v4) and PRRTE schizo_base_frame.c (v5)
        "mpirun has detected an attempt to run as root.",
        "prterun has detected an attempt to run as root.",
        "Running at root is *strongly* discouraged as any mistake (e.g., in",
    ],
    "mpi-slurm-pmi-missing": [
        # Open MPI help-ess-singleton.txt / help-ess-pmi.txt
        'The application appears to have been direct launched using "srun", but OMPI was not built with '
        "SLURM's PMI support and therefore cannot execute.",
    ],
    "launcher-ssh-unreachable": [
        # Open MPI orte/mca/plm/base/help-plm-base.txt
        "ORTE was unable to reliably start one or more daemons.",
        "An ORTE daemon has unexpectedly failed after launch and before communicating back to mpirun.",
    ],
    "memlock-limit-low": [
        # Open MPI's openib BTL, UCX src/uct/ib/base/ib_md.c + ib_log.c (already named: kept here)
        "The OpenFabrics (openib) BTL failed to initialize while trying to allocate some locked memory.",
        "[1700000000.123456] [node1:1234 :0]          ib_md.c:309  UCX  ERROR ibv_reg_mr(address=0x7f0000000000, "
        "length=4096, access=0xf) failed: Cannot allocate memory : Please set max locked memory (ulimit -l) to "
        "'unlimited' (current: 64 kbytes)",
    ],
    "nccl-shm-too-small": [
        # UCX src/uct/sm/mm/posix/mm_posix.c uct_posix_segment_open
        "[1700000000.123456] [node1:1234 :0]        mm_posix.c:233  UCX  ERROR Not enough memory to write total "
        "of 4294967296 bytes. Please check that /dev/shm or the directory you specified has more available memory.",
    ],
    "nccl-ib-transport-error": [
        # UCX src/uct/ib/mlx5/ib_mlx5_log.c
        "[1700000000.123456] [node1:1234 :0]   ib_mlx5_log.c:177  UCX  ERROR Transport retry count exceeded on "
        "mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)",
    ],
    "nccl-ib-hca-wrong": [
        # UCX src/ucp/core/ucp_context.c ucp_report_unavailable
        "[1700000000.123456] [node1:1234 :0]    ucp_context.c:1508 UCX  WARN  network device 'mlx5_4:1' is not "
        "available, please use one or more of: 'eth0'(tcp), 'lo'(tcp)",
    ],
    "gpudirect-rdma-unavailable": [
        # UCX src/uct/ib/base/ib_md.c uct_ib_md_open_common
        "[1700000000.123456] [node1:1234 :0]          ib_md.c:1449 UCX  ERROR mlx5_0: Couldn't enable GPUDirect "
        "RDMA. Please make sure nv_peer_mem, amdgpu plugin, or Intel Xe driver is installed correctly, or dmabuf "
        "is supported.",
    ],
    "nccl-ofi-provider-unavailable": [
        # aws-ofi-nccl src/nccl_ofi_rdma.cpp / nccl_ofi_sendrecv.cpp / nccl_ofi_net.cpp
        "node1:1234:1290 [0] nccl_net_ofi_rdma_init:7308 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data "
        "available",
        "node1:1234:1290 [0] NCCL WARN NET/OFI Unable to find a protocol that worked.  Failing initialization.",
        "node1:1234:1290 [0] NCCL WARN NET/OFI Couldn't find any optimal provider",
        "node1:1234:1290 [0] NCCL WARN NET/OFI EFA provider requires at least libfabric version 1.22.0.",
        "node1:1234:1290 [0] NCCL WARN NET/OFI Failed to initialize rdma protocol",
    ],
    "scheduler-gpu-request-unsatisfiable": [
        # ray/train/_internal/backend_executor.py (and xgboost_ray, ray.util.sgd)
        "TimeoutError: Placement group creation timed out. Make sure your cluster either has enough resources "
        "or use an autoscaling cluster. Current resources available: {'CPU': 16.0, 'memory': 1.0e10}, resources "
        "requested by the placement group: [{'CPU': 1, 'GPU': 1}, {'CPU': 1, 'GPU': 1}]",
        # slurm src/common/slurm_errno.c
        "sbatch: error: Invalid GRES specification (with and without type identification)",
        "srun: error: Unable to create step for job 1234: Insufficient GRES available in allocation",
        "sbatch: error: Batch job submission failed: Requested GRES option unsupported by configured "
        "SelectType plugin",
        "sbatch: error: Batch job submission failed: Requested node configuration is not available",
    ],
    "k8s-gpu-insufficient": [
        # kubernetes pkg/kubelet/cm/devicemanager/manager.go devicesToAllocate
        "Warning  UnexpectedAdmissionError  2m  kubelet  Allocate failed due to requested number of devices "
        "unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected",
    ],
    "container-toolkit-missing": [
        # NVIDIA k8s-device-plugin cmd/nvidia-device-plugin/main.go
        "I0101 00:00:00.000000       1 main.go:317] No devices found. Waiting indefinitely.",
    ],
}



def _skip(msg, wrapper):
    # (Ray's placement-group TimeoutError, one line of 300+ characters whose GPU bundles come last,
    # is read whole when word-wrapped at 80 columns: parser.soft_wrap_paragraph, session 20)
    return None


test_message_found_in_every_wrapper, test_every_message_is_matched_by_a_signature_of_its_code = \
    family_tests(FAMILIES, skip=_skip)

test_new_codes_are_sourced_roots = sourced_roots_test([
    "torch-distributed-backend-not-built", "mpi-run-as-root-refused", "mpi-slurm-pmi-missing",
    "nccl-ofi-provider-unavailable", "horovod-built-without-feature", "gpudirect-rdma-unavailable",
])

test_healthy_notices_name_nothing = healthy_test([
    # torch/csrc/distributed/c10d/socket.cpp: IPv6 attempts on hosts without IPv6 (IPv4 follows)
    "[W socket.cpp:436] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address "
    "family not supported by protocol).",
    "[W socket.cpp:663] [c10d] The client socket cannot be initialized to connect to [localhost]:29500 "
    "(errno: 97 - Address family not supported by protocol).",
    "[W socket.cpp:663] [c10d] The IPv6 network addresses of (node-1, 29500) cannot be retrieved (gai error: "
    "-2 - Name or service not known).",
    # torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: the device guess of every init without device_id
    "[rank0]:[W ProcessGroupNCCL.cpp:4115] Warning: Guessing device ID based on global rank. This can cause a "
    "hang if rank to GPU mapping is heterogeneous. You can specify device_id in init_process_group()",
    "UserWarning: ProcessGroupNCCL: Rank 0 using best-guess GPU 0 to perform barrier as devices used by this "
    "process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect.",
    "[W Utils.hpp:135] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use "
    "TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function operator())",
    # NCCL / aws-ofi-nccl INFO records of a working run
    "node1:1234:1290 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.",
    "node1:1234:1290 [0] NCCL INFO NET/OFI Selected provider is efa, fabric is efa (found 4 nics)",
    # Open MPI's notices of runs that go on
    "By default, for Open MPI 4.0 and later, infiniband ports on a device are not used by default.  The "
    "intent is to use UCX for these devices.",
    # the same words in healthy settings and summaries
    "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
    "horovodrun --check-build: [X] PyTorch [X] MPI [X] Gloo [X] NCCL",
    "srun --mpi=pmix --gres=gpu:4 python train.py",
    "Placement group has started.",
    "ray status: 8.0/8.0 GPU, 64.0/64.0 CPU",
])


def _top(text: str):
    return [c.code for c in explain_text(text).candidates][:1]


def test_no_cuda_gpus_inside_a_ray_task_is_rays_cuda_visible_devices():
    # ray/_private/accelerators/nvidia_gpu.py: Ray sets CUDA_VISIBLE_DEVICES='' for a task or actor
    # that reserved no GPU (num_gpus unset); the same line outside Ray stays torch's symptom
    text = ("ray.exceptions.RayTaskError(RuntimeError): ray::RayTrainWorker._RayTrainWorker__execute() "
            "(pid=1234, ip=10.0.0.1)\n"
            "RuntimeError: No CUDA GPUs are available\n")
    assert _top(text) == ["cuda-visible-devices-hides-gpus"]
    assert _top("RuntimeError: No CUDA GPUs are available\n") == ["torch-cuda-unavailable"]


def test_nccl_still_names_its_own_backend():
    assert _top("RuntimeError: Distributed package doesn't have NCCL built in\n") == ["nccl-not-built-in"]


def test_run_as_root_block_as_mpirun_prints_it():
    # orterun.c writes the block line by line between two rules of dashes
    text = ("-" * 74 + "\nmpirun has detected an attempt to run as root.\n"
            "Running at root is *strongly* discouraged as any mistake (e.g., in\n"
            "defining TMPDIR) or bug can result in catastrophic damage to the OS\n"
            "file system, leaving your system in an unusable state.\n\n"
            "You can override this protection by adding the --allow-run-as-root\n"
            "option to your cmd line. However, we reiterate our strong advice\n"
            "against doing so - please do so at your own risk.\n" + "-" * 74 + "\n")
    assert _top(text) == ["mpi-run-as-root-refused"]


@pytest.mark.parametrize("line", [
    "Placement group creation timed out. Make sure your cluster either has enough resources or use an "
    "autoscaling cluster. Current resources available: {'CPU': 2.0}, resources requested by the placement "
    "group: [{'CPU': 4}]",
])
def test_a_placement_group_without_gpus_is_not_a_gpu_request(line):
    assert "scheduler-gpu-request-unsatisfiable" not in _top(line + "\n")
