"""The browser tests' one Chromium per process (pytest-xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from e2e import browser as e2e


@pytest.fixture(scope="session")
def chromium() -> Iterator[e2e.Chromium]:
    """One Chromium for every browser test of this process; each test takes a fresh context
    (its own pages, no cookies or site storage from another test; benchmarks/_browser.py: Context).

    Launched on first use, closed at the end of the session, and also before any test that
    does not ask for it (tests/conftest.py: Playwright's sync API keeps an event loop running
    in this thread while the browser lives, which breaks a later asyncio.run()). It relaunches
    on the next browser test: consecutive browser tests, in any module, share one launch."""
    with e2e.shared_chromium() as c:
        yield c
