// Tiny static server for the browser tests. Two modes:
//   plain:   Content-Type from the extension only; no Content-Encoding, no caching headers
//            (like a storage bucket or `python -m http.server`).
//   ghpages: like GitHub Pages: also gzips on the fly (Content-Encoding: gzip) the types it
//            compresses: .json, .js, .html and extensions with no mime mapping (.zst, .jsonl,
//            served as application/octet-stream); .gz is served raw as application/gzip.
// In both, a path ending in '/' serves that directory's index.html.
// Every request is recorded in `server.requests` ({path, status, bytes: body bytes sent, gzip}).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.json': 'application/json',
  '.gz': 'application/gzip', '.png': 'image/png', '.css': 'text/css', '.wasm': 'application/wasm',
};
const GHPAGES_GZIP = new Set(['.html', '.js', '.mjs', '.json', '.css']);

/**
 * mounts: {'/url/prefix/': '/dir'}; resolves to {server, url, requests, close()}. With
 * `opts.trickle` (a RegExp), bodies of the paths it matches are sent like over a slow link: in
 * pieces of `opts.piece` bytes (8 KiB) 5 ms apart, with a 3 s pause once half the body is sent,
 * so that a client that stops reading in the first half is seen to whatever the machine's load
 * (a request's `bytes` counts only what was written before the client went away).
 */
export async function startServer(mode, mounts, opts = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const send = (status, body, headers) => {
      res.writeHead(status, { 'Content-Length': body.length, ...headers });
      const record = { path: urlPath, status, bytes: body.length, gzip: headers['Content-Encoding'] === 'gzip' };
      requests.push(record);
      if (req.method === 'HEAD') return res.end();
      if (!opts.trickle?.test(urlPath)) return res.end(body);
      record.bytes = 0;
      const piece = (at) => {
        if (res.destroyed) return;
        if (at >= body.length) return res.end();
        const end = Math.min(at + (opts.piece ?? 8192), body.length);
        res.write(body.subarray(at, end));
        record.bytes = end;
        const half = at < body.length / 2 && end >= body.length / 2;
        setTimeout(piece, half ? 3000 : 5, end);
      };
      piece(0);
    };
    const prefix = Object.keys(mounts).sort((a, b) => b.length - a.length).find((p) => urlPath.startsWith(p));
    // A path ending in '/' serves that directory's index.html, as GitHub Pages and most hosts do.
    const rel = urlPath.endsWith('/') ? `${urlPath}index.html` : urlPath;
    const file = prefix && path.join(mounts[prefix], rel.slice(prefix.length));
    if (!file || !file.startsWith(mounts[prefix]) || !fs.statSync(file, { throwIfNoEntry: false })?.isFile()) {
      return send(404, Buffer.from('not found\n'), { 'Content-Type': 'text/plain' });
    }
    const ext = path.extname(file);
    const type = TYPES[ext] ?? 'application/octet-stream';
    let body = fs.readFileSync(file);
    const headers = { 'Content-Type': type };
    if (mode === 'ghpages' && (GHPAGES_GZIP.has(ext) || !TYPES[ext]) &&
        /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
      body = zlib.gzipSync(body);
      headers['Content-Encoding'] = 'gzip';
      headers['Vary'] = 'Accept-Encoding';
    }
    send(200, body, headers);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    mode, server, requests,
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
