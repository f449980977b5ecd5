"""Stage 3: Binary -> loaded Function -> launch. The CUDA driver, devices and streams,
memory, argument packing and the generated launch code. Nothing here touches the GPU at
import time."""
