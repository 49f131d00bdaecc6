"""The HTML report in a real headless browser (Debian's chromium + chromedriver, via selenium).

Loads real reports (the H200 validation runs: healthy and the seed's no-compiler case; the
GPU-less CPU stack diagnosed here), and checks what a person would: no console errors, no
network request beyond the file itself, the root-cause node and its symptom path in the DOM,
a click that opens the details, and a page that fits 1280 px and 400 px windows.
Screenshots go to docs/html/ when STACKPEEL_SCREENSHOTS is set (how the committed ones were made).
"""

import json
import os
import shutil
from pathlib import Path

import pytest

from stackpeel.model import Report
from stackpeel.render import render

ROOT = Path(__file__).resolve().parents[1]
H200 = ROOT / "docs" / "validation" / "2026-11-29-h200" / "reports"
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (test extra) not installed")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver")


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield drv
    drv.quit()


def load(browser, html_text, tmp_path, width):
    page = tmp_path / "report.html"
    page.write_text(html_text.replace(str(ROOT), "&lt;repo&gt;"))  # screenshots name no checkout path
    browser.set_window_size(width, 900)
    browser.get_log("performance")  # drop earlier pages' events
    browser.get(page.as_uri())
    return page


def requests_made(browser):
    urls = []
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def report_of(name):
    return Report.from_dict(json.loads((H200 / f"{name}.json").read_text()))


def shoot(browser, name, height=None):
    """Save what the window shows (``height``: taller first, from the top of the page)."""
    if os.environ.get("STACKPEEL_SCREENSHOTS"):
        out = ROOT / "docs" / "html"
        out.mkdir(exist_ok=True)
        if height:
            browser.set_window_size(browser.get_window_size()["width"], height)
            browser.execute_script("window.scrollTo(0, 0)")
        browser.save_screenshot(str(out / name))


