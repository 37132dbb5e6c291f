// ESM consumer: `import` the installed package by name.
import { init } from 'attnlab';
import { check } from './check.mjs';

console.log(await check(init, 'node ESM import'));
