"""The models the exporter knows: torchvision's, and four written here.

Every model is prepared for capturing one training step as a pure function:
batch norm uses batch statistics without running buffers (no state is
mutated), dropout draws its mask from a hash the exported program computes
too (deterministic), and parameters are the only inputs besides the data.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from dropout_hash import dropout_keep


# ---- Dropout with a mask the exported program computes the same way ------
#
# PyTorch's dropout draws its mask from the generator's state, which an
# exported program cannot reproduce. Models here use `Dropout`, whose mask
# is a hash of the element's position, a seed (export.py --seed) and a salt
# per dropout layer (dropout_hash.py): the op `lms::dropout_mask`, computed
# by the kernel below in PyTorch (the reference) and by the same arithmetic
# in the exported MLIR (ops_elementwise.py). Like PyTorch's `native_dropout`, the forward keeps the boolean mask for
# the backward (one byte an element).

DROPOUT_SEED = [0]

_LIB = torch.library.Library("lms", "DEF")
_LIB.define("dropout_mask(Tensor x, int seed, int salt, float p) -> Tensor")
_LIB.impl("dropout_mask",
          lambda x, seed, salt, p: dropout_keep(
              torch.arange(x.numel(), dtype=torch.int64).reshape(x.shape),
              seed, salt, p), "CPU")
_LIB.impl("dropout_mask",
          lambda x, seed, salt, p: torch.empty(x.shape, dtype=torch.bool,
                                               device="meta"), "Meta")


class Dropout(nn.Module):
    """Inverted dropout (kept elements scaled by 1/(1-p)) with the mask of
    `lms::dropout_mask`; `salt` tells the layers of a model apart."""

    def __init__(self, p, salt):
        super().__init__()
        self.p, self.salt = p, salt

    def forward(self, x):
        if self.p == 0:
            return x
        mask = torch.ops.lms.dropout_mask(x.detach(), DROPOUT_SEED[0],
                                          self.salt, self.p)
        return torch.where(mask, x, x.new_zeros(())) * (1.0 / (1 - self.p))


class UNet3D(nn.Module):
    """3D U-Net (Cicek et al. 2016): per level two 3x3x3 conv + BN + ReLU,
    2x2x2 max pooling down, 2x2x2 transposed convolution (stride 2) up,
    skip connections by concatenation, a 1x1x1 conv to the classes."""

    def __init__(self, in_channels=1, classes=3, base=32, depth=4):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(
                nn.Conv3d(cin, cout, 3, padding=1, bias=False),
                nn.BatchNorm3d(cout), nn.ReLU(inplace=True),
                nn.Conv3d(cout, cout, 3, padding=1, bias=False),
                nn.BatchNorm3d(cout), nn.ReLU(inplace=True))

        chans = [base * 2 ** i for i in range(depth)]
        self.down = nn.ModuleList()
        cin = in_channels
        for c in chans:
            self.down.append(block(cin, c))
            cin = c
        self.bottom = block(chans[-1], chans[-1] * 2)
        self.up = nn.ModuleList()
        self.dec = nn.ModuleList()
        cin = chans[-1] * 2
        for c in reversed(chans):
            self.up.append(nn.ConvTranspose3d(cin, c, 2, stride=2))
            self.dec.append(block(2 * c, c))
            cin = c
        self.head = nn.Conv3d(chans[0], classes, 1)

    def forward(self, x):
        skips = []
        for blk in self.down:
            x = blk(x)
            skips.append(x)
            x = F.max_pool3d(x, 2)
        x = self.bottom(x)
        for up, dec, skip in zip(self.up, self.dec, reversed(skips)):
            x = up(x)
            x = dec(torch.cat([x, skip], dim=1))
        return self.head(x)


class GPT(nn.Module):
    """A GPT-2-style decoder: token and position embeddings, pre-norm blocks
    of causal multi-head attention and a 4x GELU MLP, a final layer norm and
    an output projection to the vocabulary. With `tied` (GPT-2's own
    choice) the projection is the token embedding's weight, transposed: one
    parameter read twice, whose gradient sums both uses (a separate
    nn.Linear sharing the weight would not do: PyTorch 1.13's functional_call
    replaces the shared parameter under one name only)."""

    def __init__(self, vocab=50257, seq=1024, layers=12, dim=768, heads=12,
                 tied=False, dropout=0.0):
        super().__init__()
        self.heads = heads
        self.tied = tied
        # GPT-2's three dropouts (embeddings, attention probabilities, each
        # residual branch), p = 0.1 as released.
        salts = iter(range(1, 2 + 3 * layers))
        self.drop = Dropout(dropout, next(salts))
        self.drops = nn.ModuleList(
            nn.ModuleList(Dropout(dropout, next(salts)) for _ in range(3))
            for _ in range(layers))
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.zeros(seq, dim))
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict(dict(
                ln1=nn.LayerNorm(dim), qkv=nn.Linear(dim, 3 * dim),
                proj=nn.Linear(dim, dim), ln2=nn.LayerNorm(dim),
                fc=nn.Linear(dim, 4 * dim), out=nn.Linear(4 * dim, dim))))
        self.ln = nn.LayerNorm(dim)
        if not tied:
            self.head = nn.Linear(dim, vocab, bias=False)
        mask = torch.full((seq, seq), -1e9).triu(1)
        self.register_buffer("mask", mask)

    def forward(self, tokens):
        b, t = tokens.shape
        d = self.pos.shape[1]
        h = self.heads
        x = self.drop(self.tok(tokens) + self.pos)
        for blk, (attn_drop, proj_drop, mlp_drop) in zip(self.blocks,
                                                         self.drops):
            y = blk["ln1"](x)
            q, k, v = blk["qkv"](y).split(d, dim=2)
            q = q.reshape(b, t, h, d // h).transpose(1, 2)
            k = k.reshape(b, t, h, d // h).transpose(1, 2)
            v = v.reshape(b, t, h, d // h).transpose(1, 2)
            att = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(d // h))
            att = attn_drop(torch.softmax(att + self.mask, dim=-1))
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + proj_drop(blk["proj"](y))
            y = blk["ln2"](x)
            x = x + mlp_drop(blk["out"](F.gelu(blk["fc"](y))))
        if self.tied:
            return F.linear(self.ln(x), self.tok.weight)
        return self.head(self.ln(x))


class RMSNorm(nn.Module):
    """Root-mean-square layer norm (Zhang and Sennrich 2019), as LLaMA's:
    x * rsqrt(mean(x^2) + eps) * weight, no mean subtraction, no bias."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) \
            * self.weight


