// Launches Debian's Chromium headless through playwright-core, the same way for every browser
// test that drives it directly (bundle-loader.test.js, cross-origin.test.js, proxy-cross-origin.test.js).
import { chromium } from 'playwright-core';

/** The Chromium binary: $CHROMIUM, else Debian's. */
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** A headless Chromium with nothing running in the background (no QUIC, sync or updates). */
export function launchChromium() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
