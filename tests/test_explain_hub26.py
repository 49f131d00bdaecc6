"""The model hub's and the model loaders' own failures (hub26): a model download or look-up on
the Hugging Face Hub that failed, for which explain said "Unknown error" before.

Three roots, each worded from the libraries' own source (huggingface_hub 2.4.0 utils/_http.py
hf_raise_for_status and file_download.py _raise_on_head_call_error, transformers 5.24.0
utils/hub.py cached_file / has_file, urllib3's connection-pool errors) and from the older
wordings the same functions printed, quoted in training-side threads:

- huggingface-hub-unreachable: no answer from the Hub and no cached copy (network, proxy, TLS,
  offline mode with an empty cache);
- huggingface-repo-access-denied: a gated or private repository without a token that may read it;
- huggingface-model-not-found: no such model id, revision or file (on the Hub or on disk).
"""

from __future__ import annotations

import pytest

from stackpeel.explain import explain_text
from test_explain_patterns import family_tests, healthy_test, sourced_roots_test

FAMILIES = {
    "huggingface-hub-unreachable": [
        # transformers utils/hub.py cached_file, 4.x and 5.x wordings
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
        "cached files and it looks like bert-base-uncased is not the path to a directory containing a file "
        "named config.json.",
        "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in "
        "the cached files.",
        # the same with HF_ENDPOINT set to a mirror
        "OSError: We couldn't connect to 'https://hf-mirror.com' to load this file, couldn't find it in the "
        "cached files and it looks like THUDM/chatglm2-6b is not the path to a directory containing a file "
        "named config.json.",
        # huggingface_hub file_download.py _raise_on_head_call_error, 0.20+ and before
        "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on "
        "the Hub and we cannot find the requested files in the local cache. Please check your connection and "
        "try again or make sure your Internet connection is on.",
        "huggingface_hub.utils._errors.LocalEntryNotFoundError: Connection error, and we cannot find the "
        "requested files in the disk cache. Please try again or make sure your Internet connection is on.",
        # offline mode (HF_HUB_OFFLINE / local_files_only) with files never cached
        "huggingface_hub.errors.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/models/gpt2: "
        "offline mode is enabled. To disable it, please unset the `HF_HUB_OFFLINE` environment variable.",
        "huggingface_hub.errors.LocalEntryNotFoundError: Cannot find the requested files in the disk cache and "
        "outgoing traffic has been disabled. To enable hf.co look-ups and downloads online, set "
        "'local_files_only' to False.",
        # urllib3 under requests (huggingface_hub before 1.0): TLS interception, proxy, timeout
        "requests.exceptions.SSLError: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /bert-base-uncased/resolve/main/config.json (Caused by "
        "SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
        "self signed certificate in certificate chain (_ssl.c:1007)')))\"), '(Request ID: 5f1c)')",
        "requests.exceptions.ProxyError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries "
        "exceeded with url: /api/models/gpt2 (Caused by ProxyError('Cannot connect to proxy.', "
        "OSError('Tunnel connection failed: 407 Proxy Authentication Required')))",
        "urllib3.exceptions.ConnectTimeoutError: (<urllib3.connection.HTTPSConnection object at 0x7f3c>, "
        "'Connection to huggingface.co timed out. (connect timeout=10)')",
    ],
    "huggingface-repo-access-denied": [
        # huggingface_hub hf_raise_for_status (GatedRepoError) with the Hub's X-Error-Message
        "Cannot access gated repo for url https://huggingface.co/black-forest-labs/FLUX.1-dev/resolve/main/"
        "ae.safetensors.",
        "Access to model google/gemma-2-2b-it is restricted. You must have access to it and be authenticated "
        "to access it. Please log in.",
        "Access to model meta-llama/Llama-2-7b-hf is restricted and you are not in the authorized list. Visit "
        "https://huggingface.co/meta-llama/Llama-2-7b-hf to ask for access.",
        "Repo model meta-llama/Llama-2-7b-chat-hf is gated. You must be authenticated to access it.",
        "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-66f4b037-1bf3d7d2)",
        # transformers utils/hub.py cached_file and has_file
        "OSError: You are trying to access a gated repo.",
        "OSError: meta-llama/LlamaGuard-7b is a gated repository. Make sure to request access at "
        "https://huggingface.co/meta-llama/LlamaGuard-7b and pass a token having permission to this repo "
        "either by logging in with `hf auth login` or by passing `token=<your_token>`.",
        # requests' raise_for_status under huggingface_hub before 0.2x
        "requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: "
        "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct/resolve/main/config.json",
    ],
    "huggingface-model-not-found": [
        "OSError: decapoda-research/llama-7b-hf is not a local folder and is not a valid model identifier "
        "listed on 'https://huggingface.co/models'",
        "OSError: None is not a local folder and is not a valid model identifier listed on "
        "'https://huggingface.co/models'",
        "Repository Not Found for url: https://huggingface.co/api/models/foo/bar-7b.",
        "huggingface_hub.errors.RepositoryNotFoundError: 404 Client Error. (Request ID: Root=1-6a2b)",
        "OSError: ./checkpoints/run1 is not a local folder or a valid repository name on 'https://hf.co'.",
        "OSError: v2.0 is not a valid git identifier (branch name, tag name or commit id) that exists for this "
        "model name. Check the model page at 'https://huggingface.co/gpt2' for available revisions.",
        "Revision Not Found for url: https://huggingface.co/bert-base-cased/resolve/v9/config.json.",
        "OSError: ./ckpt does not appear to have a file named config.json. Checkout "
        "'https://huggingface.co/./ckpt/tree/main' for available files.",
    ],
}

