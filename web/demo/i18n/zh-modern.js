// @ts-check
// 中文目录：现代注意力（issue 14 与 19）的文字：解码部分（decode.*）和多线程版本；展开到 zh.js 中。
export default {
  'page.threaded': 'SIMD + {n} 个线程',

  'part.decode.toc': '用 KV 缓存逐个解码',
  'part.decode.title': '逐个词元解码：KV 缓存与分组查询注意力',
  'part.decode.intro':
    '解码器每次只生成一个词元；因果掩码（教程 6.4 节：防止偷看后面的词元）保证前面的词元不会再变，所以它们的键和值可以存进缓存。每一步只对新词元做投影，再用它这一行查询去关注缓存里的全部内容——<code>mha.forward(x, x, x, { kvCache })</code>。分组查询注意力（GQA，Llama 2 70B、Llama 3 和 Mistral 都在用）让几个查询头共用一个键/值头（教程第 7 节），因此缓存只有原来的一半：4 个查询头，2 个键/值头。',
  'decode.prompt': '提示（字母 A–H）',
  'decode.promptAria': '提示：1 到 8 个字母 A–H',
  'decode.promptBad': '提示必须是 1 到 8 个字母 A–H（例如 "A B C"）；仍沿用上一个提示。',
  'decode.step': '单步',
  'decode.run': '连续运行',
  'decode.pause': '暂停',
  'decode.reset': '重置',
  'decode.cacheLength': 'cache.length',
  'decode.modelNote':
    '这个玩具模型只有一层注意力（E = 32，<code>numHeads</code> 4，<code>numKVHeads</code> 2，每个头 8 维），权重是手工写的而不是训练出来的，好让每个头只做一件看得懂的事。它会把周期为 3 的模式接着写下去，和训练部分的因果任务一样：下一个词元就是往前数第 2 个位置上的词元。每一步输入一个词元（先是提示，然后是模型自己写出的），每张图增加一行。',
  'decode.tokens': '词元：',
  'decode.promptTok': '位置 {i}：来自提示',
  'decode.generatedTok': '位置 {i}：模型写出的',
  'decode.legend': '新查询对每个已缓存位置的权重',
  'decode.gqaNote':
    '每个查询头一张图：第 t 行是第 t 步的查询，列是已缓存的位置（缓存向右增长）。同一种颜色的头共用同一个键/值头。',
  'decode.head': '头 {h} · 键/值头 {g}',
  'decode.role0': '找位置 t − 2：要复制的词元',
  'decode.role1': '找位置 t − 1（和头 1 用同一组键）',
  'decode.role2': '找和自己相同的词元：它之前出现的位置',
  'decode.role3': '什么都不找（q = 0）：简单平均（和头 3 用同一组键）',
  'decode.empty': '缓存是空的：请点“单步”',
  'decode.cost':
    '第 {t} 步读取了 {n} 个已缓存位置：{kv} 个键/值头 × {n} × {d} 个数，键和值各一份，共 {f} 个浮点数；不分组的话是 {full} 个。每一步的代价是 O(上下文长度)：随缓存一行一行增长；如果每一步都把整个序列重算一遍，代价是 O(L²)。',
  'decode.costEmpty': '还没有缓存任何内容。',
  'decode.check':
    '核对：这 {n} 步的输出和权重，与不用缓存、对全部 {n} 个词元做一次带因果掩码的前向计算完全一致（最大 |Δ| = {d}）。',

  'decode.checkBad':
    '核对失败：这 {n} 步的结果与不用缓存、对全部 {n} 个词元做一次带因果掩码的前向计算不一致（最大 |Δ| = {d}）。用缓存解码必须得到相同的数，请报告这个问题。',
  'speed.threadedName': 'attnlab simd-threaded（{n} 个线程）',
  'speed.threadsOn': '此页面已跨源隔离，所以多线程版本（SharedArrayBuffer 加一组后台线程）和单线程版本并排测速。',
  'speed.threadsOff':
    '没有多线程一列：此页面没有跨源隔离。多线程版本需要 SharedArrayBuffer，而浏览器只有在服务器发送 "Cross-Origin-Opener-Policy: same-origin" 和 "Cross-Origin-Embedder-Policy: require-corp" 两个响应头时才允许使用（npm start 会发送）。这里 attnlab 使用单线程的 SIMD 版本。',
  'speed.doneThreaded': '用时 {s} 秒完成（报告的逻辑核数为 {cores}；多线程版本用了 {n} 个线程）。',
  'speed.colThreadRatio': '多线程对比 SIMD',
};
