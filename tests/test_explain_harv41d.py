"""harv41d: an unbiased harvest of evaluation harnesses, benchmarks and demo apps that load GPU
models (lm-evaluation-harness, OpenCompass, HELM, benchmark scripts, Gradio/Streamlit demos,
Hugging Face Space code run locally), scored blind, and the general fixes its misses ask for
(docs/dev/harv41d.md).

Twenty-one new training-side logs; explain named ten first before any change. The fixed misses:
- C2, a Mac named in words the Mac context did not know: ``in my Mac`` (OpenTalker/SadTalker#114),
  ``for OS X`` (tensorboy/pytorch_Realtime_Multi-Person_Pose_Estimation#14), ``苹果M1芯片``
  (zai-org/GLM-TTS#31) beside torch's ``Torch not compiled with CUDA enabled``; now
  ``cuda-on-macos`` (the mac-host context and cuda-on-macos' clues);
- A1, 🤗 evaluate's ``Module 'exact_match' doesn't exist on the Hugging Face Hub either`` (a metric
  every harness loads at start-up, unreachable Hub: EleutherAI/lm-evaluation-harness#1561) and
  datasets' ``Couldn't reach 'truthful_qa' on the Hub (ProxyError)``; now
  ``huggingface-hub-unreachable``;
- A1, Streamlit's watcher warning ``Examining the path of torch.classes raised: Tried to instantiate
  class '__path__._path' ...`` (666ghj/BettaFish#215, streamlit/streamlit#10992); the new code
  ``streamlit-watcher-torch-classes`` (a fallback: any other signature outranks it);
- A1, a Gradio demo's ``gradio.exceptions.Error: 'CUDA is not available.'`` on Colab
  (modelscope/facechain#38): the torch-cuda-unavailable symptom, whose Colab clue names
  ``no-nvidia-driver``.
Each message is the library's own text (from its source) or a training-side thread's paste, run
through the wrappers pasted logs put around lines, with near-misses that keep their reading.
"""

from __future__ import annotations

from stackpeel.explain.knowledge import load
from test_explain_patterns import assert_sourced_root, codes_of as _codes, family_tests

# huggingface/datasets load.py dataset_module_factory (the exception class name varies)
DS_PROXY = "ConnectionError: Couldn't reach 'truthful_qa' on the Hub (ProxyError)"
DS_CONN = "ConnectionError: Couldn't reach 'lmms-lab/MMBench' on the Hub (ConnectionError)"
DS_SSL = "ConnectionError: Couldn't reach 'gsm8k' on the Hub (SSLError)"
DS_OFFLINE = "ConnectionError: Couldn't reach 'cais/mmlu' on the Hub (OfflineModeIsEnabled)"
# huggingface/evaluate loading.py evaluation_module_factory, and datasets' load_metric before it
EV_EXACT = ("FileNotFoundError: Couldn't find a module script at /models/lm-evaluation-harness/exact_match/"
            "exact_match.py. Module 'exact_match' doesn't exist on the Hugging Face Hub either.")
EV_ACC = ("FileNotFoundError: Couldn't find a module script at opencompass/accuracy.py. Module 'accuracy' "
          "doesn't exist on the Hugging Face Hub either.")
DS_METRIC = ("FileNotFoundError: Couldn't find a metric script at /work/rouge/rouge.py. Metric 'rouge' "
             "doesn't exist on the Hugging Face Hub either.")
# streamlit lib/streamlit/watcher/local_sources_watcher.py, with torch's RuntimeError on the line
ST_WATCH = ("2025-11-07 19:36:56.282 Examining the path of torch.classes raised: Tried to instantiate class "
            "'__path__._path', but it does not exist! Ensure that it is registered via torch::class_")
ST_WATCH_TB = "2025-05-13 20:02:33.756 Examining the path of torch.classes raised:"
ST_TORCH = ("RuntimeError: Tried to instantiate class '__path__._path', but it does not exist! Ensure that it "
            "is registered via torch::class_")

FAMILIES = {
    "huggingface-hub-unreachable": [DS_PROXY, DS_CONN, DS_SSL, DS_OFFLINE, EV_EXACT, EV_ACC, DS_METRIC],
    "streamlit-watcher-torch-classes": [ST_WATCH, ST_WATCH_TB, ST_TORCH],
}

