"""The review page in Debian's headless Chromium, driven by Playwright: log in, review, propose, merge as another."""
import pathlib
import shutil

import pytest
from playwright.sync_api import sync_playwright

from conftest import World, live_server
from differential_server.api import create_app

ARTIFACTS = pathlib.Path(__file__).resolve().parents[3] / "build" / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def login(page, url, token):
    page.goto(url)
    page.fill("#token", token)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#app:not([hidden])")
    page.select_option("#database", "shop")


def test_review_page_propose_then_merge_as_the_reviewer(tmp_path):
    if not pathlib.Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: run scripts/setup.sh")
    world = World(tmp_path / "repo")
    try:
        world.create("mia", "fix")
        world.sql("mia", "UPDATE items SET price = 999 WHERE id = 3", branch="fix")
        world.sql("mia", "INSERT INTO items VALUES (77, 'new', 7, 'sku-77')", branch="fix")
        with live_server(create_app(world.service, sweep=False)) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url)
                       else route.abort())  # the page must not need anything but the server
            page.goto(url)
            page.fill("#token", "dft_0000000000000000_" + "x" * 43)
            page.click("#login-form button[type=submit]")
            page.wait_for_function("document.getElementById('login-error').textContent.length > 0")
            assert "unauthenticated" in page.text_content("#login-error")

            login(page, url, world.tokens["mia"])
            assert "mia (member)" in page.text_content("#who")
            page.click("#branches tr[data-branch='fix']")
            page.wait_for_selector("#changes tr[data-table='items']")
            cells = page.locator("#changes tr[data-table='items'] td").all_text_contents()
            assert cells == ["items", "modified", "1", "1", "0", "0"]
            page.click("#changes tr[data-table='items']")
            changed = page.locator("#diff td.changed")
            changed.first.wait_for()
            assert changed.count() == 1 and changed.first.get_attribute("data-column") == "price"
            assert changed.first.text_content() == "30 → 999"
            assert page.locator("#diff tr.insert").count() == 1
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "review-page.png"), full_page=True)

            page.click("#propose")
            page.wait_for_function("document.getElementById('message').textContent.startsWith('proposed')")
            proposal = page.input_value("#proposal")
            page.click("#merge")  # the proposer's own merge is refused on the page too
            page.wait_for_function("document.getElementById('message').textContent.includes('admin_required')")

            page.click("#logout")
            login(page, url, world.tokens["rob"])
            page.click("#branches tr[data-branch='fix']")
            page.wait_for_selector("#changes tr[data-table='items']")
            assert page.input_value("#proposal") == proposal
            page.click("#merge")
            page.wait_for_function("document.getElementById('message').textContent.startsWith('merged')")
            assert f"merge-fix-{proposal}" in page.text_content("#message")
            browser.close()
        assert world.rows("SELECT price FROM items WHERE id = 3") == [[999]]
        assert (ARTIFACTS / "review-page.png").stat().st_size > 1000
    finally:
        world.close()
