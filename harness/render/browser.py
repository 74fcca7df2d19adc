"""results/report.html in a real browser (Debian's headless Chromium driven by Playwright), every request that
is not the page itself refused: the browser tests open it so, and `python -m harness.render.browser` draws the
README's picture (docs/report.png) from the committed results, so that no one takes it by hand."""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness.paths import ROOT
from harness.results.files import write_bytes_atomic

WIDTH, HEIGHT = 1280, 800  # the viewport the page is opened in: its first view, a laptop's window
PICTURE_HEIGHT = HEIGHT  # the README's picture: that first view, the leaderboard and the first answers


def chromium() -> str | None:
    """Chromium's executable on PATH (`make chromium` installs Debian's), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def launched(executable: str) -> Iterator[Any]:
    """A headless Chromium, closed on leaving."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def opened(browser: Any, page_file: Path, fragment: str = "", height: int = HEIGHT) -> tuple[Any, list[str], list[str]]:
    """The page opened at its fragment, its charts drawn; with the console's errors and every request that
    left the file (refused)."""
    page = browser.new_page(viewport={"width": WIDTH, "height": height})
    errors: list[str] = []
    fetched: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))

    def refuse(route: Any) -> None:
        if route.request.url.split("#")[0] == page_file.as_uri():
            route.continue_()
        else:
            fetched.append(route.request.url)
            route.abort()

    page.route("**/*", refuse)
    page.goto(page_file.as_uri() + fragment)
    page.wait_for_function("window.drawn !== undefined")
    page.evaluate("window.drawn")
    return page, errors, fetched


def picture(browser: Any, page_file: Path, out: Path) -> None:
    """The top of the page as drawn, written to out whole or not at all."""
    if not page_file.is_file():
        raise FileNotFoundError(f"no {page_file}: `python -m harness report` renders it")
    page, errors, fetched = opened(browser, page_file.resolve(), height=PICTURE_HEIGHT)
    try:
        if errors or fetched:
            raise RuntimeError(f"{page_file} drew with errors {errors} or asked for {fetched}")
        write_bytes_atomic(out, page.screenshot())
    finally:
        page.close()


def opening_seconds(browser: Any, page_file: Path, fragment: str = "", tries: int = 3) -> list[float]:
    """How long the page takes to open and draw every chart, `tries` times, each in a new tab (seconds)."""
    found = []
    for _ in range(tries):
        begun = time.perf_counter()
        page, errors, fetched = opened(browser, page_file.resolve(), fragment)
        found.append(time.perf_counter() - begun)
        page.close()
        if errors or fetched:
            raise RuntimeError(f"{page_file} drew with errors {errors} or asked for {fetched}")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.render.browser", description=picture.__doc__)
    parser.add_argument("--page", type=Path, default=ROOT / "results" / "report.html")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    parser.add_argument(
        "--time", action="store_true", help="print how long the page takes to open and draw (and its size), and exit"
    )
    args = parser.parse_args(argv)
    executable = chromium()
    try:
        if executable is None:
            raise FileNotFoundError("no chromium on PATH: `make chromium` installs Debian's")
        with launched(executable) as browser:
            if args.time:
                if not args.page.is_file():
                    raise FileNotFoundError(f"no {args.page}: `python -m harness report` renders it")
                seconds = opening_seconds(browser, args.page)
                size = args.page.stat().st_size / 2**20
                print(
                    f"{args.page}: {size:.2f} MiB; opened and drawn in " + ", ".join(f"{s:.2f}" for s in seconds) + " s"
                )
                return 0
            picture(browser, args.page, args.out)
    except (FileNotFoundError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
