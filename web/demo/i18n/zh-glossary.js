// @ts-check
// 术语表（widgets/glossary.js）的中文文案：每个术语一句解释，键与 en-glossary.js 相同；术语本身来自 terms.js。

export default {
  'glossary.open': '术语表',
  'glossary.openAria': '打开术语表：本页用到的术语，中英对照',
  'glossary.title': '术语表',
  'glossary.note': '本页用到的术语，中文在前，英文在后，每个一句解释。按 Esc 或“关闭”回到原处。',
  'glossary.close': '关闭',
  'glossary.def.token':
    '模型处理文本的基本单位。本页从第 2 部分起（包括诗歌模型）一个汉字算一个词元，第 1 部分一个词算一个；GPT-2 等模型的词元是子词。',
  'glossary.def.padding': '为了把长短不同的序列放进同一批，在短序列后面补上的占位词元；要用掩码让注意力不看它们。',
  'glossary.def.state-dict': 'PyTorch 保存模型参数的方式：从参数名到张量的映射。',
  'glossary.def.loss': '训练要降低的数。这里是交叉熵：模型给正确的下一个词元的概率，取负对数，单位是奈特。',
  'glossary.def.logits': '输出层给每个候选词元的原始分数，经过 softmax 才变成概率。',
  'glossary.def.worker': '浏览器里独立于页面运行的线程；训练和大模型放在那里跑，页面不会卡住。',
  'glossary.def.sdpa': '注意力的核心计算：softmax(QKᵀ / √dₖ) · V。',
  'glossary.def.mha': '把查询、键、值各投影成几份（几个头），各自做缩放点积注意力，再拼起来投影回去。',
  'glossary.def.entropy': '一行注意力权重有多分散：平均分给 n 个键时最大（ln n），全部放在一个键上时为 0。',
  'glossary.def.nats': '用自然对数计量损失或熵时的单位。在 V 个词元里均匀瞎猜，损失是 ln V 奈特。',
  'glossary.def.query': '当前位置“要找什么”的向量；它和每个键做点积，得到分数。',
  'glossary.def.key': '每个位置“有什么”的向量，用来和查询比较。',
  'glossary.def.value': '每个位置真正被取走的信息；注意力的输出是值的加权平均。',
  'glossary.def.head': '多头注意力里一份独立的注意力计算，有自己的查询、键、值投影。',
  'glossary.def.mask': '规定哪些查询和键之间不能看：被屏蔽的分数设为 −∞，softmax 之后权重恰好为 0。',
  'glossary.def.batch': '一次一起计算的多条序列；它们之间互不关注。',
  'glossary.def.scale': '分数除以 √dₖ，免得维度变大时 softmax 过于尖锐、梯度消失。',
  'glossary.def.weights':
    'softmax 之后的注意力分布：每行非负、和为 1。模型的参数也叫权重，本页说“注意力权重”时指前者。',
  'glossary.def.rmsnorm': '把向量除以它各分量平方平均值的平方根，再乘一个可学的缩放，让每层输入的大小保持稳定。',
  'glossary.def.rope': '按位置把查询和键的每两个分量旋转一个角度，使位置对它们点积的影响只取决于两者相隔多远。',
  'glossary.def.swiglu': '注意力之后的前馈层：一路线性变换经过 SiLU，与另一路相乘（门控），再投影回原来的维度。',
  'glossary.def.residual': '把一层的输入直接加到它的输出上（x + f(x)），信息可以绕过这一层继续往下传。',
  'glossary.def.causal-mask': '让每个位置只看自己和前面的位置：生成文本时不能偷看后面的词元。',
  'glossary.def.temperature': '抽样前把分数除以温度：小于 1 更保守，大于 1 更随机，0 就是总选最可能的那个。',
  'glossary.def.bos': '加在序列最前面、表示“从这里开始”的特殊词元；没事可做的头常把权重放在它上面。',
  'glossary.def.eos': '表示“到此结束”的特殊词元；模型写出它，生成就停下。',
};
