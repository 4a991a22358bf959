"""Random kernels traced, against an interpreter of their templates.

Each seed draws a template's constants and a launch. Even seeds: a 1-D kernel with loop bounds
that depend on the work-item, a break taken by odd work-items, a branch, a nested loop whose
inner bound is the local id's, a vload4, a byte load and a store. Odd seeds: a 2-D kernel whose
loop bound and branch depend on the local ids of both dimensions. The interpreter below runs the
template's source semantics for every work-item; the trace's records of each work-item
(`cltrace dump`, which names each record's group and local ids) must be those accesses, in
program order, with their addresses and sizes. vload4 from an int pointer is four 4-byte loads
(README, Tracing). The arithmetic is masked into the buffers, so no access leaves them.

Each seed also draws a kernel of a third template, with control flow every lane shares, in up
to three workgroups: its L1 figures from `cltrace simulate --set timing=off --sm all` (requests
before and after coalescing, reads, writes, cold misses) must be those the coalescing rules give
by counting distinct lines (`coalesced`).

  python3 random_kernels.py CLTRACE WORKDIR FIRST_SEED LAST_SEED
"""
import collections
import json
import random
import re
import subprocess
import sys

IN_WORDS = 1 << 12
OUT_WORDS = 1 << 10


def draw(rng):
    return dict(
        M1=rng.randint(1, 5), C1=rng.randint(0, 2), A1=rng.choice([1, 2, 3, 32, 33]),
        B1=rng.choice([1, 7, 32, 64]), D1=rng.randint(0, 64), BRK=rng.randint(0, 3),
        K=rng.randint(2, 4), R=rng.randint(0, 1), A2=rng.choice([1, 4, 31]), D2=rng.randint(0, 100),
        M2=rng.randint(1, 3), M3=rng.randint(1, 4), A3=rng.choice([5, 64, 128]), B3=rng.choice([1, 3, 40]),
        V=rng.choice([1, 2, 8]), A4=rng.choice([1, 2, 5]), D4=rng.randint(0, 10))


def source(p):
    m, m4, mb, mo = IN_WORDS - 1, IN_WORDS // 4 - 1, 4 * IN_WORDS - 1, OUT_WORDS - 1
    return f"""__kernel void k(__global const int* in, __global int* out) {{
  int g = get_global_id(0);
  int l = get_local_id(0);
  int s = 0;
  for (int i = 0; i < (g % {p['M1']}) + {p['C1']}; i++) {{
    s += in[({p['A1']} * g + {p['B1']} * i + {p['D1']}) & {m}];
    if (i == {p['BRK']} && (g & 1)) break;
  }}
  if (g % {p['K']} == {p['R']}) s += in[({p['A2']} * g + {p['D2']}) & {m}];
  for (int i = 0; i < {p['M2']}; i++)
    for (int j = 0; j < (l % {p['M3']}); j++) s += in[(i * {p['A3']} + j * {p['B3']} + g) & {m}];
  int4 v = vload4(({p['V']} * g + {p['D2']}) & {m4}, in);
  s += v.x + v.y + v.z + v.w;
  if (l % 3 == {p['R']}) s += ((__global const uchar*)in)[({p['A2']} * g + {p['D1']}) & {mb}];
  out[({p['A4']} * g + {p['D4']}) & {mo}] = s;
}}
"""


