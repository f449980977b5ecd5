"""torch.empty spellings on CUDA: host ns per call (each result freed), best of 5.

Run: python benchmarks/probe_torch_empty.py (needs PyTorch with a GPU). jitkern makes tensor
results with the cheapest one (runtime/libraries.py, the torch row's results).
"""
import timeit


def main() -> None:
    import torch

    torch.empty(1, device=0)
    names = {"dt": torch.float32, "empty": torch.empty, "S0": (), "S1": (1024,), "S2": (32, 32)}
    for stmt in ["empty((), dtype=dt, device=0)", "empty(size=S0, dtype=dt, device=0)",
                 "empty(1024, dtype=dt, device=0)", "empty(size=S1, dtype=dt, device=0)",
                 "empty((1024,), dtype=dt, device=0)", "empty(32, 32, dtype=dt, device=0)",
                 "empty(size=S2, dtype=dt, device=0)"]:
        n = 50000
        t = min(timeit.repeat(stmt, globals=names, number=n, repeat=5)) / n * 1e9
        print(f"{stmt:42s} {t:7.0f} ns")


if __name__ == "__main__":
    from needs import require_gpu  # (benchmarks/ is on sys.path: the script's folder)

    require_gpu(__file__)
    main()
