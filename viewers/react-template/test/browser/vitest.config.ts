// vitest.config.ts for `npm run test:browser`: the BUILT app (dist/, made by `vite build` first)
// in headless Chromium, served under a sub-path with bundles built from fixtures-repo/.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/browser/*.test.ts'],
    environment: 'node',
    globalSetup: ['test/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
