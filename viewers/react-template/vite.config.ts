// vite.config.ts: build settings. `base: './'` makes every asset URL relative, so `dist/` works
// from any sub-path (a GitHub Pages project site, a bucket folder), not only from a site's root.
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The built page's Content-Security-Policy: only this app's own files run and load (no inline
 * script or style, no other origin), and connections go to any http(s) origin until src/csp.ts
 * narrows them to this origin and the bundle's, before anything fetches. Only in the build: the
 * dev server runs an inline script (React Fast Refresh) and injects <style> elements.
 */
export const POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self' http: https:; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'";

function contentSecurityPolicy(): Plugin {
  return {
    name: 'content-security-policy',
    apply: 'build',
    // Right after the charset, before any element that loads something.
    transformIndexHtml(html) {
      const charset = /<meta charset="[^"]*" \/>/i;
      if (!charset.test(html)) throw new Error('index.html: no <meta charset> to put the Content-Security-Policy after');
      return html.replace(charset, (m) => `${m}\n    <meta http-equiv="Content-Security-Policy" content="${POLICY}" />`);
    },
  };
}

export default defineConfig({
  base: './',
  plugins: [react(), contentSecurityPolicy()],
  // The loader is a sibling folder (package.json: "file:../bundle-loader"): let `npm run dev` serve it.
  server: { fs: { allow: ['.', '../bundle-loader'] } },
});
