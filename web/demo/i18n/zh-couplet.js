// @ts-check
// “对仗”一节的中文文案（parts/couplet/），键与 en-couplet.js 相同。

export default {
  'part.couplet.toc': '对仗：会对齐的交叉注意力',
  'part.couplet.title': '对仗：编码器–解码器写出对句',
  'part.couplet.intro':
    '律诗的颔联和颈联必须对仗：下句第 i 个字对上句第 i 个字（秦川 ↔ 函谷）。由上句写下句是一个小小的翻译任务，而且对齐关系是已知的，就是对角线，所以编码器–解码器的交叉注意力（教程 6.1 节）可以打分。这里的模型是 attnlab 自己训练的小 <code>marian</code>（Helsinki-NLP 的 opus-mt 翻译模型所用的架构），只用宋代律诗训练；能选的对联都出自唐诗，训练时从未见过。首联和尾联不要求对仗，正好作对照。',

  'couplet.loading': '正在后台线程中加载对联模型（config.json、model.safetensors、tokenizer.json 和留出的诗）……',
  'couplet.loadFailed': '对联模型加载失败：{err}',
  'couplet.failed': '对联模型运行出错：{err}',
  'couplet.httpError': '{f}：HTTP {s}',
  'couplet.loaded': '对联模型已加载（在 attnlab/worker 中运行）。',
  'couplet.facts':
    '<strong>模型概况</strong>：Marian，编码器 {L} 层、解码器 {Ld} 层，每层 {H} 个头，d_model = {E}，词表 {V} 个词元，一字一词元。编码器读上句和 [EOS]；解码器从 [PAD] 开始，每步写一个字。<strong>留出数据</strong>：随模型附带的 {poems} 首唐代律诗（{pairs} 联）。',
  'couplet.lh': '第 {l} 层 · 头 {h}',
  'couplet.k1': '首联',
  'couplet.k2': '颔联',
  'couplet.k3': '颈联',
  'couplet.k4': '尾联',
  'couplet.parallel': '须对仗',
  'couplet.control': '对照',
  'couplet.diag': '对齐字上的平均权重：{w}',
  'couplet.steps': '训练步数',

  'couplet.write.title': '写出下句',
  'couplet.write.sec': '§6.1 · §11',
  'couplet.write.note':
    '选一首唐诗和其中一联，或者自己输入 5 个或 7 个字的上句（词表里没有的字记作 [UNK]）。模型每步写一个字（在后台线程里调用 <code>model.generate</code>，每写一个字触发一次 <code>onToken</code>；“停止”随时中断）：贪心解码每步取最可能的字，抽样则按随机种子从分布中抽取。',
  'couplet.poemAria': '一首留出的唐代律诗',
  'couplet.kAria': '选诗中的哪一联',
  'couplet.poem': '唐诗',
  'couplet.k': '联',
  'couplet.upper': '上句',
  'couplet.mode': '解码方式',
  'couplet.greedy': '贪心',
  'couplet.sample': '抽样（温度 1）',
  'couplet.seed': '随机种子',
  'couplet.go': '写出下句',
  'couplet.stop': '停止',
  'couplet.badLength': '上句须为 5 个或 7 个字，现在是 {n} 个。',
  'couplet.progress': '已写 {n} 个词元，最多 {max} 个',
  'couplet.done': '完成：共 {n} 个词元。',
  'couplet.stopped': '写了 {n} 个词元后停止。',

  'couplet.align.title': '交叉注意力：下句 × 上句',
  'couplet.align.sec': '§6.1 · §7',
  'couplet.align.note':
    '每一行是解码器的一步（它写出的那个字），每一列是编码器读到的上句中的一个字。会对齐的头把权重放在对角线上：写第 t 个字时，看的是上句第 t 个字。',
  'couplet.alignNote': '所写下句在{lh}的交叉注意力。',
  'couplet.layer': '解码器层',
  'couplet.head': '头',
  'couplet.layerN': '第 {n} 层',
  'couplet.headN': '头 {n}',
  'couplet.guess.q': '解码器的各个头里，哪一个在须对仗的联上把最多的权重放在上句的对齐字上？它在对照联上也这样吗？',
  'couplet.guess.answer':
    '在 {n} 个留出的须对仗联上测得：<b>{lh}</b>，它放在对齐字上的权重为 {par}（均匀注意力：五言 {u5}，七言 {u7}），在对照联上为 {ctl}。',
  'couplet.named':
    '<b>对齐头：{lh}。</b>在留出的须对仗联上，它放在对齐字上的平均权重为 {par}（对照联：{ctl}；均匀：{u5} / {u7}）。只屏蔽这一个头（<code>crossAttnHeadMask</code>），须对仗联上每个词元（含 [EOS]）的损失升高 {dPar} 奈特，对照联上升高 {dCtl} 奈特。',
  'couplet.heads.head': '头',
  'couplet.heads.par': '对齐权重（须对仗）',
  'couplet.heads.ctl': '对齐权重（对照）',
  'couplet.heads.abPar': '屏蔽代价（须对仗，奈特）',
  'couplet.heads.abCtl': '屏蔽代价（对照，奈特）',

  'couplet.pairs.title': '对仗联与对照联并排',
  'couplet.pairs.sec': '§6.1',
  'couplet.pairs.note':
    '所选诗的四联，各用自己的下句读入（教师强制），显示上面所选的层和头。颔联、颈联必须对仗，首联、尾联不必。比一比对角线。',

  'couplet.replay.title': '训练回放：从均匀到对角线',
  'couplet.replay.sec': '§10.1',
  'couplet.replay.note':
    '训练中保存的权重，各自在留出的对联上运行一遍（<code>scripts/couplet/snapshots.mjs</code>）。拖动滑块：看对齐头在这一步对一首探测诗的注意力图，以及标出这一步的损失曲线（实线为训练损失，虚线为验证损失）。',
  'couplet.replay.step': '快照',
  'couplet.replay.stepN': '第 {s} 步',
  'couplet.replay.probe': '探测诗',
  'couplet.replay.numbers':
    '第 {s} 步：须对仗联上每个词元的损失 {lossPar} 奈特，对照联上 {lossCtl} 奈特（共 {n} 个留出联）；{lh}放在对齐字上的权重为 {par}（须对仗）、{ctl}（对照）。',

  'guide.couplet.1': '选一首诗和它的颔联，点“写出下句”：字一个一个出现。下面，所写下句的交叉注意力图默认显示对齐头。',
  'guide.couplet.2': '先回答“先猜再看”，再比较四联的注意力图：颔联、颈联的对角线是否比首联、尾联更亮？',
  'guide.couplet.3':
    '在训练回放里，把滑块从第一个快照拖到最后一个：注意力图起初是均匀的，损失曲线标出这一步所在的位置。',
};