@pytest.mark.parametrize("width", [1280, 400])
def test_seed_no_compiler_report(browser, tmp_path, width):
    rep = report_of("fla-no-compiler")
    page = load(browser, render(rep, "html"), tmp_path, width)
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    assert requests_made(browser) == [page.as_uri()]
    root = browser.find_element("id", "node-toolchain-c_compiler")
    assert "root" in root.get_attribute("class") and "ROOT CAUSE" in root.text
    chain = {e.get_attribute("data-from") + ">" + e.get_attribute("data-to")
             for e in browser.find_elements("css selector", "path.edge.chain")}
    assert {"toolchain.c_compiler>toolchain.extension_build", "toolchain.extension_build>triton.build",
            "triton.kernel_launch>kernels.fla"} <= chain
    # not colour alone: the status is written in the node and in its accessible name
    assert "FAIL" in browser.find_element("id", "node-kernels-fla").text
    assert "root cause" in root.get_attribute("aria-label")
    # the page never needs horizontal scrolling; the graph scrolls inside its own box
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    browser.execute_script("document.getElementById('node-kernels-fla').dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    section = browser.find_element("id", "check-kernels-fla")
    assert "selected" in section.get_attribute("class")
    assert section.find_element("css selector", "details").get_attribute("open") is not None
    assert "Failed to find C compiler" in section.get_attribute("textContent")
    shoot(browser, f"seed-no-compiler-{width}.png")


def test_healthy_report(browser, tmp_path):
    load(browser, render(report_of("healthy"), "html"), tmp_path, 1280)
    assert browser.find_element("css selector", ".verdict").text == "no blocking problem found"
    assert browser.find_elements("css selector", "path.edge.chain") == []
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    shoot(browser, "healthy-1280.png")


@pytest.mark.slow
def test_gpu_less_cpu_stack_report(browser, tmp_path, stack_python):
    from stackpeel.engine import check

    rep = check(python=stack_python)
    page = load(browser, render(rep, "html"), tmp_path, 1280)
    assert requests_made(browser) == [page.as_uri()]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    roots = [rc.check_id for rc in rep.diagnosis.blocking]
    assert roots, "the CPU-only stack has a blocking root cause"
    for rid in roots:
        node = browser.find_element("id", "node-" + rid.replace(".", "-"))
        assert "root" in node.get_attribute("class")
    shoot(browser, "cpu-stack-1280.png")


def test_report_text_is_escaped():
    raw = json.loads((H200 / "healthy.json").read_text())
    raw["results"][0]["summary"] = "<script>alert(1)</script>"
    raw["results"][0]["facts"]["x"] = "</pre><img src=x onerror=alert(1)>"
    text = render(Report.from_dict(raw), "html")
    assert "<script>alert(1)</script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<img src=x" not in text


def test_fleet_report(browser, tmp_path):
    """A fleet of the real H200 validation reports (one node per scenario) as one page."""
    from stackpeel.fleet import NodeOutcome, merge
    from stackpeel.render.html import render_fleet_html

    v = ROOT / "docs" / "validation" / "2026-12-01-h200" / "reports"
    nodes = [NodeOutcome(p.stem, "file", "ok", Report.from_dict(json.loads(p.read_text()))) for p in sorted(v.glob("*.json"))]
    nodes.append(NodeOutcome("gpu-dead", "ssh", "unreachable", None, "OSError: [Errno 113] No route to host"))
    page = load(browser, render_fleet_html(merge(nodes)), tmp_path, 1280)
    assert requests_made(browser) == [page.as_uri()]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    # four of nine scenarios lack a compiler: that is the majority here, and the others are odd
    odd = browser.find_element("id", "odd-python-h-hidden")
    assert "python-headers-missing" in odd.text
    assert "gpu-dead: unreachable" in browser.find_element("tag name", "main").text
    # every diagnosed node carries its own graph, with its root outlined
    section = browser.find_element("id", "node-python-h-hidden")
    assert section.find_elements("css selector", "a.node.root")
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")
    shoot(browser, "fleet-1280.png")


# -- explain --format html -------------------------------------------------------------

#: a token of a shape the redaction layer knows, and a value it knows only because an
#: environment variable with a secret name holds it
HF_TOKEN = "hf_" + "Zq8kW2mP4xR7tY1uV3nB5cD9eF0gH6jL"
ENV_SECRET = "q7Rk2Lm9Xw3Pz8Vb"


def seed_log_with_secrets(tmp_path):
    """The seed cascade (tests/test_explain.py: FLA's fallback warning, Triton's swallowed
    'Failed to find C compiler', FLA's AttributeError) with two error lines that hold secrets."""
    from test_explain import SEED

    log = SEED.replace("INFO 12:00:02 step 0\n", "INFO 12:00:02 step 0\n"
                       f"ERROR: hub login failed with HF_TOKEN={HF_TOKEN}\n"
                       f"ERROR: worker {ENV_SECRET} lost its connection\n")
    path = tmp_path / "seed.log"
    path.write_text(log)
    return path


def stackpeel(*args, env=None):
    import subprocess
    import sys

    env = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "stackpeel", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("width", [1280, 400])
def test_explain_html_of_the_seed_log(browser, tmp_path, width):
    log = seed_log_with_secrets(tmp_path)
    proc = stackpeel("explain", str(log), "--format", "html", "--no-live",
                     env=dict(os.environ, MY_SERVICE_PASSWORD=ENV_SECRET))
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout.replace(str(tmp_path), "&lt;tmp&gt;")
    # secrets: both lines are shown (as error lines no entry explains), neither secret is
    assert HF_TOKEN not in text and ENV_SECRET not in text
    assert f"HF_TOKEN=&lt;redacted&gt;" in text and "worker &lt;redacted&gt; lost" in text
    assert "--pass:#1a7f37" in text  # the page's own style is not taken for a secret
    page = load(browser, text, tmp_path, width)
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    assert requests_made(browser) == [page.as_uri()]
    assert browser.find_element("css selector", ".verdict").text.startswith("Root cause: no-c-compiler")
    root = browser.find_element("id", "node-no-c-compiler")
    assert "root" in root.get_attribute("class") and "ROOT CAUSE" in root.text
    assert "line 12" in root.text  # the line that names the cause (two lines were added above it)
    # the symptom it explains, and the red path between them; status in words, not colour alone
    fla = browser.find_element("id", "node-fla-cpu-fallback")
    assert "symptom" in fla.text and "chain" in fla.get_attribute("class")
    chain = {(e.get_attribute("data-from"), e.get_attribute("data-to"))
             for e in browser.find_elements("css selector", "path.edge.chain")}
    assert chain == {("no-c-compiler", "fla-cpu-fallback")}
    assert "no-c-compiler" in browser.find_element("css selector", "svg desc").get_attribute("textContent")
    # the fix and the command that confirms it, in the root's section (the first thing on the page)
    first = browser.find_element("css selector", "main section")
    assert first.get_attribute("id") == "code-no-c-compiler"
    assert "stackpeel check --only toolchain.c_compiler" in first.text and "Fix: Install a C compiler" in first.text
    shoot(browser, f"explain-seed-{width}.png", height=1500)
    # a click on the symptom opens its evidence
    browser.execute_script("document.getElementById('node-fla-cpu-fallback')"
                           ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    section = browser.find_element("id", "code-fla-cpu-fallback")
    assert "selected" in section.get_attribute("class")
    assert "roll back to CPU" in section.text and "line 21: AttributeError" in section.text
    # the exceptions, chained: the AttributeError was raised while handling the RuntimeError
    exc = browser.find_element("id", "exc-21")
    assert "raised while handling the exception at line 12" in exc.text
    assert exc.find_element("css selector", "a").get_attribute("href").endswith("#exc-12")
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_explain_html_of_a_symptom_only_log_draws_the_possible_causes(browser, tmp_path):
    from stackpeel.explain import explain_text
    from stackpeel.explain.render import render as render_explanation

    expl = explain_text("RuntimeError: 0 active drivers ([]). There should only be one.\n")
    load(browser, render_explanation(expl, "html"), tmp_path, 1280)
    top = browser.find_element("id", "node-triton-no-active-driver")
    assert "SYMPTOM" in top.text
    maybe = browser.find_elements("css selector", "a.node.maybe")
    assert maybe and all("possible cause" in m.text for m in maybe)
    assert {m.get_attribute("id")[len("node-"):] for m in maybe} <= set(expl.root.could_be)
    dashed = browser.find_elements("css selector", "path.edge.maybe")
    assert {e.get_attribute("data-to") for e in dashed} == {"triton-no-active-driver"}
    # each possible cause says how to tell whether it is the one
    driver = browser.find_element("id", "maybe-no-nvidia-driver")
    assert "stackpeel check --only gpu.kernel_driver" in driver.text
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_explain_html_scrubs_the_explanation_not_the_page():
    """scrub_fields removes a secret from every text field; scrubbing the finished page instead
    would have rewritten its style (``--pass:#1a7f37`` looks like a password pair)."""
    from dataclasses import replace

    from stackpeel.explain import explain_text
    from stackpeel.explain.render import render as render_explanation
    from stackpeel.redact import scrub_fields, scrub_output

    expl = explain_text("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.\n")
    ev = replace(expl.root.evidence[0], text=expl.root.evidence[0].text + f" token={HF_TOKEN}")
    dirty = replace(expl, source=f"/logs/{ENV_SECRET}.log",
                    candidates=(replace(expl.root, evidence=(ev,)),) + expl.candidates[1:])
    assert HF_TOKEN in render_explanation(dirty, "html")  # the renderer itself is pure
    page = render_explanation(scrub_fields(dirty, [ENV_SECRET]), "html")
    assert HF_TOKEN not in page and ENV_SECRET not in page and "token=&lt;redacted&gt;" in page
    assert "--pass:#1a7f37" in page
    assert "--pass:#1a7f37" not in scrub_output(page)  # why the HTML is not scrubbed afterwards


# -- diff --format html ------------------------------------------------------------------

@pytest.mark.parametrize("width", [1280, 400])
def test_diff_html_healthy_against_no_compiler(browser, tmp_path, width):
    out = tmp_path / "diff.html"
    proc = stackpeel("diff", str(H200 / "healthy.json"), str(H200 / "no-compiler.json"), "--format", "html",
                     "-o", str(out))
    assert proc.returncode == 1, proc.stderr
    page = load(browser, out.read_text(), tmp_path, width)
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    assert requests_made(browser) == [page.as_uri()]
    assert "most explanatory: toolchain.c_compiler: pass \u2192 fail (no-c-compiler)" in \
        browser.find_element("css selector", ".verdict").text
    # the differences, ranked: the compiler's check first, marked as B's root cause
    places = browser.find_elements("css selector", "#differences ~ section.check")
    assert places[0].get_attribute("id") == "place-toolchain-c_compiler"
    assert "root cause on B" in places[0].find_element("tag name", "h3").text
    assert "/opt/gcc/bin/gcc" in places[0].text
    # each difference links to the checks it can explain, and those rows link back
    explains = {a.get_attribute("href").rsplit("#", 1)[1] for a in places[0].find_elements("css selector", "p a")}
    assert {"verdict-toolchain-c_compiler", "verdict-triton-build", "verdict-kernels-fla"} <= explains
    row = browser.find_element("id", "verdict-kernels-fla")
    cells = row.find_elements("tag name", "td")
    assert "pass" in cells[0].text and "FAIL" in cells[1].text and "fla-cpu-fallback" in cells[1].text
    assert cells[2].find_element("tag name", "a").get_attribute("href").endswith("#place-toolchain-c_compiler")
    # both sides graphed: B's root node outlined and its symptom path red; on A it is a passing check
    b_root = browser.find_element("id", "b-node-toolchain-c_compiler")
    assert "root" in b_root.get_attribute("class") and "ROOT CAUSE" in b_root.text
    a_node = browser.find_element("id", "a-node-toolchain-c_compiler")
    assert "root" not in a_node.get_attribute("class") and "pass" in a_node.text
    b_chain = {(e.get_attribute("data-from"), e.get_attribute("data-to"))
               for e in browser.find_elements("css selector", "#graph-b path.edge.chain")}
    assert {("toolchain.c_compiler", "toolchain.extension_build"), ("triton.kernel_launch", "kernels.fla")} <= b_chain
    shoot(browser, f"diff-healthy-no-compiler-{width}.png", height=1500)
    # a click on a box selects that check's row in the verdict table
    browser.execute_script("document.getElementById('b-node-kernels-fla')"
                           ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    assert "selected" in row.get_attribute("class")
    ids = browser.execute_script("return Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
    assert len(ids) == len(set(ids)), "every id once (two graphs on one page)"
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_explain_and_diff_pages_without_a_cause_or_a_difference_and_hostile_text():
    from stackpeel.compare import compare, render_comparison
    from stackpeel.explain import explain_text
    from stackpeel.explain.render import render as render_explanation

    clean = render_explanation(explain_text("INFO step 1\nINFO step 2\n"), "html")
    assert "No error in this log. No known problem found." in clean and "<svg" not in clean
    unknown = explain_text("Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n"
                           "ZeroDivisionError: <script>alert(1)</script>\n")
    page = render_explanation(unknown, "html")
    assert f"fingerprint {unknown.fingerprint}" in page and "<svg" not in page
    assert "<script>alert(1)" not in page and "ZeroDivisionError: &lt;script&gt;alert(1)&lt;/script&gt;" in page
    # a log line that is evidence, with markup in it, stays text
    hostile = explain_text("RuntimeError: Failed to find C compiler. Please specify via CC environment variable "
                           "<img src=x onerror=alert(1)>\n")
    assert hostile.root.code == "no-c-compiler"
    assert "<img src=x" not in render_explanation(hostile, "html")
    rep = Report.from_dict(json.loads((H200 / "healthy.json").read_text()))
    same = render_comparison(compare(rep, rep), "html")
    assert "No meaningful difference" in same and "What differs" not in same
    raw = json.loads((H200 / "no-compiler.json").read_text())
    raw["results"][0]["facts"]["x"] = "</td><script>alert(1)</script>"
    cmp = compare(rep, Report.from_dict(raw), "<b>A</b>", "B")
    page = render_comparison(cmp, "html", reports=(rep, Report.from_dict(raw)))
    assert "<script>alert(1)" not in page and "<b>A</b>" not in page and "&lt;b&gt;A&lt;/b&gt;" in page


@pytest.mark.slow
def test_explain_html_live_on_the_stack_without_a_compiler(browser, tmp_path, stack_python, nocc_env):
    """explain's live confirmation, run for real (the stack venv, every C compiler off PATH),
    shows in the page: the root's box and section say it was confirmed on this machine."""
    log = seed_log_with_secrets(tmp_path)
    proc = stackpeel("explain", str(log), "--format", "html", "--python", stack_python, env=nocc_env)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert HF_TOKEN not in proc.stdout
    page = load(browser, proc.stdout, tmp_path, 1280)
    assert requests_made(browser) == [page.as_uri()]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
    assert browser.find_element("css selector", ".verdict").text.startswith("Root cause (confirmed live): no-c-compiler")
    assert "confirmed" in browser.find_element("id", "node-no-c-compiler").text
    section = browser.find_element("id", "code-no-c-compiler")
    assert "Live on this machine: confirmed by toolchain.c_compiler (fail)" in section.text
    assert "toolchain.c_compiler" in browser.find_element("tag name", "main").text.split("Live checks", 1)[1]