test_in_every_wrapper, test_own_signature = family_tests(FAMILIES)


def _ids(text):
    return [e.id for e in load().match_line(text)]


def test_streamlit_code_is_sourced():
    entry = assert_sourced_root("streamlit-watcher-torch-classes")
    assert "fileWatcherType none" in entry.fix and "torch.classes.__path__ = []" in entry.fix


# -- cuda-on-macos: the Mac words the reporters used --------------------------------------------

def test_gradio_demo_on_my_mac():
    # OpenTalker/SadTalker#114
    text = ("how to generate the video when running the app.py with cpu?\n\n"
            "I am currently hosting the app within my local machine and would like to test the functions of "
            "the gradio application, however, as I do not have cuda installed in my Mac, I would like to know "
            "if I can use cpu?\n\n"
            "I have tested using inference.py to perform an inference and it works, but just not for the "
            "application\n\n```\n"
            '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
            "AssertionError: Torch not compiled with CUDA enabled\n```\n")
    assert _codes(text)[:1] == ["cuda-on-macos"]


def test_picture_demo_torch_for_os_x():
    # tensorboy/pytorch_Realtime_Multi-Person_Pose_Estimation#14: the Mac word after the error
    text = ('I was trying to run the Python demo `picture_demo.py` however I keep getting error:\n'
            '`File "/usr/local/lib/python3.6/site-packages/torch/cuda/__init__.py", line 51, in _check_driver\n'
            '    raise AssertionError("Torch not compiled with CUDA enabled")\n'
            "AssertionError: Torch not compiled with CUDA enabled`\n\n"
            "Is it possible to run it without CUDA ? \n\nThanks!\n\n"
            "(I installed Pytorch from http://pytorch.org for OS X)\n")
    assert _codes(text)[:1] == ["cuda-on-macos"]


def test_apple_m1_named_in_chinese():
    # zai-org/GLM-TTS#31
    text = ("Inference failed: Torch not compiled with CUDA enabled\n\n"
            "我用的是苹果M1芯片，已经将前面问题都跑通了。最后web起来时报这个错误。\n")
    assert _codes(text)[:1] == ["cuda-on-macos"]


def test_cpu_torch_without_mac_words_stays_cpu_build():
    # Windows and Linux pastes keep their reading, the preposition words alone included
    for text in ("[spyder](paints_undo) C:\\Users\\e\\Paints-UNDO>python gradio_app.py\n"
                 "AssertionError: Torch not compiled with CUDA enabled\n",
                 "I run it in my machine, it says\nAssertionError: Torch not compiled with CUDA enabled\n",
                 "Using a machine with an RTX 3060 and OSS torch\nAssertionError: Torch not compiled with CUDA enabled\n"):
        assert _codes(text)[:1] == ["torch-cpu-only-build"], text


def test_mac_words_near_misses():
    # the context must not read a MAC address, a macro or an OS X-like word inside another
    import re
    import tomllib
    from pathlib import Path
    import stackpeel
    toml = Path(stackpeel.__file__).parent / "knowledge" / "torch.toml"
    pattern = re.compile(tomllib.loads(toml.read_text(encoding="utf-8"))["context"]["mac-host"]["pattern"])
    for text in ("ether in my MAC address table", "on my machine", "using macros", "POS X terminal",
                 "the M1 checkpoint", "苹果树"):
        assert not pattern.search(text), text
    for text in ("in my Mac", "for OS X", "OSX 10.15", "using a Mac", "M2 chip", "苹果M1芯片", "用M3芯片"):
        assert pattern.search(text), text


# -- the Hub out of reach, in the harnesses' words -------------------------------------------------

def test_lm_eval_exact_match_paste_names_the_hub():
    # EleutherAI/lm-evaluation-harness#1561
    text = ("The example command I'm using is:\n```python\naccelerate launch -m lm_eval --model hf \\\n"
            "    --model_args pretrained=/mnt/workspace/models/zephyr-7b-sft-full \\\n"
            "    --tasks hellaswag --batch_size 16\n```\nHowever, this results in a FileNotFoundError as shown "
            "below:\n\n" + EV_EXACT + "\n")
    assert _codes(text)[:1] == ["huggingface-hub-unreachable"]


