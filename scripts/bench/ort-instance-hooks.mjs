// A Node module-resolution hook (registered by ort-web-instance.mjs): every onnxruntime module imported, directly or
// not, from a URL tagged ?ort-instance=<tag> resolves to the same file tagged the same way, so that the tagged
// import loads a second, independent onnxruntime-web (its own onnxruntime-common backend registry, env and wasm
// instance) beside the untagged one.
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const tag = context.parentURL ? new URL(context.parentURL).searchParams.get('ort-instance') : null;
  if (tag && result.url.startsWith('file:') && result.url.includes('/node_modules/onnxruntime-')) {
    const url = new URL(result.url);
    if (!url.searchParams.has('ort-instance')) {
      url.searchParams.set('ort-instance', tag);
      return { ...result, url: url.href };
    }
  }
  return result;
}
