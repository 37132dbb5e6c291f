// The same check inside a module Web Worker, bundled with the page.
import { init } from 'attnlab';
import { check, report } from '../check.mjs';

report(check(init, 'bundled worker'));
