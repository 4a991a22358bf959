"""Random kernels traced, against an interpreter of their templates.

Each seed draws a template's constants and a launch. Even seeds: a 1-D kernel with loop bounds
that depend on the work-item, a break taken by odd work-items, a branch, a nested loop whose
inner bound is the local id's, a vload4, a byte load and a store. Odd seeds: a 2-D kernel whose
loop bound and branch depend on the local ids of both dimensions. The interpreter below runs the
template's source semantics for every work-item; the trace's records of each work-item
(`cltrace dump`, which names each record's group and local ids) must be those accesses, in
program order, with their addresses and sizes. vload4 from an int pointer is four 4-byte loads
(README, Tracing). The arithmetic is masked into the buffers, so no access leaves them.

Each seed also draws kernels of three more templates, each traced and simulated (timing off
unless said): control flow every lane shares in up to three workgroups, whose figures (requests before
and after coalescing, reads, writes, cold misses, every SM summed) must be those the coalescing
rules give by counting distinct lines (`coalesced`); one warp reading strided lines twice, whose
hits and miss types must be those of an LRU model of the L1 written here from the documented
rules (`CacheModel`), under the Fermi hash and the linear index, and with timing on and a fixed
latency its MSHR stalls (6 misses in flight a warp, a set's ways); and one warp reading single
lines that share a set under the hash (32 or 64 sets: gtx480-16k or gtx480-48k), or one line
read again after about as many others as the cache holds (capacity or conflict), whose every
read's outcome must be the model's.

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
OUT_BASE = 4 * IN_WORDS  # `out`'s address: it follows `in` (the alignment, 256, divides 16 KiB)


def trace(cltrace, work, name, text, global_size, local_size, in_words, out_words):
    """Writes kernel `text` to WORK/NAME.cl and traces it with buffers of `in_words` and
    `out_words` ints; returns the trace's path, or None and prints why the run failed."""
    with open(f'{work}/{name}.cl', 'w') as f:
        f.write(text)
    run = subprocess.run([cltrace, 'run', f'{work}/{name}.cl', '--global', str(global_size), '--local',
                          str(local_size), '--arg', f'buffer:int:{in_words}', '--arg', f'buffer:int:{out_words}',
                          '-o', f'{work}/{name}.cltrace'], capture_output=True, text=True)
    if run.returncode != 0:
        print(f'{name}: cltrace run failed: {run.stderr}')
        return None
    return f'{work}/{name}.cltrace'


def simulate(cltrace, trace_path, *options):
    """`cltrace simulate --json` of the trace with `options`, as a dict."""
    sim = subprocess.run([cltrace, 'simulate', trace_path, *options, '--json'], capture_output=True, text=True,
                         check=True)
    return json.loads(sim.stdout)


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
    acc.append(('store', OUT_BASE + 4 * ((p['A4'] * g + p['D4']) & (OUT_WORDS - 1)), 4))
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
    acc.append(('store', OUT_BASE + 4 * ((y * p['W'] + x) & (OUT_WORDS - 1)), 4))
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
            writes += len({(OUT_BASE + 4 * ((p['A4'] * g + p['D4']) & (OUT_WORDS - 1))) >> 7 for g in lanes})
        cold += len(read_lines)
    work_items = 32 * p['WARPS'] * p['GROUPS']
    loads = p['N'] + (p['N'] if p['B'] != 0 else 1)
    return dict(requests_before_coalescing=work_items * (loads + 1), reads=reads, writes=writes,
                requests=reads + writes, cold=cold)


def check_coalescing(cltrace, work, seed):
    p = draw3(random.Random(seed))
    local = 32 * p['WARPS']
    path = trace(cltrace, work, 'c', source3(p), local * p['GROUPS'], local, IN_WORDS, OUT_WORDS)
    if path is None:
        return f'coalescing seed {seed}: not traced'
    report = simulate(cltrace, path, '--set', 'timing=off', '--sm', 'all')
    got = {k: report[k] for k in ('requests_before_coalescing', 'reads', 'writes', 'requests')}
    got['cold'] = report['misses']['cold']
    want = coalesced(p)
    return None if got == want else f'coalescing seed {seed} {p}: want {want}, got {got}'


# The cache template: one warp, control flow every lane shares, a loop over strided lines and a
# second loop over the first ones again, in a 1 MiB buffer, so that sets fill and lines are
# evicted and read again. Its hits and miss types are those of an LRU model of the L1 written
# from the documented rules (`CacheModel`), under the Fermi hash and the linear index.
BIG_WORDS = 1 << 18


def draw4(rng):
    # Strides of 4 KiB to 512 KiB step through the address bits the Fermi hash pairs (13-19).
    n = rng.randint(2, 24)
    strides = [32, 33, 1024, 2048, 3072, 4096, 8192, 12288, 16384, 32768, 40960, 65536, 131072]
    return dict(A=rng.choice([0, 0, 1, 2, 32, 1024, 8192]), S=rng.choice(strides),
                D=rng.randint(0, 64), N=n, N2=rng.randint(1, n))


