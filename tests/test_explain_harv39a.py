"""harv39a: an unbiased harvest of file systems, permissions and caches (read-only and noexec mounts,
shared /tmp build dirs, HOME and cache variables, disk full and quotas, /dev/shm, NFS/Lustre locks,
SELinux), scored blind, and the general fixes its misses ask for (docs/dev/harv39a.md).

Seventeen new training-side logs; explain named eleven first before any change. The fixed misses
(A1, a program's own message with no signature; G, no code):
- Triton 2.0/2.1 build their default cache dir from ``os.environ["HOME"]``; a process started
  without HOME (supervisor, a CI runner) fails with ``KeyError: 'HOME'`` (QwenLM/Qwen#564,
  pytorch/pytorch#97076); now ``triton-cache-unusable`` (the bare KeyError only beside a Triton
  frame);
- transformers' (and diffusers') warning ``There was a problem when trying to write in your cache
  folder (...)`` before the download fails (kserve/kserve#3562, OpenShift's arbitrary UID under a
  read-only ``/.cache``); now ``huggingface-cache-unwritable``, as a warning (the line alone is
  also printed by healthy runs that read local files only);
- the kernel's SELinux AVC record ``avc:  denied  { entrypoint } for ...`` (NVIDIA/nvidia-docker#814),
  which no code named (the log was silent); a new code ``selinux-denial``.
Each message is the program's own text (its source, or a training-side thread's paste), run through
the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from stackpeel.explain.knowledge import load
from test_explain_patterns import WRAPPERS, assert_sourced_root, codes_of as _codes, family_tests

# the kernel's AVC record as the reporter of NVIDIA/nvidia-docker#814 pasted it from /var/log/messages
AVC_814 = ('Aug 30 16:12:35 viola audit[25758]: AVC avc:  denied  { entrypoint } for  pid=25758 '
           'comm="nvidia-docker" path="/usr/bin/docker" dev="sdc3" ino=12832289 '
           'scontext=unconfined_u:system_r:xserver_t:s0-s0:c0.c1023 '
           'tcontext=system_u:object_r:container_runtime_exec_t:s0 tclass=file permissive=0')
# the same record format (security/selinux/avc.c) for a container opening a GPU device node, as
# ausearch prints it (values made up, format the kernel's)
AVC_DEVICE = ('type=AVC msg=audit(1700000000.123:456): avc:  denied  { read write } for  pid=4242 '
              'comm="python3" name="nvidiactl" dev="devtmpfs" ino=1001 '
              'scontext=system_u:system_r:container_t:s0:c1,c2 '
              'tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file permissive=0')
# setroubleshoot's summary line (its template 'SELinux is preventing %s from %s access on the %s %s.')
SETROUBLESHOOT = "SELinux is preventing /usr/bin/python3.11 from read write access on the chr_file nvidia0."

# Triton 2.0/2.1 default_cache_dir, as the traceback prints its line (QwenLM/Qwen#564)
TRITON_HOME_LINE = 'return os.path.join(os.environ["HOME"], ".triton", "cache")'

FAMILIES = {
    "selinux-denial": [AVC_814, AVC_DEVICE, SETROUBLESHOOT],
    "triton-cache-unusable": [TRITON_HOME_LINE],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_selinux_denial_is_a_sourced_root():
    entry = assert_sourced_root("selinux-denial")
    assert entry.layer == "system"
    assert "setsebool" in entry.fix and "ausearch" in entry.fix


def test_nvidia_docker_814_paste_names_selinux():
    text = (
        "SE Linux Permissions\n\n"
        "I just updated my machine today, and when I run an nvidia-docker container, I get the following in "
        "`/var/log/messages`\n\n```\n" + AVC_814 + "\n```\n\nSame happens with `docker-compose`\n"
    )
    assert _codes(text)[:1] == ["selinux-denial"]


def test_selinux_near_misses_stay_quiet():
    # a permissive host logs the denial and allows it; a granted record; other words with 'avc'
    for line in (
        AVC_814.replace("permissive=0", "permissive=1"),
        'type=AVC msg=audit(1700000000.1:7): avc:  granted  { setenforce } for  pid=1 comm="setenforce"',
        "[h264 @ 0x55d0c0] libavcodec: avc: decoding error at frame 12",
        "SELinux status:                 disabled",
        "getenforce: Permissive",
    ):
        assert "selinux-avc-denied" not in _ids(line), line


def test_qwen_564_supervisor_paste_names_the_triton_cache():
    text = (
        "[BUG] raise KeyError(key) from None KeyError: 'HOME'\n\n"
        '  File "/data/home/u/anaconda3/envs/intell/lib/python3.10/site-packages/triton/compiler.py", '
        "line 1304, in default_cache_dir\n"
        '    return os.path.join(os.environ["HOME"], ".triton", "cache")\n'
        '  File "/data/home/u/anaconda3/envs/intell/lib/python3.10/os.py", line 680, in __getitem__\n'
        "    raise KeyError(key) from None\n"
        "KeyError: 'HOME'\n"
    )
    assert _codes(text)[:1] == ["triton-cache-unusable"]


def test_compile_worker_keyerror_home_beside_triton_frames():
    # pytorch/pytorch#97076: the KeyError in the title, Triton's compiler frames in the pytest traceback
    text = (
        "[compile] `KeyError: 'HOME'` (env var missing)\n\n"
        "Trying to run `compile` on github actions via AWS instance gives me:\n\n"
        "E           Traceback (most recent call last):\n"
        'E             File "/usr/local/lib/python3.8/dist-packages/triton/compiler.py", line 1587, in compile\n'
        "E               so_path = make_stub(name, signature, constants)\n"
        'E             File "/usr/local/lib/python3.8/dist-packages/triton/compiler.py", line 1467, in make_stub\n'
    )
    assert _codes(text)[:1] == ["triton-cache-unusable"]


def test_windows_triton_keyerror_home():
    # oobabooga/text-generation-webui#2015 (an old Triton wheel on Windows, where HOME is unset)
    text = (
        "  File \"C:\\envs\\ooba\\lib\\site-packages\\triton\\compiler.py\", line 1218, in default_cache_dir\n"
        '    return os.path.join(os.environ["HOME"], ".triton", "cache")\n'
        '  File "C:\\envs\\ooba\\lib\\os.py", line 680, in __getitem__\n'
        "    raise KeyError(key) from None\n"
        "KeyError: 'HOME'\n"
    )
    assert _codes(text)[:1] == ["triton-cache-unusable"]


def test_keyerror_home_elsewhere_is_not_triton():
    # another program reading HOME: no Triton frame, no Triton cache
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/app/settings.py", line 3, in <module>\n'
        "    CONFIG = os.path.join(os.environ['HOME'], '.myapp')\n"
        '  File "/usr/lib/python3.10/os.py", line 680, in __getitem__\n'
        "    raise KeyError(key) from None\n"
        "KeyError: 'HOME'\n"
    )
    # (the corpus's own KeyError logs may still make it a resemblance guess; no signature reads it)
    entries = {e.entry for c in explain_text(text).candidates for e in c.evidence}
    assert "triton-cache-home-unset" not in entries
    assert "triton-cache-home-unset" not in _ids("KeyError: 'HOMEBREW_PREFIX'")


TRANSFORMERS_WARN = ("There was a problem when trying to write in your cache folder (/.cache/huggingface/hub). "
                     "You should set the environment variable TRANSFORMERS_CACHE to a writable directory.")
DIFFUSERS_WARN = ("There was a problem when trying to write in your cache folder (/home/user/.cache/huggingface/"
                  "diffusers). Please, ensure the directory exists and can be written to.")
FAILURE = (
    "Traceback (most recent call last):\n"
    '  File "/prod_venv/lib/python3.10/site-packages/transformers/configuration_utils.py", line 634, '
    "in get_config_dict\n"
    "    config_dict, kwargs = cls._get_config_dict(pretrained_model_name_or_path, **kwargs)\n"
    "OSError: Can't load the configuration of 'bert-base-uncased'.\n"
)


@pytest.mark.parametrize("wrapper", list(WRAPPERS))
@pytest.mark.parametrize("warn", [TRANSFORMERS_WARN, DIFFUSERS_WARN], ids=["transformers", "diffusers"])
def test_cache_folder_warning_before_a_failure(warn, wrapper):
    expl = explain_text("step 1/10\n" + WRAPPERS[wrapper](warn) + "\n" + FAILURE)
    assert [c.code for c in expl.candidates][:1] == ["huggingface-cache-unwritable"]


def test_kserve_3562_paste_names_the_hf_cache():
    text = (
        "Huggingface server fails to start on OpenShift cluster\n\n```\n" + TRANSFORMERS_WARN + "\n"
        "Traceback (most recent call last):\n"
        '  File "/huggingfaceserver/huggingfaceserver/__main__.py", line 69, in <module>\n'
        "    model.load()\n"
        '  File "/huggingfaceserver/huggingfaceserver/model.py", line 114, in load\n'
        "    model_config = AutoConfig.from_pretrained(model_id_or_path)\n```\n"
    )
    assert _codes(text)[:1] == ["huggingface-cache-unwritable"]


def test_ray_worker_warning_before_ray_task_error():
    # project-codeflare/codeflare-sdk#193: the warning behind Ray's worker prefix
    text = (
        "(train_fn pid=306) There was a problem when trying to write in your cache folder "
        "(/home/ray/.cache/huggingface/hub). You should set the environment variable TRANSFORMERS_CACHE to a "
        "writable directory.\n\n"
        "RayTaskError(PermissionError)             Traceback (most recent call last)\n"
        "Cell In [26], line 2\n"
        "----> 2 ray.get(train_fn.remote())\n"
    )
    assert _codes(text)[:1] == ["huggingface-cache-unwritable"]


def test_cache_folder_warning_alone_is_not_a_failure():
    # Cloud Run and other read-only roots print it on healthy runs that load local files only
    assert "huggingface-cache-unwritable" not in _codes("loading model\n" + TRANSFORMERS_WARN + "\nready\n")
    # transformers' other cache message (moving an old cache) is not this one
    assert "transformers-cache-folder-warning" not in _ids(
        "There was a problem when trying to move your cache:")
