// The same check in an unbundled module Web Worker (import maps do not reach workers: the path is spelled out).
import { init } from '/node_modules/attnlab/dist/index.mjs';
import { check, report } from '/check.mjs';

report(check(init, 'module worker'));
