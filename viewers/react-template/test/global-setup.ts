// global-setup.ts: vitest runs this once before the tests: it builds the fixture bundles into a
// temporary folder and hands its path to the tests (`inject('bundlesDir')`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildBundles } from './fixtures';

declare module 'vitest' {
  export interface ProvidedContext {
    bundlesDir: string;
  }
}

export default function setup(project: TestProject): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'react-template-bundles-'));
  buildBundles(dir);
  project.provide('bundlesDir', dir);
  return () => fs.rmSync(dir, { recursive: true, force: true });
}
