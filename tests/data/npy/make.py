"""make.py OUTDIR - write packed-sequence .npy files the way NeMo does, with real NumPy,
for tests/check_npy.c, plus expected.tsv with the statistics computed here in Python.

NeMo 2.x: np.save(path, output_data), output_data a list of dicts
{'input_ids': [...], 'loss_mask': [...], 'seq_start_id': [...]}
(nemo/collections/llm/gpt/data/packed_sequence.py v2.3.0 l.83-86,
nemo/utils/sequence_packing_utils.py v2.3.0 l.187-260).
Besides np.save (pickle protocol 3 in NumPy 1.24), the same array is written with
pickle protocols 2, 4 and 5 under a hand-made .npy header, as other NumPy versions could.
"""
import io
import pickle
import random
import sys

import numpy as np
from numpy.lib import format as npf

out = sys.argv[1]
rng = random.Random(7)


def packs(n, pack_len, vocab):
    data = []
    for _ in range(n):
        ids, starts = [], []
        while True:
            s = rng.randint(3, max(4, pack_len // 5))
            if len(ids) + s > pack_len:
                break
            starts.append(len(ids))
            ids.extend(rng.randrange(vocab) for _ in range(s))
        data.append({'input_ids': ids, 'loss_mask': [i % 3 != 0 for i in range(len(ids))], 'seq_start_id': starts})
    return data


def expected(data, gbs):
    use = len(data) // gbs * gbs if gbs > 0 else len(data)
    tokens = sq = seqs = 0
    for d in data[:use]:
        b = d['seq_start_id'] + [len(d['input_ids'])]
        tokens += len(d['input_ids'])
        seqs += len(d['seq_start_id'])
        sq += sum((b[i + 1] - b[i]) ** 2 for i in range(len(b) - 1))
    return use, seqs, tokens, sq


def write_proto(path, data, proto):
    arr = np.empty(len(data), dtype=object)
    arr[:] = data
    buf = io.BytesIO()
    npf.write_array_header_1_0(buf, npf.header_data_from_array_1_0(arr))
    pickle.dump(arr, buf, protocol=proto)
    open(path, 'wb').write(buf.getvalue())


rows = []
big = packs(37, 16384, 128256)  # long input_ids lists: more than one APPENDS batch each
np.save(f'{out}/big.npy', big)
for gbs in (0, 8):
    rows.append(('big.npy', gbs) + expected(big, gbs))
small = packs(5, 64, 300)
np.save(f'{out}/small.npy', small)
rows.append(('small.npy', 0) + expected(small, 0))
for proto in (2, 4, 5):
    write_proto(f'{out}/proto{proto}.npy', small, proto)
    rows.append((f'proto{proto}.npy', 0) + expected(small, 0))
np.save(f'{out}/numeric.npy', np.arange(10, dtype='<i8'))
with open(f'{out}/expected.tsv', 'w') as f:
    for r in rows:
        f.write('\t'.join(str(x) for x in r) + '\n')