class Llama(nn.Module):
    """A LLaMA-style decoder stack (Touvron et al. 2023): token embeddings,
    pre-norm blocks of RMSNorm, causal attention with rotary position
    embeddings (RoPE, rotate-half form) and grouped-query attention (each
    key/value head shared by `heads // kv_heads` query heads), and a SwiGLU
    MLP (down(silu(gate(x)) * up(x))); no biases, a final RMSNorm and an
    output projection of its own. The rotary tables (cos, sin) and the
    causal mask are buffers, as in the reference implementations."""

    def __init__(self, vocab=32000, seq=2048, layers=22, dim=2048, heads=32,
                 kv_heads=4, hidden=5632, base=10000.0):
        super().__init__()
        assert dim % heads == 0 and heads % kv_heads == 0
        self.heads, self.kv_heads = heads, kv_heads
        head_dim = dim // heads
        self.tok = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(nn.ModuleDict(dict(
                norm1=RMSNorm(dim),
                q=nn.Linear(dim, dim, bias=False),
                k=nn.Linear(dim, kv_heads * head_dim, bias=False),
                v=nn.Linear(dim, kv_heads * head_dim, bias=False),
                o=nn.Linear(dim, dim, bias=False),
                norm2=RMSNorm(dim),
                gate=nn.Linear(dim, hidden, bias=False),
                up=nn.Linear(dim, hidden, bias=False),
                down=nn.Linear(hidden, dim, bias=False))))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        inv = 1.0 / base ** (torch.arange(0, head_dim, 2).float() / head_dim)
        angles = torch.outer(torch.arange(seq).float(), inv)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())
        self.register_buffer("mask", torch.full((seq, seq), -1e9).triu(1))

    @staticmethod
    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat([-x[..., half:], x[..., :half]], dim=-1)

    def forward(self, tokens):
        b, t = tokens.shape
        h, kvh = self.heads, self.kv_heads
        x = self.tok(tokens)
        d = x.shape[-1]
        hd = d // h
        for blk in self.blocks:
            y = blk["norm1"](x)
            q = blk["q"](y).reshape(b, t, h, hd).transpose(1, 2)
            k = blk["k"](y).reshape(b, t, kvh, hd).transpose(1, 2)
            v = blk["v"](y).reshape(b, t, kvh, hd).transpose(1, 2)
            q = q * self.cos + self.rotate_half(q) * self.sin
            k = k * self.cos + self.rotate_half(k) * self.sin
            if kvh != h:
                k = k[:, :, None].expand(b, kvh, h // kvh, t, hd) \
                    .reshape(b, h, t, hd)
                v = v[:, :, None].expand(b, kvh, h // kvh, t, hd) \
                    .reshape(b, h, t, hd)
            att = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(hd))
            att = torch.softmax(att + self.mask, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + blk["o"](y)
            y = blk["norm2"](x)
            x = x + blk["down"](F.silu(blk["gate"](y)) * blk["up"](y))
        return self.head(self.norm(x))


class TinyCNN(nn.Module):
    """Conv, batch norm, ReLU, max pooling, global average pooling and a
    linear layer: the ops of ResNet at a size that executes in a test."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.conv3 = nn.Conv2d(8, 16, 1, bias=True)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        y = F.relu6(self.bn2(self.conv2(x)))
        x = F.relu(self.conv3(y + x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class TinyVGG(nn.Module):
    """Convolutions, max pooling and both kinds of adaptive average pooling
    VGG meets (a 4x4 map averaged to 2x2, a 1x1 map replicated to 3x3)."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
        self.fc = nn.Linear(4 * 9, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)         # 8 -> 4
        x = F.adaptive_avg_pool2d(x, 2)                    # 4 -> 2
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)         # 2 -> 1
        x = F.adaptive_avg_pool2d(x, 3)                    # 1 -> 3
        return self.fc(x.flatten(1))


class TinyStrided(nn.Module):
    """Strided convolutions whose input gradient the step computes: 3x3
    stride 2 padded and 1x1 stride 2 (ResNet's downsampling), a depthwise
    one with stride and dilation, and a stride of 3 over a kernel of 2 that
    never reads some rows (their gradient is zero)."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv0 = nn.Conv2d(3, 4, 3, padding=1)
        self.conv1 = nn.Conv2d(4, 6, 3, stride=2, padding=1, bias=False)
        self.down = nn.Conv2d(4, 6, 1, stride=2, bias=False)
        self.dw = nn.Conv2d(6, 6, 3, stride=2, padding=2, dilation=2,
                            groups=6, bias=False)
        self.odd = nn.Conv2d(6, 5, (2, 3), stride=(3, 1), padding=(0, 1))
        self.fc = nn.Linear(5, classes)

    def forward(self, x):
        x = F.relu(self.conv0(x))
        y = F.relu(self.conv1(x) + self.down(x))
        y = self.odd(F.relu(self.dw(y)))
        return self.fc(y.mean((2, 3)))


def _strip(model, dropout=None):
    """Batch statistics without running buffers; each nn.Dropout becomes a
    `Dropout` of the same probability (or `dropout`), with a mask the
    exported program computes too."""
    salts = iter(range(1, 1 << 20))
    for name, mod in list(model.named_modules()):
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            mod.track_running_stats = False
            mod.running_mean = None
            mod.running_var = None
            mod.num_batches_tracked = None
        for child_name, child in list(mod.named_children()):
            if isinstance(child, nn.Dropout):
                setattr(mod, child_name, Dropout(
                    child.p if dropout is None else dropout, next(salts)))
    return model


# name -> (constructor(size), input kind, classes, default size)
def build(name, size, dropout=None):
    """Returns (model, input_shape_fn(batch), kind) where kind is 'image'
    (float input, one-hot class targets), 'voxels' (float input, per-voxel
    one-hot targets) or 'tokens' (integer tokens, next-token targets)."""
    import torchvision.models as tv
    if name in ("resnet18", "resnet50", "vgg16", "mobilenet_v2"):
        model = getattr(tv, name)()
        return (_strip(model, dropout), (lambda b: (b, 3, size, size)),
                "image", 1000)
    if name == "tiny-cnn":
        return _strip(TinyCNN()), (lambda b: (b, 3, size, size)), "image", 10
    if name == "tiny-strided":
        return TinyStrided(), (lambda b: (b, 3, size, size)), "image", 10
    if name == "tiny-vgg":
        return _strip(TinyVGG()), (lambda b: (b, 3, size, size)), "image", 10
    if name == "unet3d":
        return (_strip(UNet3D()), (lambda b: (b, 1, size, size, size)),
                "voxels", 3)
    if name == "tiny-unet3d":
        return (_strip(UNet3D(base=2, depth=2)),
                (lambda b: (b, 1, size, size, size)), "voxels", 3)
    if name == "gpt2":
        # GPT-2 small as released: the output projection is the token
        # embedding (124M parameters).
        return (GPT(seq=size, tied=True,
                    dropout=0.1 if dropout is None else dropout),
                (lambda b: (b, size)), "tokens", 50257)
    if name == "gpt2-untied":
        # With an output projection of its own (163M parameters): the model
        # the measurements made before the tied head used.
        return (GPT(seq=size, dropout=dropout or 0.0),
                (lambda b: (b, size)), "tokens", 50257)
    if name == "tiny-gpt-tied":
        return (GPT(vocab=32, seq=size, layers=2, dim=16, heads=2, tied=True,
                    dropout=dropout or 0.0),
                (lambda b: (b, size)), "tokens", 32)
    if name == "tiny-gpt":
        return (GPT(vocab=32, seq=size, layers=2, dim=16, heads=2,
                    dropout=dropout or 0.0),
                (lambda b: (b, size)), "tokens", 32)
    if name == "tiny-gpt-vocab":
        # The loss over the vocabulary sets the smallest feasible budget, as
        # in GPT-2 (tests of --lms-split).
        return (GPT(vocab=512, seq=size, layers=1, dim=16, heads=2,
                    dropout=dropout or 0.0),
                (lambda b: (b, size)), "tokens", 512)
    if name == "llama":
        # TinyLlama-1.1B's dimensions (22 blocks, 2048 wide, 32 query and 4
        # key/value heads, SwiGLU 5632, 32,000 tokens): 1.1B parameters.
        return Llama(seq=size), (lambda b: (b, size)), "tokens", 32000
    if name == "tiny-llama":
        return (Llama(vocab=32, seq=size, layers=2, dim=16, heads=4,
                      kv_heads=2, hidden=24),
                (lambda b: (b, size)), "tokens", 32)
    raise SystemExit(f"export.py: unknown model '{name}'")


MODELS = ["resnet18", "resnet50", "vgg16", "mobilenet_v2", "unet3d", "gpt2",
          "gpt2-untied", "tiny-cnn", "tiny-strided", "tiny-vgg", "tiny-unet3d", "tiny-gpt",
          "tiny-gpt-tied", "tiny-gpt-vocab", "llama", "tiny-llama"]
