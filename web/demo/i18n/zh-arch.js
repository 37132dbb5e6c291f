// @ts-check
// 诗歌模型一节的架构卡片和“只看本句”实验（parts/poem/arch-view.js）的中文词条，与 en-arch.js 的键相同。

export default {
  'poem.arch.title': '这个模型长什么样',
  'poem.arch.sec': '§11',
  'poem.arch.note':
    '下面是诗歌模型从输入到输出的每一步，按它的 config.json 算出形状和参数量（T 取一首五言绝句的长度 {T}：[BOS]、20 个字、4 个标点和 [EOS]）。中间的几步在每一层里重复一次。',
  'poem.arch.col.stage': '步骤',
  'poem.arch.col.shape': '输出形状',
  'poem.arch.col.params': '参数',
  'poem.arch.block': '以下每层相同，共 {L} 层（参数按一层计）',
  'poem.arch.tied': '与词嵌入共用',
  'poem.arch.stage.embed': '词嵌入：每个字查一行向量',
  'poem.arch.stage.norm1': 'RMSNorm',
  'poem.arch.stage.qkv': '线性变换得到 Q、K、V（{H} 个查询头，{KV} 个键值头）',
  'poem.arch.stage.rope': 'RoPE：按位置旋转 Q 和 K',
  'poem.arch.stage.attn': '注意力权重 softmax(QKᵀ/√d)，每个头一张 T × T 的图',
  'poem.arch.stage.out': '加权求和后拼接各头，再做一次线性变换',
  'poem.arch.stage.res1': '残差：加回这一层的输入',
  'poem.arch.stage.norm2': 'RMSNorm',
  'poem.arch.stage.swiglu': 'SwiGLU：两路线性变换，一路过 SiLU 后相乘',
  'poem.arch.stage.down': '线性变换回到 E 维',
  'poem.arch.stage.res2': '残差：再加回来',
  'poem.arch.stage.final': '最后一次 RMSNorm',
  'poem.arch.stage.head': '输出层：每个位置对词表里每个字打分',
  'poem.arch.shares':
    '共 {total} 个参数：词嵌入 {embedding}，注意力 {attention}，MLP {mlp}，归一化 {norm}。注意力只占一小部分，大头是词嵌入表和 MLP。',
  'poem.arch.rmsnorm': '<b>RMSNorm</b>：把每个位置的向量除以它的均方根，再乘一组可学的系数，让数值的大小保持稳定。',
  'poem.arch.rope': '<b>RoPE</b>：按位置把 Q 和 K 的每两维转一个角度，于是 QKᵀ 里只剩下两个字之间的相对距离。',
  'poem.arch.swiglu': '<b>SwiGLU</b>：MLP 的一种写法，一路算出“门”，决定另一路的每一维放过多少。',
  'poem.arch.residual': '<b>残差</b>：每个子层的输出都加回它的输入，信息可以绕过这一层直接往上走，深的网络也训得动。',

  'poem.window.head': '只看本句：滑动窗口注意力',
  'poem.window.note':
    '教程 11 节提到窗口注意力：每个位置只看身边的 W 个词元，计算量从 T² 降到 T·W。这个模型训练时看的是整首诗。在不重新训练的前提下把它的注意力限制在窗口里，或者让它只读当前这一句，看看损失会怎样变化。',
  'poem.window.run': '在 {n} 首留出诗上测量',
  'poem.window.running': '正在计算…',
  'poem.window.lineOnly':
    '<b>只读本句</b>（[BOS] 加这一句的字和标点，前面几句都不给）：每字 {only} 奈特；读整首诗时，同样这些字是 {full} 奈特（{n} 个字，不含每句的第一个字）。前面几句让它每字少了 {d} 奈特：对仗、押韵和诗意都要往前看。',
  'poem.window.col.W': '窗口 W',
  'poem.window.col.loss': '损失（奈特/字）',
  'poem.window.col.delta': '比整首诗多',
  'poem.window.full': '整首诗（训练时的方式）',
  'poem.window.after':
    '窗口小于诗长时，靠后的字连开头的 [BOS] 也看不见了，而不少头习惯把一部分注意力放在它身上。只读本句的实验保留了 [BOS]，损失照样大涨：代价主要来自丢掉的前文。',
};
