"""`benchmark leaderboard --format site`: the static site, its files, and a real browser run.

The browser test drives the Chromium of the OS packages (chromium, chromium-driver) headless with
selenium; it loads the index, sorts a column, follows an entry link and reads the console log.
It is skipped, with the reason, only where no such browser is installed.
"""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchmark.cli import main

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
HOSTILE = '<img src=x onerror="alert(1)">'


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Built-in constant and oracle, and two submissions, on the tiny dataset; the site of them."""
    from tests.leaderboards.conftest import make_dataset, write_submission

    import schedulers.normalisers as normalisers

    saved = normalisers.cpsat_feasible_size
    normalisers.cpsat_feasible_size = lambda n, m: False  # no CP-SAT optimum: seconds per instance
    try:
        root = tmp_path_factory.mktemp("site")
        ds, frame = make_dataset(root / "ds")
        fp = json.loads((ds / "dataset.json").read_text())["fingerprint"]
        test = frame[frame["split"] == "test"]
        entries = root / "entries"
        assert main(["leaderboard", "--rebuild-builtin", "--methods", "constant,oracle", "--data", str(ds),
                     "--entries-dir", str(entries), "--quiet"]) == 0
        for i, (name, factor) in enumerate(((HOSTILE, 1.05), ("Second One", 1.8))):
            preds = pd.DataFrame({"job_id": test["job_id"].astype(str), "p_hat": test["p_star"].to_numpy() * factor})
            sub = write_submission(root / f"sub{i}", fingerprint=fp, preds=preds, track="scheduling", name=name)
            assert main(["submit", str(sub), "--track", "scheduling", "--data", str(ds), "--entries-dir", str(entries),
                         "--quiet"]) == 0
        out = root / "site"
        assert main(["leaderboard", "--format", "site", "--output", str(out), "--entries-dir", str(entries), "--quiet"]) == 0
        yield out
    finally:
        normalisers.cpsat_feasible_size = saved


def test_site_files_links_and_escaping(site):
    index = (site / "index.html").read_text()
    assert index.startswith("<!DOCTYPE html>") and 'class="sortable"' in index and "sort.js" in index
    assert "<img src=x" not in index and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in index
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    assert "index.html" in pages and len([p for p in pages if p.startswith("entries/scheduling/")]) == 4
    assert len([p for p in pages if p.startswith("entries/prediction/")]) == 2
    import re

    for page in site.rglob("*.html"):  # every local link and image resolves
        for target in re.findall(r'(?:href|src)="([^"#]+)"', page.read_text()):
            if not target.startswith(("http://", "https://", "data:")):
                assert (page.parent / target).exists(), (page, target)
    entry_page = next((site / "entries" / "scheduling").glob("second-one-*.html")).read_text()
    assert "Scheduling score" in entry_page and "95 % interval" in entry_page and "ratio with the blind p̂" in entry_page
    assert "-p-hat-vs-p.png" in entry_page and "-ratios.png" in entry_page and "predictions sha256" in entry_page
    pngs = sorted((site / "entries" / "scheduling").glob("second-one-*.png"))
    assert pngs and all(png.with_suffix(".svg").read_text().startswith("<?xml") for png in pngs)  # SVG beside each
    hostile_page = next(p for p in (site / "entries" / "scheduling").glob("*.html") if "img-src" in p.name).read_text()
    assert "<img src=x" not in hostile_page


def test_site_needs_an_output_folder(tmp_path, capsys):
    assert main(["leaderboard", "--format", "site", "--entries-dir", str(tmp_path)]) == 2
    assert "--output DIR" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["leaderboard", "--format", "site", "--output", str(tmp_path / "file"), "--entries-dir", str(tmp_path)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    assert main(["leaderboard", "--format", "site", "--output", str(mine), "--entries-dir", str(tmp_path)]) == 2
    assert "not written by `benchmark leaderboard`" in capsys.readouterr().err
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]  # the user's folder is untouched


def _browser():
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists() and not shutil.which(Path(p).name)]
    if missing:
        pytest.skip(f"no browser installed: {', '.join(missing)} missing (apt-get install chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    return webdriver, Service, options


def test_site_in_a_real_browser(site, tmp_path):
    webdriver, Service, options = _browser()
    from selenium.webdriver.common.by import By

    options.add_argument(f"--user-data-dir={tmp_path / 'profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER if Path(CHROMEDRIVER).exists() else shutil.which("chromedriver")),
                              options=options)
    try:
        driver.get((site / "index.html").as_uri())
        assert driver.title == "ATLAS-Bench leaderboards"
        table = driver.find_element(By.CSS_SELECTOR, 'table[data-track="scheduling"]')
        heads = [th.text.strip(" ↕↑↓") for th in table.find_elements(By.TAG_NAME, "th")]
        names = lambda: [r.find_elements(By.TAG_NAME, "td")[1].text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]  # noqa: E731
        scores = lambda: [float(r.find_elements(By.TAG_NAME, "td")[heads.index("Score")].text.split()[0])  # noqa: E731
                          for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
        before = names()
        assert before[-1] == "oracle" and scores() != sorted(scores())  # the reference row comes last in rank order
        # the forest plot above each table: drawn, one label per entry, in the table's rank order, top to bottom
        ranks = [r.find_elements(By.TAG_NAME, "td")[0].text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert len(driver.find_elements(By.CSS_SELECTOR, "figure.forest svg")) == 2  # one per track
        figure = driver.find_element(By.CSS_SELECTOR, 'figure.forest[data-board^="scheduling-"]')
        svg = figure.find_element(By.TAG_NAME, "svg")
        assert svg.size["width"] > 300 and svg.size["height"] > 100 and svg.is_displayed()
        texts = figure.find_elements(By.CSS_SELECTOR, "svg text")
        labels = [t for t in texts if t.get_attribute("textContent") in {f"{r}  {n}" for r, n in zip(ranks, before)}]
        assert [t.get_attribute("textContent") for t in labels] == [f"{r}  {n}" for r, n in zip(ranks, before)]
        tops = [t.rect["y"] for t in labels]
        assert tops == sorted(tops) and len(set(tops)) == len(tops)  # rank 1 on top, each on its own line
        assert figure.find_elements(By.TAG_NAME, "img") == [] and figure.find_elements(By.TAG_NAME, "script") == []
        assert any(HOSTILE in t.get_attribute("textContent") for t in labels)  # the hostile name is a label's text
        link = figure.find_element(By.LINK_TEXT, "the figure as SVG").get_attribute("href")
        assert link.startswith("file://") and Path(link.removeprefix("file://")).read_text().startswith("<?xml")
        score_head = table.find_elements(By.TAG_NAME, "th")[heads.index("Score")]
        score_head.click()
        assert scores() == sorted(scores()) and names() != before and sorted(names()) == sorted(before)
        score_head.click()
        assert scores() == sorted(scores(), reverse=True)
        assert score_head.get_attribute("aria-sort") == "descending"
        table.find_elements(By.TAG_NAME, "th")[heads.index("Name")].click()
        assert names() == sorted(before, key=str.lower)
        # the hostile name is text, not markup
        assert HOSTILE in names()
        # follow an entry link
        table.find_element(By.LINK_TEXT, "Second One").click()
        assert driver.title == "Second One — ATLAS-Bench"
        assert driver.find_element(By.TAG_NAME, "h1").text == "Second One"
        images = driver.find_elements(By.TAG_NAME, "img")
        assert len(images) == 2 and all(driver.execute_script("return arguments[0].naturalWidth", i) > 100 for i in images)
        driver.find_element(By.LINK_TEXT, "the entry as JSON")
        driver.back()
        assert driver.title == "ATLAS-Bench leaderboards"
        errors = [log for log in driver.get_log("browser") if log["level"] in ("SEVERE", "WARNING")]
        assert errors == []
    finally:
        driver.quit()