def source4(p):
    m = BIG_WORDS - 1
    return f"""__kernel void k(__global const int* in, __global int* out) {{
  int l = get_local_id(0);
  int s = 0;
  for (int i = 0; i < {p['N']}; i++) s += in[({p['A']} * l + {p['S']} * i + {p['D']}) & {m}];
  for (int i = 0; i < {p['N2']}; i++) s += in[({p['A']} * l + {p['S']} * i + {p['D']}) & {m}];
  out[l] = s;
}}
"""


class CacheModel:
    """An L1 of the presets with timing off: 128-byte lines, 16 KiB in 32 sets of 4 ways
    (gtx480-16k) or 48 KiB in 64 sets of 6 (gtx480-48k); LRU, reads allocate, stores write
    through without allocating or counting as a use; a read miss is cold at the line's first
    read, capacity when the lines read since its last read are as many as the cache holds or more
    (a fully associative LRU cache of that size would miss), else conflict."""

    def __init__(self, set_index, sets=32):
        self.set_index = set_index
        self.ways = 4 if sets == 32 else 6
        self.lines = sets * self.ways
        self.sets = [[] for _ in range(sets)]  # per set: lines, least recently used first
        self.history = []  # lines read, in order
        self.counts = collections.Counter()

    def set_of(self, line):
        if self.set_index == 'linear':
            return line % len(self.sets)
        address = line << 7
        bit = lambda k: (address >> k) & 1  # noqa: E731
        pairs = [(7, 13), (8, 14), (9, 15), (10, 17), (11, 19)]  # Fermi hash, DESIGN.md
        s = sum((bit(a) ^ bit(b)) << i for i, (a, b) in enumerate(pairs))
        return s | bit(12) << 5 if len(self.sets) == 64 else s  # 64 sets: bit 12 is set bit 5

    def holds(self, line):
        return line in self.sets[self.set_of(line)]

    def read(self, line):
        """Reads `line`; returns its outcome: hits, cold, capacity or conflict."""
        ways = self.sets[self.set_of(line)]
        if line in ways:
            ways.remove(line)
            outcome = 'hits'
        else:
            if line not in self.history:
                outcome = 'cold'
            else:
                last = len(self.history) - 1 - self.history[::-1].index(line)
                between = len(set(self.history[last + 1:]))
                outcome = 'capacity' if between >= self.lines else 'conflict'
            if len(ways) == self.ways:
                ways.pop(0)
        ways.append(line)
        self.history.append(line)
        self.counts[outcome] += 1
        return outcome

    def write(self, line):
        self.counts['write_hits' if self.holds(line) else 'write_misses'] += 1


def cached(p, set_index):
    """Hits and miss types; and the MSHR stalls with timing on and a fixed latency: the warp has
    at most 6 misses in flight and a set at most as many as its ways, its misses all fill at once
    (they were sent at one cycle), it retries a stalled read then, and it waits for a step's data
    before its next step. So one warp hits and misses as with timing off."""
    model = CacheModel(set_index)
    m = BIG_WORDS - 1
    stalls = 0
    for n in (p['N'], p['N2']):
        for i in range(n):
            lines = []  # in the order the lanes first touch them
            for lane in range(32):
                line = 4 * ((p['A'] * lane + p['S'] * i + p['D']) & m) >> 7
                if line not in lines:
                    lines.append(line)
            in_flight = []
            for line in lines:
                missing = not model.holds(line)
                same_set = sum(model.set_of(f) == model.set_of(line) for f in in_flight)
                if missing and (len(in_flight) == 6 or same_set == model.ways):
                    stalls += 1
                    in_flight = []  # the retry comes when they fill
                if missing:
                    in_flight.append(line)
                model.read(line)
    model.write((4 * BIG_WORDS) >> 7)  # out[0..31]: one line
    c = model.counts
    return dict(hits=c['hits'], cold=c['cold'], capacity=c['capacity'], conflict=c['conflict'],
                write_hits=c['write_hits'], write_misses=c['write_misses'], mshr=stalls)


def check_cache(cltrace, work, seed):
    p = draw4(random.Random(seed))
    path = trace(cltrace, work, 'l1', source4(p), 32, 32, BIG_WORDS, 32)
    if path is None:
        return f'cache seed {seed}: not traced'
    for set_index in ('fermi-xor', 'linear'):
        want = cached(p, set_index)
        for timing in ('timing=off', 'latency_sigma=0'):
            report = simulate(cltrace, path, '--set', timing, '--set', f'set_index={set_index}')
            got = dict(hits=report['read_hits'], write_hits=report['write_hits'], write_misses=report['write_misses'])
            got.update({k: report['misses'][k] for k in ('cold', 'capacity', 'conflict', 'mshr')})
            expected = want if timing != 'timing=off' else dict(want, mshr=0)  # nothing stalls without timing
            if got != expected:
                return f'cache seed {seed} {p} {set_index} {timing}: want {expected}, got {got}'
    return None


