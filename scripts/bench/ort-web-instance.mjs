// A second onnxruntime-web in the same process, e.g. at another env.wasm.numThreads: onnxruntime-web keeps one
// wasm instance and one settings object per module instance (numThreads cannot change after the first session),
// so the bench loads it again under a tagged URL (ort-instance-hooks.mjs makes its whole module graph separate).
import { register } from 'node:module';

let registered = false;
export async function importOrtWebInstance(tag) {
  if (!registered) {
    register('./ort-instance-hooks.mjs', import.meta.url);
    registered = true;
  }
  return import(`${import.meta.resolve('onnxruntime-web')}?ort-instance=${encodeURIComponent(tag)}`);
}
