// A tiny static file server on 127.0.0.1 for the package test (no dependencies). Serves .wasm as
// application/wasm and .mjs/.js as text/javascript.
//   import { serve } from './serve.mjs'; const server = await serve(dir); … server.url … await server.close();
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const kTypes = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.map': 'application/json',
};

export function serve(root, { port = 0 } = {}) {
  const base = normalize(root + sep);
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    const file = normalize(join(base, path.endsWith('/') ? `${path}index.html` : path));
    let stat;
    try {
      stat = file.startsWith(base) ? statSync(file) : null;
    } catch {
      stat = null;
    }
    if (!stat || !stat.isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`not found: ${path}\n`);
      return;
    }
    res.writeHead(200, {
      'Content-Type': kTypes[extname(file)] ?? 'application/octet-stream',
      'Content-Length': stat.size,
      'Cache-Control': 'no-store',
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: actual } = server.address();
      resolve({
        url: `http://127.0.0.1:${actual}`,
        close: () => new Promise((done) => server.close(() => done())),
        server,
      });
    });
  });
}

// `node serve.mjs DIR [PORT]` serves DIR until interrupted (handy for looking at the pages by hand).
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await serve(process.argv[2] ?? '.', { port: Number(process.argv[3] ?? 0) });
  console.log(`serving ${process.argv[2] ?? '.'} at ${server.url}`);
}
