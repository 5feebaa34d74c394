"""Tensor descriptors: a kernel's view of a whole tensor, read block by block (a TensorDesc<E> parameter)."""


class TensorDescriptor:
    """A tensor descriptor argument: `array` with its shape and strides, in elements, and the block one load reads.
    The array is a numpy array or a CPU tensor (interpreter, eager mode, emulator, copies to a GPU), or a GPU array
    (a torch CUDA tensor, anything with __cuda_array_interface__ or DLPack on a CUDA device). Shape and strides
    default to the array's own; the kernel specializes on the block. Launches check it with the rules of a TMA
    tensor map (ir/TensorDescriptor.h): rank 1 to 5, a contiguous innermost dimension, outer strides of multiples
    of 16 bytes, block dimensions that are powers of two up to 256, an innermost block row of a multiple of 16
    bytes and a 16-byte-aligned array; and its shape and strides must stay inside the array.

        desc = tessera.TensorDescriptor(a, block_shape=(64, 32))
    """

    __slots__ = ("array", "shape", "strides", "block_shape")

    def __init__(self, array, block_shape, shape=None, strides=None):
        self.array = array
        self.block_shape = tuple(block_shape)
        if shape is None or strides is None:
            own_shape, own_strides = _shape_and_strides(array)
            shape = own_shape if shape is None else shape
            strides = own_strides if strides is None else strides
        self.shape = tuple(shape)
        self.strides = tuple(strides)

    def __repr__(self):
        return (f"TensorDescriptor(shape={self.shape}, strides={self.strides}, block_shape={self.block_shape}, "
                f"array={type(self.array).__name__})")


def _shape_and_strides(array):
    """An array's shape and strides in elements: numpy's (strides in bytes), torch's (stride(), in elements) or
    those of a __cuda_array_interface__ (strides in bytes; None when C-contiguous)."""
    stride = getattr(array, "stride", None)
    if callable(stride):  # torch
        return tuple(array.shape), tuple(stride())
    cai = getattr(array, "__cuda_array_interface__", None)
    if cai is not None:
        shape, byte_strides, itemsize = tuple(cai["shape"]), cai.get("strides"), int(cai["typestr"][2:])
        if byte_strides is None:
            byte_strides, step = [], itemsize
            for extent in reversed(shape):
                byte_strides.insert(0, step)
                step *= extent
    else:
        try:
            shape, byte_strides, itemsize = tuple(array.shape), array.strides, array.itemsize
        except AttributeError:
            raise TypeError(f"a TensorDescriptor's array must be a numpy array, a tensor or a GPU array "
                            f"(__cuda_array_interface__), got {type(array).__name__}") from None
    if any(s % itemsize for s in byte_strides):
        raise ValueError("the array's strides are not whole elements; pass strides=")
    return shape, tuple(s // itemsize for s in byte_strides)
