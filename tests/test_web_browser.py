"""The ``mauscheln serve`` page in Debian's headless chromium: a deal played by clicking (and by keys), on a
desktop window and on a phone-sized one, with screenshots kept as artefacts.

Needs ``apt-get install chromium chromium-driver`` and the ``browser`` and ``web`` extras. The screenshots go to
``$MAUSCHELN_SCREENSHOTS`` when set, else into the test's tmp dir (pytest keeps the last runs' tmp dirs).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mauscheln.web.app import create_app
from mauscheln.web.tables import Settings
from tests.test_web import running

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOWS = {"desktop": (1280, 900), "phone": (390, 844)}


def _driver(size: tuple[int, int]):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        pytest.skip("needs Debian's chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-dev-shm-usage", f"--window-size={max(size[0], 500)},{size[1]}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    width, height = size
    # headless chromium keeps windows at least 500 px wide: a phone's viewport is emulated instead
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 500})
    return driver


@pytest.mark.slow
@pytest.mark.parametrize("window, ruleset, deals", [("desktop", "mauscheln", 2), ("phone", "mouche", 1)])
def test_a_deal_played_by_clicking(tmp_path, window, ruleset, deals):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    shots = Path(os.environ.get("MAUSCHELN_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    prefix = f"web-{window}-{ruleset}"
    driver = _driver(WINDOWS[window])
    wait = WebDriverWait(driver, 60)
    try:
        with running(create_app(Settings())) as base:
            driver.get(base + "/")
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#f-ruleset option"))
            Select(driver.find_element(By.ID, "f-ruleset")).select_by_value(ruleset)
            field = driver.find_element(By.ID, "f-deals")
            field.clear()
            field.send_keys(str(deals))
            driver.find_element(By.ID, "f-seed").send_keys("11")
            driver.save_screenshot(str(shots / f"{prefix}-setup.png"))
            driver.find_element(By.ID, "sit").click()
            wait.until(lambda d: d.find_element(By.ID, "play").is_displayed())

            def view() -> dict:
                return driver.execute_script("return window.mauschelnTable.view")

            def idle(d) -> bool:
                return not d.execute_script("return window.mauschelnTable.busy")

            moves, by_key, shot_play = 0, False, False
            while not view()["over"]:
                v = view()
                hand = [e.get_attribute("data-card") for e in driver.find_elements(By.CSS_SELECTOR, "#hand .card")]
                assert hand == v["hand"]
                assert driver.find_element(By.ID, "error").get_attribute("hidden")
                trick = [e.get_attribute("data-card") for e in driver.find_elements(By.CSS_SELECTOR, "#trick .card")]
                assert trick == [c for _, c in v["trick"]] or (not v["trick"] and trick == [
                    c for _, c in v["tricks"][-1]["cards"]])
                buttons = driver.find_elements(By.CSS_SELECTOR, "#hand button.legal, #discards button.legal, "
                                                                "#moves button")
                assert [b.get_attribute("data-card") or b.get_attribute("data-action") for b in buttons] == \
                    driver.execute_script("return window.mauschelnTable.keys")
                assert set(driver.execute_script("return window.mauschelnTable.keys")) == set(v["legal"])
                if v["phase"] == "play" and v["trick"] and not shot_play:
                    driver.save_screenshot(str(shots / f"{prefix}-trick.png"))
                    shot_play = True
                if moves == 0:  # the first legal move by its number key
                    driver.find_element(By.TAG_NAME, "body").send_keys("1")
                    by_key = True
                else:  # the first legal move (the first card, or declare / go with), "done" in an exchange
                    done = [b for b in buttons if b.get_attribute("data-action") == "done"]
                    (done[0] if done else buttons[0]).click()
                wait.until(idle)
                moves += 1
                if moves == 1:
                    driver.save_screenshot(str(shots / f"{prefix}-move.png"))
                assert moves < 80
            assert by_key
            end = driver.find_element(By.ID, "end")
            assert end.is_displayed() and "Session over" in end.text
            log = driver.find_element(By.ID, "log").text
            assert f"deal {deals} ended: your result" in log
            settled = driver.find_elements(By.CSS_SELECTOR, "#log pre.settlement")
            assert settled and len(settled[-1].text.splitlines()) >= 2
            overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"the page is {overflow} px wider than the window"
            driver.find_element(By.ID, "log").send_keys(Keys.END)
            driver.save_screenshot(str(shots / f"{prefix}-end.png"))
            driver.find_element(By.ID, "replay-link").click()
            wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#seats tbody tr"))
            assert "your session" in driver.title.lower() or "your session" in driver.page_source
            rows = driver.find_elements(By.CSS_SELECTOR, "#seats tbody tr")
            assert len(rows) == v["players"]
            for row in rows:  # every hand is shown
                assert row.find_elements(By.CSS_SELECTOR, ".card")
            driver.find_element(By.ID, "next").click()
            driver.save_screenshot(str(shots / f"{prefix}-replay.png"))
    finally:
        driver.quit()
