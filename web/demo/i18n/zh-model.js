// @ts-check
// “你的模型”一节的中文文案（yourmodel.js、yourmodel-load.js），键与 en-model.js 相同。

export default {
  'model.cellTip': '{caption}：查询 {q} → 键 {k}：{v}',
  'part.model.toc': '你的模型',
  'part.model.title': '你的模型：检查点里的一层，作用在虚构的输入上',
  'part.model.intro':
    '换上你自己的一层：一个采用 Hugging Face 命名的 <code>.safetensors</code> 检查点（BERT、GPT-2 或 ViT），或“句子上的多头注意力”部分用的 JSON 状态字典。attnlab 读取文件（<code>readSafetensors</code>、<code>fromHuggingFace</code>），按 PyTorch 的算法精确运行这一层的注意力，再用 <code>attnlab/viz</code> 画出每个头。注意：这里只运行你选的那一层，输入是虚构的词向量、随机向量或你粘贴的隐藏状态，而不是模型前面各层的真实输出。所以除非你粘贴真实的隐藏状态，这些热力图都不是模型读这段文字时的注意力。文件不会离开你的浏览器。',

  'model.drop': '把 .safetensors 文件或 JSON 状态字典拖到这里。',
  'model.pick': '选择文件…',
  'model.fileAria': '你的模型文件（.safetensors 或 JSON 状态字典）',
  'model.sample': '试试示例（一个 2 层的小 BERT）',
  'model.noFile': '还没有文件：拖入、选择一个，或试试示例。',
  'model.sampleFailed': '示例文件加载失败：{err}',
  'model.readFailed': '无法读取 {f}：{err}',
  'model.badSafetensors': '{f} 不是可用的 .safetensors 文件：{err}',
  'model.unknownFile': '{f} 既不是 .safetensors 文件，也不是 JSON 状态字典。',
  'model.loadedHf': '{f}：共 {n} 个张量。找到的注意力层：{layers}。',
  'model.archLayers': '{arch} 第 {from}–{to} 层（E = {e}）',
  'model.loadedJson': '{f}：nn.MultiheadAttention 的状态字典，E = {e}，{h} 个头。',
  'model.noLayers':
    '{f} 含 {n} 个张量，但其中没有 BERT、GPT-2 或 ViT 的注意力层（名称应形如 encoder.layer.0.attention.self.query.weight 或 h.0.attn.c_attn.weight）。',

  'model.arch': '架构',
  'model.archAria': '检查点的架构',
  'model.arch.bert': 'BERT',
  'model.arch.gpt2': 'GPT-2',
  'model.arch.vit': 'ViT',
  'model.arch.json': 'nn.MultiheadAttention（JSON）',
  'model.layer': '层',
  'model.layersInFile': '文件中的层：{list}',
  'model.heads': '头数（numHeads）',
  'model.headsFromFile': '取自文件',
  'model.headsGuess.metadata': '取自文件的元数据',
  'model.headsGuess.width64': '推测值：E = {e}，每头宽 64（权重里不存头数）',
  'model.headsGuess.small': 'E = {e} 时的推测值（权重里不存头数，请核对模型配置）',
  'model.causal': '因果掩码（GPT-2）',

  'model.input': '输入',
  'model.inputAria': '这一层的输入',
  'model.mode.words': '词',
  'model.mode.vectors': '隐藏状态向量',
  'model.mode.random': '随机向量',
  'model.note.words':
    '每个词变成一个宽 {e} 的虚构向量（同一个词，同一个向量），再加上位置编码。这一层本该接收前一层的输出，但这里没有逐层运行整个模型，所以用虚构向量代替。最多 {max} 个词。',
  'model.note.vectors':
    '每行一个词元：{e} 个数，用空格或逗号分隔，前面可加“标签:”。也可以粘贴形状为 (L, {e}) 的 JSON 数组。最多 {max} 行。',
  'model.note.random': '由种子生成的 N(0, 1) 隐藏状态，宽 {e}：种子相同，输入就相同。',
  'model.count': '词元数',
  'model.seed': '种子',
  'model.run': '运行这一层',

  'model.archMissing': '{f} 中没有 {arch} 注意力层。请选择与张量名称相符的架构。',
  'model.layerMissing': '文件中没有 {arch} 第 {layer} 层，只有第 {list} 层。',
  'model.headsDivide': '头数 numHeads = {h} 必须整除嵌入维度 E = {e}。',
  'model.crossDims': '这里运行的是自注意力，kdim 和 vdim 必须等于 E = {e}（文件中 kdim = {k}，vdim = {v}）。',
  'model.layerFailed': '这一层无法使用：{err}',
  'model.loadFailed': 'attnlab 拒绝了这些权重：{err} 应为：{want}',
  'model.badCount': '词元数必须是 1 到 {max} 之间的整数。',
  'model.noInput': '请先输入一些词，或粘贴一些向量。',
  'model.tooMany': '{n} 个词元太多了，这里最多 {max} 个。',
  'model.badWidth': '第 {row} 行有 {n} 个数，但这一层需要 E = {e} 个。',
  'model.notNumber': '第 {row} 行：“{x}”不是有限的数。',
  'model.badJsonInput': '粘贴的 JSON 无法使用：{err}',
  'model.notRows': '应为由行组成的数组，例如 [[0.1, 0.2, …], …]',

  'model.summary':
    '{what}：E = {e}，{h} 个头，每头宽 {d}，{l} 个查询 × {s} 个键{mask}。每张图是一个头的 softmax(QKᵀ/√d)（行是查询，每行和为 1）；最后一张是各头的平均，仅供诊断。',
  'model.summaryCausal': '，因果',
  'model.mapsTitle': '各头的注意力',
  'model.linksTitle': '词元连线（每个头一种颜色）',
};
