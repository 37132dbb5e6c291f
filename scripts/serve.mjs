#!/usr/bin/env node
// attnlab's static server for the demo: serves the repository root on 127.0.0.1 so that /web/demo/ (the page)
// and /dist/ (the built package) are both reachable; / redirects to /web/demo/.
//
//   node scripts/serve.mjs            → http://127.0.0.1:8080/   (PORT=… overrides; PORT=0 picks a free port)
//
// .wasm is served as application/wasm, .mjs/.js as text/javascript, and every response carries
// Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp (cross-origin
// isolation, so SharedArrayBuffer is available to a threaded build). Self-contained: Node built-ins only.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';
const PORT_TEXT = process.env.PORT ?? '8080';
const PORT = Number(PORT_TEXT);
if (!Number.isInteger(PORT) || PORT < 0 || PORT > 65535) {
  console.error(`attnlab serve: PORT must be an integer 0–65535, got "${PORT_TEXT}"`);
  process.exit(2);
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.md': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
};

function send(res, status, body, headers = {}) {
  res.writeHead(status, { ...ISOLATION, 'Content-Type': 'text/plain; charset=utf-8', ...headers });
  res.end(body);
}

function resolveFile(urlPath) {
  let rel;
  try {
    rel = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (rel.includes('\0')) return null;
  const abs = path.resolve(ROOT, '.' + path.posix.normalize('/' + rel));
  if (abs !== ROOT && !abs.startsWith(ROOT + path.sep)) return null; // outside the repository
  // Never serve version-control internals or installed dependencies' dotfiles.
  if (path.relative(ROOT, abs).split(path.sep).some((part) => part.startsWith('.'))) return null;
  return abs;
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, `http://${HOST}`);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
    return;
  }
  if (url.pathname === '/' || url.pathname === '/index.html') {
    send(res, 302, 'Found: /web/demo/\n', { Location: '/web/demo/' + url.search });
    return;
  }
  let file = resolveFile(url.pathname);
  if (!file) {
    send(res, 404, 'Not Found\n');
    return;
  }
  fs.stat(file, (err, st) => {
    if (!err && st.isDirectory()) {
      if (!url.pathname.endsWith('/')) {
        send(res, 301, 'Moved\n', { Location: url.pathname + '/' + url.search });
        return;
      }
      file = path.join(file, 'index.html');
      st = fs.existsSync(file) ? fs.statSync(file) : null;
    }
    if (err || !st || !st.isFile()) {
      const hint = url.pathname.startsWith('/dist/') ? ' (dist/ is made by `bash scripts/build.sh`)' : '';
      send(res, 404, `Not Found: ${url.pathname}${hint}\n`);
      return;
    }
    const type = TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream';
    // Read whole files (they are small) so Content-Length always matches what is sent, even when a build
    // rewrites dist/ meanwhile.
    fs.readFile(file, (readErr, body) => {
      if (readErr) {
        send(res, 500, `Could not read ${url.pathname}: ${readErr.code}\n`);
        return;
      }
      res.writeHead(200, { ...ISOLATION, 'Content-Type': type, 'Content-Length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });
});

server.on('error', (err) => {
  if (err.code === 'EADDRINUSE') {
    console.error(`attnlab serve: port ${PORT} on ${HOST} is already in use (another server is running there).`);
    console.error(`  Stop it, or choose another port:  PORT=${PORT === 8080 ? 8081 : PORT + 1} npm start`);
  } else if (err.code === 'EACCES') {
    console.error(`attnlab serve: not allowed to listen on port ${PORT}; choose another one with PORT=…`);
  } else {
    console.error(`attnlab serve: ${err.message}`);
  }
  process.exit(1);
});

server.listen(PORT, HOST, () => {
  const { port } = server.address();
  const url = `http://${HOST}:${port}/`;
  console.log(`attnlab demo: ${url}  (serving ${ROOT}; Ctrl+C stops)`);
  if (!fs.existsSync(path.join(ROOT, 'dist', 'index.mjs'))) {
    console.log('  note: dist/index.mjs is missing; run `bash scripts/build.sh` first, or the page cannot load attnlab.');
  }
});

for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
