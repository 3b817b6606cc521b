// vite.config.ts: build settings. `base: './'` makes every asset URL relative, so `dist/` works
// from any sub-path (a GitHub Pages project site, a bucket folder), not only from a site's root.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  base: './',
  plugins: [react()],
  // The loader is a sibling folder (package.json: "file:../bundle-loader"): let `npm run dev` serve it.
  server: { fs: { allow: ['.', '../bundle-loader'] } },
});
