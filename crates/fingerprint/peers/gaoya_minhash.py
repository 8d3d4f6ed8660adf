"""gaoya's MinHash on one thread, for `cargo bench --bench peers`.

Reads a JSON list of texts from the file named by argv[1] and the shingle size, bands and
rows from argv[2:5]; builds a MinHashStringIndex with character shingles of that size and
bands x rows 32-bit values (the same signature shape as copyhound's), inserts every text
one at a time (insert_document: shingling, hashing, the signature and the band buckets, on
the calling thread) and prints one JSON line: texts, bytes (UTF-8), seconds of the best
of `repeats` runs.
"""

import json
import sys
import time

import gaoya


def main():
    path, k, bands, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    repeats = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    with open(path, encoding="utf-8") as f:
        texts = json.load(f)
    best = None
    for _ in range(repeats):
        index = gaoya.minhash.MinHashStringIndex(
            hash_size=32,
            jaccard_threshold=0.5,
            num_bands=bands,
            band_size=rows,
            analyzer="char",
            lowercase=False,
            ngram_range=(k, k),
            id_container="vec",
        )
        start = time.perf_counter()
        for i, text in enumerate(texts):
            index.insert_document(i, text)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    print(json.dumps({
        "texts": len(texts),
        "bytes": sum(len(t.encode("utf-8")) for t in texts),
        "seconds": best,
        "gaoya": getattr(gaoya, "__version__", "unknown"),
    }))


if __name__ == "__main__":
    main()
