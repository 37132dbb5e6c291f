// The package version. Keep equal to "version" in package.json (tests/js/loader.test.mjs checks it).
export const version = '0.1.0';