def accesses(p, g, l):
    """(kind, byte address, size) of work-item g (local id l), in program order."""
    m = IN_WORDS - 1
    out_base = 4 * IN_WORDS  # `out` follows `in` (alignment 256 divides 16 KiB)
    acc = []
    for i in range(g % p['M1'] + p['C1']):
        acc.append(('load', 4 * ((p['A1'] * g + p['B1'] * i + p['D1']) & m), 4))
        if i == p['BRK'] and g & 1:
            break
    if g % p['K'] == p['R']:
        acc.append(('load', 4 * ((p['A2'] * g + p['D2']) & m), 4))
    for i in range(p['M2']):
        for j in range(l % p['M3']):
            acc.append(('load', 4 * ((i * p['A3'] + j * p['B3'] + g) & m), 4))
    base = 16 * ((p['V'] * g + p['D2']) & (IN_WORDS // 4 - 1))
    acc += [('load', base + 4 * e, 4) for e in range(4)]
    if l % 3 == p['R']:
        acc.append(('load', (p['A2'] * g + p['D1']) & (4 * IN_WORDS - 1), 1))
    acc.append(('store', out_base + 4 * ((p['A4'] * g + p['D4']) & (OUT_WORDS - 1)), 4))
    return acc


# The 2-D template.
def draw2(rng):
    return dict(W=rng.choice([16, 64, 100]), A=rng.choice([1, 2, 33]), B=rng.choice([1, 32, 128]),
                M=rng.randint(1, 4), C=rng.randint(0, 1), K=rng.randint(2, 3), D=rng.randint(0, 50))


def source2(p):
    m, mo = IN_WORDS - 1, OUT_WORDS - 1
    return f"""__kernel void k(__global const int* in, __global int* out) {{
  int x = get_global_id(0), y = get_global_id(1);
  int lx = get_local_id(0), ly = get_local_id(1);
  int s = 0;
  for (int i = 0; i < (ly % {p['M']}) + {p['C']}; i++) s += in[(y * {p['W']} + x * {p['A']} + i * {p['B']}) & {m}];
  if ((lx + ly) % {p['K']} == 0) s += in[(x * {p['W']} + y + {p['D']}) & {m}];
  out[(y * {p['W']} + x) & {mo}] = s;
}}
"""


def accesses2(p, x, y, lx, ly):
    """(kind, byte address, size) of work-item (x, y), local ids (lx, ly), in program order."""
    m = IN_WORDS - 1
    acc = [('load', 4 * ((y * p['W'] + x * p['A'] + i * p['B']) & m), 4) for i in range(ly % p['M'] + p['C'])]
    if (lx + ly) % p['K'] == 0:
        acc.append(('load', 4 * ((x * p['W'] + y + p['D']) & m), 4))
    acc.append(('store', 4 * IN_WORDS + 4 * ((y * p['W'] + x) & (OUT_WORDS - 1)), 4))
    return acc


# The coalescing template: uniform control flow (every lane runs every iteration), so each warp
# step is one instruction instance for the whole warp; up to 3 workgroups. A 4-byte load
# and a 16-byte int4 load per iteration, a 4-byte store after the loop.
def draw3(rng):
    return dict(A=rng.choice([0, 1, 2, 3, 8, 32, 33]), B=rng.choice([0, 1, 32, 100]), D=rng.randint(0, 40),
                A2=rng.choice([0, 1, 2, 8, 9]), A4=rng.choice([1, 2, 32]), D4=rng.randint(0, 40),
                N=rng.randint(1, 4), WARPS=rng.randint(1, 4), GROUPS=rng.randint(1, 3))


def source3(p):
    m, m4, mo = IN_WORDS - 1, IN_WORDS // 4 - 1, OUT_WORDS - 1
    return f"""__kernel void k(__global const int* in, __global int* out) {{
  int l = get_global_id(0);
  int s = 0;
  for (int i = 0; i < {p['N']}; i++) {{
    s += in[({p['A']} * l + {p['B']} * i + {p['D']}) & {m}];
    int4 v = ((__global const int4*)in)[({p['A2']} * l + i) & {m4}];
    s += v.x + v.y + v.z + v.w;
  }}
  out[({p['A4']} * l + {p['D4']}) & {mo}] = s;
}}
"""


def coalesced(p):
    """L1 figures of every SM summed under timing=off, by the coalescing rules (docs/cachesim.md):
    one request per distinct 128-byte line a warp step touches; 16-byte lanes per quarter-warp.
    At most 3 workgroups, dealt one to an SM: each one's first read of a line is a cold miss."""
    m, m4 = IN_WORDS - 1, IN_WORDS // 4 - 1
    out_base = 4 * IN_WORDS
    reads = writes = cold = 0
    for group in range(p['GROUPS']):
        read_lines = set()  # of this workgroup's SM
        for w in range(p['WARPS'] * group, p['WARPS'] * (group + 1)):
            lanes = range(32 * w, 32 * w + 32)  # global ids
            for i in range(p['N']):
                # With B = 0 the 4-byte load does not change in the loop (which runs at least
                # once): the compiler loads it once, before the loop, as a GPU compiler does.
                if p['B'] != 0 or i == 0:
                    lines = {4 * ((p['A'] * g + p['B'] * i + p['D']) & m) >> 7 for g in lanes}
                    reads += len(lines)
                    read_lines |= lines
                for q in range(4):  # quarter-warps
                    part = {16 * ((p['A2'] * g + i) & m4) >> 7 for g in lanes[8 * q:8 * q + 8]}
                    reads += len(part)
                    read_lines |= part
            writes += len({(out_base + 4 * ((p['A4'] * g + p['D4']) & (OUT_WORDS - 1))) >> 7 for g in lanes})
        cold += len(read_lines)
    work_items = 32 * p['WARPS'] * p['GROUPS']
    loads = p['N'] + (p['N'] if p['B'] != 0 else 1)
    return dict(requests_before_coalescing=work_items * (loads + 1), reads=reads, writes=writes,
                requests=reads + writes, cold=cold)


def check_coalescing(cltrace, work, seed):
    p = draw3(random.Random(seed))
    with open(f'{work}/c.cl', 'w') as f:
        f.write(source3(p))
    local = 32 * p['WARPS']
    run = subprocess.run([cltrace, 'run', f'{work}/c.cl', '--global', str(local * p['GROUPS']), '--local', str(local),
                          '--arg', f'buffer:int:{IN_WORDS}', '--arg', f'buffer:int:{OUT_WORDS}',
                          '-o', f'{work}/c.cltrace'], capture_output=True, text=True)
    if run.returncode != 0:
        return f'coalescing seed {seed}: run failed: {run.stderr}'
    sim = subprocess.run([cltrace, 'simulate', f'{work}/c.cltrace', '--set', 'timing=off', '--sm', 'all', '--json'],
                         capture_output=True, text=True, check=True)
    report = json.loads(sim.stdout)
    got = {k: report[k] for k in ('requests_before_coalescing', 'reads', 'writes', 'requests')}
    got['cold'] = report['misses']['cold']
    want = coalesced(p)
    return None if got == want else f'coalescing seed {seed} {p}: want {want}, got {got}'


# `dump` lists work-items workgroup by workgroup; each record names its group and local ids.
RECORD = re.compile(r'^wi \d+ group \(([^)]*)\) local \(([^)]*)\) (\w+) instr \d+ addr (0x[0-9a-f]+) size (\d+)')


def check(cltrace, work, seed):
    rng = random.Random(seed)
    two = seed % 2 == 1  # odd seeds: the 2-D template
    if two:
        p = draw2(rng)
        lx, ly = rng.choice([(8, 4), (16, 2), (4, 8)])
        gx, gy = lx * rng.randint(1, 3), ly * rng.randint(1, 3)
        text, glob, loc = source2(p), f'{gx},{gy}', f'{lx},{ly}'
        global_size = gx * gy
    else:
        p = draw(rng)
        local = rng.choice([16, 32])
        global_size = local * rng.randint(1, 4)
        text, glob, loc = source(p), str(global_size), str(local)
    with open(f'{work}/k.cl', 'w') as f:
        f.write(text)
    run = subprocess.run([cltrace, 'run', f'{work}/k.cl', '--global', glob, '--local', loc,
                          '--arg', f'buffer:int:{IN_WORDS}', '--arg', f'buffer:int:{OUT_WORDS}',
                          '-o', f'{work}/k.cltrace'], capture_output=True, text=True)
    if run.returncode != 0:
        return f'seed {seed}: run failed: {run.stderr}'
    dump = subprocess.run([cltrace, 'dump', f'{work}/k.cltrace'], capture_output=True, text=True, check=True).stdout
    got = collections.defaultdict(list)  # by global id (x, y)
    for line in dump.splitlines():
        if m := RECORD.match(line):
            group = [int(v) for v in m[1].split(',')]
            lid = [int(v) for v in m[2].split(',')]
            sizes = (lx, ly) if two else (local,)
            gid = tuple(g * n + l for g, n, l in zip(group, sizes, lid))
            got[gid].append((m[3], int(m[4], 16), int(m[5])))
    ids = [(x, y) for y in range(gy) for x in range(gx)] if two else [(g,) for g in range(global_size)]
    for gid in ids:
        want = accesses2(p, gid[0], gid[1], gid[0] % lx, gid[1] % ly) if two else accesses(p, gid[0], gid[0] % local)
        if got[gid] != want:
            return f'seed {seed} {p} global {glob} local {loc}: work-item {gid}: want {want}, got {got[gid]}'
    return None


def main():
    cltrace, work, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    seeds = range(first, last + 1)
    problems = [m for m in (check(cltrace, work, s) for s in seeds) if m]
    print(f'random kernels: {len(seeds) - len(problems)} of {len(seeds)} traced as interpreted')
    coalescing = [m for m in (check_coalescing(cltrace, work, s) for s in seeds) if m]
    print(f'random kernels: {len(seeds) - len(coalescing)} of {len(seeds)} coalesced as counted')
    problems += coalescing
    for m in problems:
        print(m)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
