// The package test serves its pages with attnlab's one static server (scripts/serve.mjs).
//   node tests/package/serve.mjs DIR  serves DIR (handy for looking at the pages by hand).
export { serve } from '../../scripts/serve.mjs';
