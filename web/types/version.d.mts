// The type of dist/version.mjs, which scripts/build.sh generates from package.json (it has no source in web/src).
// web/tsconfig.json merges this folder with web/src (rootDirs) so that the type check of web/src finds it.
export declare const version: string;