test_each_message_heads_explain_in_every_wrapper, test_each_message_is_matched_by_its_code = \
    family_tests(FAMILIES, wrappers={"worker-pid": lambda m: "(Worker pid=1) " + m,
                                     "rank0": lambda m: "[rank0]: " + m})

test_each_new_root_is_sourced = sourced_roots_test(list(FAMILIES))


test_healthy_hub_lines_name_nothing = healthy_test([
    # a healthy download's progress bar and log lines that mention the Hub without failing
    "config.json: 100%|██████████| 665/665 [00:00<00:00, 3.21MB/s]",
    "model.safetensors: 100%|██████████| 548M/548M [00:05<00:00, 104MB/s]",
    "Fetching 11 files: 100%|██████████| 11/11 [00:12<00:00,  1.10s/it]",
    "Downloading shards: 100%|██████████| 2/2 [01:10<00:00, 35.12s/it]",
    "Loading the model from https://huggingface.co/meta-llama/Llama-2-7b-hf (gated: request access first)",
    "Login successful. Your token has been saved to /root/.cache/huggingface/token",
    "INFO: setting HF_HUB_OFFLINE=1 to use the local cache only",
    "See https://huggingface.co/docs/transformers/installation#offline-mode for running offline.",
])


@pytest.mark.parametrize("line", [
    # near misses: the same words about another host, or no failure
    "HTTPSConnectionPool(host='pypi.org', port=443): Max retries exceeded with url: /simple/torch/",
    "Connection to github.com timed out. (connect timeout=15)",
    "this repository is not a local folder",
])
def test_near_misses_name_no_hub_code(line):
    codes = [c.code for c in explain_text(line + "\n").candidates]
    assert not [c for c in codes if c.startswith("huggingface-") and c != "huggingface-hub-api-removed"], codes


def test_connection_error_over_a_401_names_the_network_not_the_token():
    """transformers raises its 'couldn't connect' OSError over huggingface_hub's error; a log with
    both the hub's 401 (requests) and a gated-repo line names the gated repo first."""
    log = ("requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: "
           "https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json\n"
           "huggingface_hub.utils._errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-1)\n"
           "Cannot access gated repo for url https://huggingface.co/meta-llama/Llama-2-7b-hf/resolve/main/config.json.\n")
    codes = [c.code for c in explain_text(log).candidates]
    assert codes[0] == "huggingface-repo-access-denied", codes
