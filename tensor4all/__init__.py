"""tensor4all: the structured layer (diagonal and block-diagonal tensors over dense
tenferro leaves, jagged/tiled shapes, tensor networks: MPS, MPO, DMRG).

Nothing is implemented here yet; the structured-tensor and tensor-network issues
build it on top of ``tenferro`` (see README.md).
"""

__all__: list[str] = []
