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
    page.write_text(html_text.replace(str(ROOT), "<repo>"))  # screenshots name no checkout path
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


def shoot(browser, name):
    if os.environ.get("STACKPEEL_SCREENSHOTS"):
        out = ROOT / "docs" / "html"
        out.mkdir(exist_ok=True)
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