def test_lm_eval_truthfulqa_traceback_names_the_hub():
    # EleutherAI/lm-evaluation-harness#762 (its traceback's last frames)
    text = ("Selected Tasks: ['truthfulqa_mc']\nUsing device 'cuda'\nTraceback (most recent call last):\n"
            '  File "/mmlu/lm-evaluation-harness/main.py", line 93, in <module>\n    main()\n'
            '  File "/opt/conda/lib/python3.10/site-packages/datasets/load.py", line 1468, in dataset_module_factory\n'
            "    raise ConnectionError(f\"Couldn't reach '{path}' on the Hub ({type(e).__name__})\")\n"
            + DS_PROXY + "\n")
    assert _codes(text)[:1] == ["huggingface-hub-unreachable"]


def test_hub_near_misses_keep_their_reading():
    # the dataset really missing (404: a name that does not exist), the source line of the raise
    # (an f-string, no name in quotes), a module found nowhere without the Hub sentence
    for line in ("FileNotFoundError: Dataset 'gsm8kk' doesn't exist on the Hub or cannot be accessed",
                 "    raise ConnectionError(f\"Couldn't reach '{path}' on the Hub ({type(e).__name__})\")",
                 "FileNotFoundError: Couldn't find a module script at /work/accuracy/accuracy.py.",
                 "Couldn't reach the server, retrying in 5 s"):
        assert not {"hf-datasets-couldnt-reach-hub", "hf-evaluate-module-not-on-hub-either"} & set(_ids(line)), line


# -- Streamlit's watcher and torch.classes -----------------------------------------------------------

def test_streamlit_watcher_traceback_alone_names_the_watcher():
    # the warning with its traceback (harry0703/MoneyPrinterTurbo#675's shape), nothing else failing
    text = (ST_WATCH_TB + "\nTraceback (most recent call last):\n"
            '  File "G:\\AI\\app\\Lib\\site-packages\\streamlit\\watcher\\local_sources_watcher.py", line 217, in '
            "get_module_paths\n    potential_paths = extract_paths(module)\n"
            '  File "G:\\AI\\app\\Lib\\site-packages\\torch\\_classes.py", line 13, in __getattr__\n'
            "    proxy = torch._C._get_custom_class_python_wrapper(self.name, attr)\n" + ST_TORCH + "\n")
    assert _codes(text)[:1] == ["streamlit-watcher-torch-classes"]


def test_streamlit_watcher_gives_way_to_the_real_failure():
    # the warning beside a real failure in the same app: the failure's cause comes first
    text = (ST_WATCH + "\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
            "of 7.75 GiB of which 1.06 MiB is free.\n")
    assert _codes(text)[:1] == ["gpu-out-of-memory"]


def test_streamlit_near_misses_stay_quiet():
    # the watcher's warning for another module, torch's error for another attribute
    for line in ("Examining the path of transformers.models.x raised: No module named 'torchvision'",
                 "RuntimeError: Tried to instantiate class '__version__.__file__', but it does not exist! "
                 "Ensure that it is registered via torch::class_",
                 "torch.classes.__path__ = []  # fix the streamlit watcher"):
        assert "streamlit-examining-path-torch-classes" not in _ids(line), line


# -- a Gradio demo's own "CUDA is not available" -----------------------------------------------------

def test_gradio_cuda_not_available_on_colab():
    # modelscope/facechain#38: a Colab runtime with no GPU chosen
    text = ("在colab上跑起来，用的是A100，到最后一步都正常，网页打开，上传照片后，点击开始训练，提示“CUDA is not available”\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.10/dist-packages/gradio/routes.py", line 488, in run_predict\n'
            "    output = await app.get_blocks().process_api(\n"
            '  File "/content/facechain/app.py", line 123, in run\n'
            "    raise gr.Error('CUDA is not available.')\n"
            "gradio.exceptions.Error: 'CUDA is not available.'\n")
    assert _codes(text)[:1] == ["no-nvidia-driver"]


def test_gradio_cuda_not_available_is_the_symptom_elsewhere():
    text = "gradio.exceptions.Error: 'CUDA is not available.'\n"
    assert "torch-cuda-unavailable" in _codes(text)[:2]
    assert "torch-is-available-false" in _ids("gradio.exceptions.Error: 'CUDA is not available.'")
    # a Gradio error about something else is not this
    assert "torch-is-available-false" not in _ids("gradio.exceptions.Error: 'Please upload an image.'")
