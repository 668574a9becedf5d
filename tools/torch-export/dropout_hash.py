"""The dropout mask of the exporter's models: the one definition that
PyTorch's kernel (models.py, the reference) and the exported program
(ops_elementwise.py, the same arithmetic in MLIR) both follow. An element
is kept when the upper 24 bits of the lowbias32 hash of its flat position,
the seed and the layer are at least p * 2^24. All arithmetic is on values
below 2^32 times constants below 2^31, so int64 never overflows and both
agree exactly."""

MASK32 = 0xFFFFFFFF
HASH_SEED, HASH_SALT = 0x27D4EB2D, 0x165667B1
HASH_MUL1, HASH_MUL2 = 0x21F0AAAD, 0x735A2D97


def dropout_keep(index, seed, salt, p):
    """Whether the element at flat `index` (an int64 tensor or an int) is
    kept."""
    h = (index & MASK32) ^ ((seed & MASK32) * HASH_SEED & MASK32) ^ \
        ((salt & MASK32) * HASH_SALT & MASK32)
    h = ((h ^ (h >> 16)) * HASH_MUL1) & MASK32
    h = ((h ^ (h >> 15)) * HASH_MUL2) & MASK32
    h = h ^ (h >> 15)
    return (h >> 8) >= dropout_threshold(p)


def dropout_threshold(p):
    return int(round(p * (1 << 24)))
