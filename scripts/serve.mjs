#!/usr/bin/env node
// attnlab's one static file server (Node built-ins only), for the demo and for the tests.
//
//   node scripts/serve.mjs            → http://127.0.0.1:8080/  the repository root, / redirects to /web/demo/
//                                       (PORT=… overrides; PORT=0 picks a free port)
//   node scripts/serve.mjs DIR        → serves DIR instead (e.g. build/site/ from npm run build:demo)
//   node scripts/serve.mjs --no-isolation [DIR]  → without COOP/COEP (a page that is not cross-origin isolated:
//                                       what most hosts serve; the demo's e2e test loads the page this way too)
//   import { serve } from './serve.mjs'; const s = await serve(dir, options); … s.url … await s.close();
//
// .wasm is served as application/wasm, .mjs/.js as text/javascript. Options:
//   isolation (default true): Cross-Origin-Opener-Policy: same-origin + Cross-Origin-Embedder-Policy:
//     require-corp, the cross-origin isolation a threaded build's SharedArrayBuffer needs;
//   cors (default false): Access-Control-Allow-Origin: * and Cross-Origin-Resource-Policy: cross-origin, so that
//     pages of another origin may load these files (a CDN);
//   redirect: a path that / redirects to; port (default 0), host (default 127.0.0.1).

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const kTypes = {
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

function headersFor({ isolation, cors }) {
  const h = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' };
  if (isolation) {
    h['Cross-Origin-Opener-Policy'] = 'same-origin';
    h['Cross-Origin-Embedder-Policy'] = 'require-corp';
  }
  h['Cross-Origin-Resource-Policy'] = cors ? 'cross-origin' : 'same-origin';
  if (cors) h['Access-Control-Allow-Origin'] = '*';
  return h;
}

/** The file under `root` that `urlPath` names, or null (outside root, a dotfile, a bad escape). */
function resolveFile(root, urlPath) {
  let rel;
  try {
    rel = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (rel.includes('\0')) return null;
  const abs = path.resolve(root, '.' + path.posix.normalize('/' + rel));
  if (abs !== root && !abs.startsWith(root + path.sep)) return null;
  // Never serve version-control internals or installed dependencies' dotfiles.
  if (
    path
      .relative(root, abs)
      .split(path.sep)
      .some((part) => part.startsWith('.'))
  )
    return null;
  return abs;
}

function handler(root, { redirect, base }) {
  return (req, res) => {
    const send = (status, body, extra = {}) => {
      res.writeHead(status, { ...base, 'Content-Type': 'text/plain; charset=utf-8', ...extra });
      res.end(body);
    };
    const url = new URL(req.url, 'http://localhost');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
      return;
    }
    if (redirect && (url.pathname === '/' || url.pathname === '/index.html')) {
      send(302, `Found: ${redirect}\n`, { Location: redirect + url.search });
      return;
    }
    let file = resolveFile(root, url.pathname);
    if (!file) {
      send(404, 'Not Found\n');
      return;
    }
    fs.stat(file, (err, st) => {
      if (!err && st.isDirectory()) {
        if (!url.pathname.endsWith('/')) {
          send(301, 'Moved\n', { Location: url.pathname + '/' + url.search });
          return;
        }
        file = path.join(file, 'index.html');
        st = fs.existsSync(file) ? fs.statSync(file) : null;
      }
      if (err || !st || !st.isFile()) {
        const hint = url.pathname.startsWith('/dist/') ? ' (dist/ is made by `bash scripts/build.sh`)' : '';
        send(404, `Not Found: ${url.pathname}${hint}\n`);
        return;
      }
      // Whole files (they are small): Content-Length always matches what is sent, even while a build rewrites dist/.
      fs.readFile(file, (readErr, body) => {
        if (readErr) {
          send(500, `Could not read ${url.pathname}: ${readErr.code}\n`);
          return;
        }
        const type = kTypes[path.extname(file).toLowerCase()] || 'application/octet-stream';
        res.writeHead(200, { ...base, 'Content-Type': type, 'Content-Length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
      });
    });
  };
}

/** Serves `root`; resolves to { url, port, close(), server } once listening. */
export function serve(root, { port = 0, host = '127.0.0.1', isolation = true, cors = false, redirect } = {}) {
  const abs = path.resolve(root);
  const server = http.createServer(handler(abs, { redirect, base: headersFor({ isolation, cors }) }));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      resolve({
        url: `http://${host}:${actual}`,
        port: actual,
        close: () => new Promise((done) => server.close(() => done())),
        server,
      });
    });
  });
}

async function main() {
  const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const args = process.argv.slice(2);
  const isolation = !args.includes('--no-isolation');
  const dir = args.find((a) => !a.startsWith('--'));
  const root = dir ? path.resolve(dir) : repo;
  const portText = process.env.PORT ?? '8080';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`attnlab serve: PORT must be an integer 0–65535, got "${portText}"`);
    process.exit(2);
  }
  let server;
  try {
    server = await serve(root, { port, isolation, redirect: dir ? undefined : '/web/demo/' });
  } catch (err) {
    if (err.code === 'EADDRINUSE') {
      console.error(`attnlab serve: port ${port} on 127.0.0.1 is already in use (another server is running there).`);
      console.error(`  Stop it, or choose another port:  PORT=${port === 8080 ? 8081 : port + 1} npm start`);
    } else if (err.code === 'EACCES') {
      console.error(`attnlab serve: not allowed to listen on port ${port}; choose another one with PORT=…`);
    } else {
      console.error(`attnlab serve: ${err.message}`);
    }
    process.exit(1);
  }
  const iso = isolation ? 'cross-origin isolated' : 'without COOP/COEP: not cross-origin isolated';
  console.log(`attnlab demo: ${server.url}/  (serving ${root}, ${iso}; Ctrl+C stops)`);
  if (!dir && !fs.existsSync(path.join(repo, 'dist', 'index.mjs'))) {
    console.log(
      '  note: dist/index.mjs is missing; run `bash scripts/build.sh` first, or the page cannot load attnlab.',
    );
  }
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
