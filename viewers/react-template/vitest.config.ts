// vitest.config.ts: the Node tests (`npm test`): data functions and components on real bundles,
// which test/global-setup.ts builds from fixtures-repo/ with tlparse-build before the tests run.
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  test: {
    include: ['test/*.test.{ts,tsx}'],
    environment: 'node',
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