# The hash template: one warp whose lanes all read one word per statement, so each statement is
# one request, and its outcome is its instruction's row of the report. Round 1 reads distinct
# lines that share address bits 7-11 (the linear index puts them all in one set) and differ in
# bits 12-19 (which the Fermi hash folds into the set, draw5); after a store (which may alias
# them, so nothing is reused from registers) round 2 reads them again in another order. Which of
# them hit tells how the hash spread them.
HASH_WORDS = 1 << 21  # 8 MiB: addresses up to bit 22


def draw5(rng):
    sets = rng.choice([32, 64])
    low = rng.randint(0, 31) << 7  # bits 7-11, shared
    # More lines than a set has ways that differ only in bits the hash leaves out (12 with 32 sets,
    # 16, 18 and 20-22): one set holds them all, so round 2 finds some evicted (a hash that paired
    # other bits would split them); then up to six lines of any high bits.
    paired = sum(rng.randint(0, 1) << b for b in (13, 14, 15, 17, 19))
    free_bits = (12, 16, 18, 20, 21) if sets == 32 else (16, 18, 20, 21, 22)
    free = [sum(((k >> i) & 1) << b for i, b in enumerate(free_bits)) for k in range(32)]
    ways = 4 if sets == 32 else 6
    first = [low | paired | f for f in rng.sample(free, rng.randint(ways + 1, ways + 4))]
    while len(first) < 16 and rng.random() < 0.7:
        address = low | (rng.randint(0, 2047) << 12)
        if address not in first:
            first.append(address)
    rng.shuffle(first)
    second = first[:]
    rng.shuffle(second)
    return dict(sets=sets, first=first, second=second)


def draw6(rng):
    """Round 1 reads line X and then about as many other lines as the cache holds (one or two
    fewer, as many, or one more), round 2 reads X again: the lines read in between decide
    whether a miss of X is capacity (as many as the cache holds or more) or conflict."""
    sets = rng.choice([32, 64])
    lines = 128 if sets == 32 else 384
    picked = rng.sample(range(HASH_WORDS * 4 >> 7), lines + 1 + rng.randint(-2, 1))
    first = [line << 7 for line in picked]
    return dict(sets=sets, first=first, second=[first[0]] + rng.sample(first[1:], 2))


def source5(p):
    reads1 = ''.join(f'  s += in[{a // 4} + l * 0];\n' for a in p['first'])
    reads2 = ''.join(f'  s += in[{a // 4} + l * 0];\n' for a in p['second'])
    return ('__kernel void k(__global const int* in, __global int* out) {\n  int l = get_local_id(0);\n'
            f'  int s = 0;\n{reads1}  out[l] = s;\n{reads2}  out[l + 32] = s;\n}}\n')


def hashed(p, set_index):
    """Outcome of each read statement by source line (its first is line 4)."""
    model = CacheModel(set_index, p['sets'])
    outcomes = {}
    for line_no, address in enumerate(p['first'] + [None] + p['second'], start=4):
        if address is None:
            continue  # the store between the rounds: out's line, never read
        outcomes[line_no] = model.read(address >> 7)
    return outcomes


def check_hash(cltrace, work, seed):
    p = (draw6 if seed % 4 == 3 else draw5)(random.Random(seed))
    path = trace(cltrace, work, 'h', source5(p), 32, 32, HASH_WORDS, 64)
    if path is None:
        return f'hash seed {seed}: not traced'
    for set_index in ('fermi-xor', 'linear'):
        config = 'gtx480-16k' if p['sets'] == 32 else 'gtx480-48k'
        report = simulate(cltrace, path, '--config', config, '--set', 'timing=off', '--set', f'set_index={set_index}')
        got = {}  # source line: the outcome of its one read, or the whole row when it is not one read
        for row in report['per_instruction']:
            if row['reads'] == 0:
                continue  # the stores
            counts = dict(row['misses'], hits=row['read_hits'])
            outcomes = [k for k in ('hits', 'cold', 'capacity', 'conflict') if counts[k] == 1]
            line_no = int(row['source'].split()[1].split(':')[0])  # "line 12:8"
            got[line_no] = outcomes[0] if row['reads'] == 1 and len(outcomes) == 1 else row
        want = hashed(p, set_index)
        if got != want:
            return f'hash seed {seed} {p} {set_index}: want {want}, got {got}'
    return None


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
    path = trace(cltrace, work, 'k', text, glob, loc, IN_WORDS, OUT_WORDS)
    if path is None:
        return f'seed {seed}: not traced'
    dump = subprocess.run([cltrace, 'dump', path], capture_output=True, text=True, check=True).stdout
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
    problems = []
    for check_one, done in ((check, 'traced as interpreted'), (check_coalescing, 'coalesced as counted'),
                            (check_cache, 'cached as modelled'), (check_hash, 'hashed as modelled')):
        found = [m for m in (check_one(cltrace, work, s) for s in seeds) if m]
        print(f'random kernels: {len(seeds) - len(found)} of {len(seeds)} {done}')
        problems += found
    for m in problems:
        print(m)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
