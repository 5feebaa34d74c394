"""Tensor descriptors: a kernel's view of a whole tensor, read block by block (a TensorDesc<E> parameter)."""


class TensorDescriptor:
    """A tensor descriptor argument: `array` (a numpy array) with its shape and strides, in elements, and the
    block one load reads. Shape and strides default to the array's own; the kernel specializes on the block.
    Launches check it with the rules of a TMA tensor map (ir/TensorDescriptor.h): rank 1 to 5, a contiguous
    innermost dimension, outer strides of multiples of 16 bytes, block dimensions that are powers of two up to
    256, an innermost block row of a multiple of 16 bytes and a 16-byte-aligned array.

        desc = tessera.TensorDescriptor(a, block_shape=(64, 32))
    """

    __slots__ = ("array", "shape", "strides", "block_shape")

    def __init__(self, array, block_shape, shape=None, strides=None):
        self.array = array
        self.block_shape = tuple(block_shape)
        self.shape = tuple(array.shape) if shape is None else tuple(shape)
        if strides is None:
            if any(s % array.itemsize for s in array.strides):
                raise ValueError("the array's strides are not whole elements; pass strides=")
            strides = [s // array.itemsize for s in array.strides]
        self.strides = tuple(strides)

    def __repr__(self):
        return (f"TensorDescriptor(shape={self.shape}, strides={self.strides}, block_shape={self.block_shape}, "
                f"dtype={self.array.dtype})")
