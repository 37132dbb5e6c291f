// @ts-check
// “读过唐诗的小 Transformer”一节的中文文案（parts/poem/），键与 en-poem.js 相同。

export default {
  'part.poem.toc': '读过唐诗的小模型',
  'part.poem.title': '一个读过唐宋绝句的小 Transformer',
  'part.poem.intro':
    '前面的例子不是玩具任务，就是随机权重。这一节换成一个真正训练过的模型，虽然很小：字级别的 Llama（RMSNorm（均方根归一化）、RoPE（旋转位置编码）、SwiGLU（门控前馈层）；4 层，每层 4 个头），由 attnlab 自己在约 8.9 万首唐宋绝句上训练而成。页面用加载普通检查点的同一套方法加载它（<code>readSafetensors</code> + <code>loadModel</code>），让它写诗，看每个头在看哪里，把头关掉看看会怎样；最后按教程 10.1 节建议的学习路径，在你的浏览器里从零训练一个更小的模型。',

  'poem.loading': '正在加载诗歌模型（config.json、model.safetensors、tokenizer.json 和留出的诗）……',
  'poem.loadFailed': '诗歌模型加载失败：{err}',
  'poem.httpError': '{f}：HTTP {s}',
  'poem.waiting': '等待模型加载……',
  'poem.facts':
    '<strong>模型概况</strong>：{p} M 参数，{L} 层 × {H} 个头，E = {E}，词表 {V} 个字。<strong>留出诗上的损失</strong>：在随模型附带的 {poems} 首留出绝句（{chars} 个预测词元：每个字和诗末的 [EOS]）上，每字 {loss} 奈特；本节说“留出诗上的损失”，指的都是这组诗。作为参照，训练报告在整个测试集（{n} 个预测词元）上给出：只看前一个字的二元模型 {bigram}，只看字频 {unigram}。',
  'poem.legend': '注意力权重（{bos} = [BOS]，开头标记）',
  'poem.layer': '第 {l} 层',
  'poem.lh': '第 {l} 层 · 头 {h}',
  'poem.headN': '头 {h}',

  'poem.gen.title': '它会写诗吗？',
  'poem.gen.sec': '§10.1 · §11',
  'poem.gen.note':
    '模型一次写一个字，每个字都从它预测的分布里抽样（<code>model.generate</code>，带随机种子）。勾选“守住格式（字数和标点）”时，凡是破坏格式的字（句子太短或太长、标点位置不对）都会被替换：该断句时补上句末的“，”或“。”，否则在格式允许的字里按模型自己的分布重新抽样；写满四句就停。被替换的字会标出来。点一个字，可以看到它的注意力行：模型选这个字时，每个头看向了哪里。',
  'poem.len': '每句字数',
  'poem.lenAria': '每句几个字',
  'poem.lenAuto': '由模型决定',
  'poem.len5': '五言（每句 5 字）',
  'poem.len7': '七言（每句 7 字）',
  'poem.temp': '温度',
  'poem.seed': '种子',
  'poem.keepForm': '守住格式（字数和标点）',
  'poem.write': '写一首',
  'poem.nextSeed': '再来一首（种子 + 1）',
  'poem.cellTip': '第 {i} 个字：点击查看它的注意力行',
  'poem.noGlyph': '（本机没有能显示这个字的字体，这里写出它的码位 {u}）',
  'poem.forcedTip': '为守格式而定；模型原本抽到的是“{want}”',
  'poem.form.none': '模型自己守住了格式，没有替换任何字。',
  'poem.form.some': '为守格式替换了模型的 {n} 个字（抽到的 → 保留的）：{list}。',
  'poem.free.ok': '没有任何帮助，这首诗也符合绝句的格式。',
  'poem.free.broken': '没有帮助时，这首诗破坏了绝句的格式。',
  'poem.rowsTitle': '所选字的注意力行',
  'poem.rowsNote':
    '“{c}”（第 {n} 个字）的注意力行：每层每个头一行，覆盖它前面的所有字。这就是模型生成这个字时用到的注意力权重。',
  'poem.measure': '测一测：不加帮助写 100 首',
  'poem.measuring': '正在抽样……{k} / {n}',
  'poem.rate': '不加帮助（字数由模型决定，温度 {temp}，种子 {s}–{e}）：{n} 首中有 {ok} 首符合绝句的格式。',

  'poem.switch.title': '训练过的，还是同一架构的随机初始化',
  'poem.switch.sec': '§8.1',
  'poem.switch.note':
    '同一架构、刚初始化的权重（<code>createModel(model.config)</code>，种子 1）写出来的是乱码，它的因果注意力在已有的字上几乎是均匀的：热力图里的下三角来自因果掩码，不是学出来的。这个开关作用于本节所有面板。',
  'poem.model.trained': '训练好的模型',
  'poem.model.random': '随机初始化',
  'poem.compare.trained': '训练好的：每字 {loss} 奈特；注意力平均熵 {e}（均匀分布为 {u}）。',
  'poem.compare.random': '随机的：每字 {loss} 奈特；注意力平均熵 {e}（均匀分布为 {u}）。',
  'poem.compare.lnV': '在 {V} 个字里均匀瞎猜，代价是 ln V = {v} 奈特。',
  'poem.compare.sample': '在 {n} 首留出诗（{c} 个预测词元）上：',

  'poem.grid.title': '每个头在看什么：测出来的',
  'poem.grid.sec': '§7.1 · §7.2',
  'poem.grid.note':
    '上面那首诗在每一层、每个头上的注意力。头的名字是测出来的，不是猜的：在留出的诗上，统计它放在某种模式的键上的平均权重（前一个字、上一句同一位置的字……），再和均匀注意力比较。点一个头，看它的热力图和连线。',
  'poem.namesNote':
    '{all} 个头里有 {n} 个呈现清晰的模式（{src}：该模式上的平均权重 ≥ {s}，且 ≥ 均匀注意力的 {r} 倍）；其余标为“没有明确分工”。',
  'poem.src.json': '预先在 {n} 首留出的绝句上测得',
  'poem.linksAria': '所选头的字间连线：左边是每个字，右边是它关注的字。用方向键选字。',
  'poem.src.live': '在本页用 {n} 首留出诗测得',
  'poem.noRole': '没有明确分工',
  'poem.pattern.previous': '前一个字',
  'poem.pattern.couplet': '上一句同一位置（对仗）',
  'poem.pattern.rhyme': '押韵位置',
  'poem.pattern.punctuation': '标点与开头',
  'poem.pattern.lineStart': '本句第一个字',
  'poem.pattern.tone': '平仄',
  'poem.pattern.self': '自己',
  'poem.pattern.bos': '第一个词元',
  'poem.headCaption': '{lh}：{name}',
  'poem.linkTip': '查询 {q} → 键 {k}：{v}',
  'poem.linkQuery': '查询 {tok}：{best}',

  'poem.sentence.title': '教程里的那句话，交给这个模型读',
  'poem.sentence.sec': '§2.3 · §7.1',
  'poem.sentence.note':
    '教程 2.3 节用“这只猫因为没有及时喂食，所以一直在叫。”说明注意力：理想中，“叫”应该看向“猫”（谁在叫）和“喂食”（为什么叫）。这里把这句话交给上面那个读过绝句的模型：在它的词表里一个字就是一个词元，句首加上 [BOS]，一次前向就得到“叫”在每一层、每个头上的注意力行。下面的数都是本页此刻从模型算出来的，不是写死的。',
  'poem.sentence.comma': '原句（带逗号）',
  'poem.sentence.plain': '去掉逗号',
  'poem.sentence.rowsTitle': '“叫”的注意力行（每层每个头一行）',
  'poem.sentence.named': '{lh}（{name}）',
  'poem.sentence.other.comma': '去掉逗号的句子',
  'poem.sentence.other.plain': '带逗号的原句',
  'poem.sentence.card':
    '“叫”能看到 {n} 个词元（[BOS] 和它前面的每个字），均匀分配时每个得 {u}。{heads} 个头里，给“喂”权重最多的是{feed}：{fw}{feedTop}。给“猫”最多的是{cat}：{cw}{catTop}。同一个{feed}在{other}里最看重“{ek}”（{ew}）。',
  'poem.sentence.top.self': '，这也是它给得最多的一个',
  'poem.sentence.top.other': '，而它最看重的是“{k}”（{w}）',
  'poem.sentence.moral':
    '没有一个头像教程的示意图那样把“叫”主要连到“猫”上。这个模型只读过绝句，它的头学到的是诗的结构：标点、前一个字、句首（见上面的网格）。加不加一个逗号，同一个头看的字就会换掉，说明它找的是位置和标点，不是“谁在叫”。教程里的理想读者是为了讲道理画出来的；训练出来的模型学到什么，取决于它读过什么。',

  'poem.advanced': '进阶：把头关掉，先猜哪个头最重要（教程 8.2 节）',
  'poem.mask.title': '把头关掉',
  'poem.mask.sec': '§8.2',
  'poem.mask.note':
    '关掉一个头，就是把它的注意力权重乘以 0（<code>headMask</code>）。损失的变化，以及用同一组随机数写出的两首诗（一首所有头都在，一首关掉所选的头；为了让两首只差在这些头上，它们用本面板自己的抽样器，不是上面“写一首”的那首诗），会告诉你这个头做了什么。下表把每个头注意力的“尖锐程度”（熵比均匀分布低多少）和去掉它的代价放在一起：单看注意力权重，说不清哪个头真正重要。',
  'poem.guessQ':
    '下表把 {n} 个头一个一个关掉，量出留出诗上的损失涨了多少。关掉哪一个头，损失涨得最多？是注意力最尖锐的那个头吗？',
  'poem.guessAnswer':
    '<b>{top}：关掉它，损失涨了 {d} 奈特，{n} 个头里最多。</b>它的注意力却几乎是平的：熵 {e}，均匀分布为 {u}，按尖锐程度只排第 {rank}。注意力最尖锐的{sharp}（熵 {se}）关掉后，损失只涨 {sd}：单看注意力权重，看不出哪个头重要（教程 8.2 节）。',
  'poem.maskReset': '全部打开',
  'poem.maskLoss':
    '关掉 {off} 后，损失变化 {d} 奈特（为了每次点击都能立刻算完，只在前 {n} 首留出诗、{c} 个预测词元上测）。',
  'poem.maskNone': '所有头都开着。关掉一个头，这里会给出损失的变化（在前 {n} 首留出诗、{c} 个预测词元上测）。',
  'poem.maskIntact': '所有头都在：',
  'poem.maskMasked': '关掉之后：',
  'poem.col.head': '头',
  'poem.col.name': '测出的模式',
  'poem.col.entropy': '熵（奈特）',
  'poem.col.sharp': '尖锐程度（{u} − 熵）',
  'poem.col.delta': '去掉后损失的变化',
  'poem.tableNote': '所有头都在时的损失 {base}（{src}）。尖锐程度与作用大小的秩相关系数：ρ = {rho}。',

  'poem.train.title': '在这里从零训练一个',
  'poem.train.sec': '§10.1',
  'poem.train.note':
    '同一家族的更小模型（E = 64，2 层 × 4 个头）在后台线程（Web Worker）里用 <code>trainStep</code>（AdamW）训练。数据是模型文件夹里的训练子集：从诗歌模型的训练集里取出的 5,023 首绝句（约 470 KB，训练面板准备好时才加载），或者你粘贴的任意文本，一个字一个词元。损失图里的虚线是 16 首留出绝句上的损失，这些诗从不参与训练。中间那张图是每种注意力模式上得分最高的头：开始时都停在均匀分布的水平，训练一阵之后，先出现盯着标点的头，再出现看前一个字的头。',
  'poem.lr': '学习率（AdamW）',
  'poem.lrAria': '从零训练的学习率',
  'poem.lrNote':
    '在本页用种子 1 实测（16 首观察诗）：学习率 3e-3 下，观察诗的损失从 8.0 降到第 100 步的 5.9、第 400 步的 5.5、第 800 步的 5.2，训练数据够多，没有回升；盯着标点的头在第 100 步前后出现（得分 0.57，均匀水平 0.17），看前一个字的头在第 200 到 400 步之间成形（0.27 → 0.62，均匀水平 0.10）。1e-3 学得慢，第 400 步损失 5.6，还没有看前一个字的头；1e-2 第 400 步 5.7，反而不如 3e-3。换学习率会重新开始训练。',
  'poem.src.poems': '绝句',
  'poem.src.text': '我的文本',
  'poem.textAria': '你的文本（任何语言，一个字一个词元）',
  'poem.textPlaceholder': '粘贴一段至少几百字的文本，任何语言都可以……',
  'poem.textShort': '你的文本只有 {n} 个字，至少需要 {min} 个。',
  'poem.train.start': '训练',
  'poem.train.resume': '继续',
  'poem.train.pause': '暂停',
  'poem.train.reset': '重置（换个种子）',
  'poem.train.failed': '训练出错：{err}',
  'poem.train.cfg': 'E {E}，{L} 层 × {H} 个头，词表 {V}',
  'poem.train.stats':
    '第 {s} 步 · 损失 {loss}（观察诗 {probe}）· 每秒 {sps} 步 · {sec} 秒 · 各头中最低的熵 {e}（均匀 {u}）· {cfg}',
  'poem.lossCaption': '损失（奈特）：训练批次，以及 {n} 首留出的观察诗（虚线）',
  'poem.entropyCaption': '观察诗上每个头的平均注意力熵（第 2 层为虚线）',
  'poem.shipped.caption':
    '上面那个诗歌模型自己的训练过程：{steps} 步，训练损失（实线）和 1,000 首验证诗上的损失（虚线），单位奈特',
  'poem.shipped.note':
    '它的训练损失从第 50 步的 {t0} 降到最后的 {t1}；验证损失从第 {s0} 步的 {v0} 降到第 {s1} 步的 {v1}，到最后还在缓慢下降。下面的小模型走的是同一条路，只是小得多、短得多。',
  'poem.patternCaption': '留出的观察诗上，每种注意力模式得分最高的那个头的得分（0 到 1）',
  'poem.steps': '步数',
  'poem.lnV': 'ln V = {v}',
  'poem.uniformLine': '均匀 {v}',
  'poem.snap': '快照',
  'poem.snapAria': '注意力图的快照',
  'poem.snapStep': '第 {s} 步的注意力图',
};
