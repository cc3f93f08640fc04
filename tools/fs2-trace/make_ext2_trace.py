#!/usr/bin/env python3
"""Make a real file-system trace for FS2 (paper 003): a real program's file accesses over an
aged ext2 image, as the block reads a disk would see.

Steps (each a real tool; nothing is mounted, so no root is needed):

1. `mke2fs -t ext2 -b 4096` on a sparse image as large as the drive (the wd800: 74.5 GiB).
2. Age it with `debugfs`: fill it with files allocated (`fallocate`, no data written) in creation
   order, so their inodes and blocks march across the block groups, then delete a random share of
   them, leaving holes all over the disk.
3. Copy a real source tree in with `debugfs` (`mkdir`, `write`): new inodes take the freed slots,
   so the tree's files land in holes far apart, as on a file system that has been in use.
4. Record the order in which a real program opens the tree's files and directories:
   `strace -f -e trace=openat` of `grep -r` (a search of every file) on the host copy of the tree.
5. Map each file and directory to its blocks (`debugfs blocks`) and its inode to its inode-table
   block (`debugfs imap`), and write the block reads in that order: the inode block (unless it was
   the last one read), then the data blocks in runs of at most `--max-request-blocks`.
6. Repeat the program's run `--passes` times (paper 003 measured the 7th run), in DiskSim's
   `validate` format (`R Miss LBN sectors 0 delay_us`): a closed loop, the next read issued a
   think time after the last completes (uniform over `--think-us` ± 50%, seeded).

    python3 tools/fs2-trace/make_ext2_trace.py --source /usr/lib/python3.11 --out data/traces/ext2-grep.trace
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BLOCK = 4096
SECTORS_PER_BLOCK = BLOCK // 512


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def debugfs(image: Path, commands: list[str], write: bool = False) -> str:
    """Runs debugfs commands from a file (fast for many); returns its output."""
    with tempfile.NamedTemporaryFile("w", suffix=".cmds", delete=False) as f:
        f.write("\n".join(commands) + "\n")
        name = f.name
    try:
        args = ["debugfs"] + (["-w"] if write else []) + ["-f", name, str(image)]
        return run(args).stdout
    finally:
        os.unlink(name)


def outputs_by_command(text: str) -> list[tuple[str, str]]:
    """Splits debugfs -f output into (command, its output) pairs."""
    parts = re.split(r"^debugfs: (.*)$", text, flags=re.M)
    return [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def age(image: Path, rng: random.Random, fill: float, keep: float, blocks: int) -> None:
    """Fills `fill` of the disk with files in creation order, then deletes all but `keep` of them."""
    target = int(blocks * fill)
    commands, made, used, n = [], [], 0, 0
    commands.append("mkdir /aged")
    while used < target:
        d = f"/aged/d{n // 100}"
        if n % 100 == 0:
            commands.append(f"mkdir {d}")
        size = max(1, int(rng.lognormvariate(5.0, 1.5)))  # blocks: median 148 (0.6 MB), long tail
        size = min(size, 65536)
        path = f"{d}/f{n}"
        commands += [f"write /dev/null {path}", f"fallocate {path} 0 {size - 1}"]
        made.append(path)
        used += size
        n += 1
    debugfs(image, commands, write=True)
    doomed = [p for p in made if rng.random() > keep]
    debugfs(image, [f"rm {p}" for p in doomed], write=True)
    print(f"aged: {n} files over {fill:.0%} of the disk, {len(doomed)} deleted", file=sys.stderr)


def copy_tree(image: Path, source: Path) -> dict[str, str]:
    """Copies `source` into the image under /src; returns host path -> image path."""
    commands, mapping = ["mkdir /src"], {}
    for root, dirs, files in os.walk(source):
        dirs.sort()
        rel = Path(root).relative_to(source)
        into = "/src" if str(rel) == "." else f"/src/{rel}"
        mapping[str(Path(root).resolve())] = into
        for d in dirs:
            if not (Path(root) / d).is_symlink():
                commands.append(f'mkdir "{into}/{d}"')
        for f in sorted(files):
            p = Path(root) / f
            if p.is_file() and not p.is_symlink():
                commands.append(f'write "{p}" "{into}/{f}"')
                mapping[str(p.resolve())] = f"{into}/{f}"
    debugfs(image, commands, write=True)
    return mapping


def access_order(source: Path, program: list[str]) -> list[str]:
    """Host paths under `source` in the order `program` first opened them (strace)."""
    with tempfile.NamedTemporaryFile(suffix=".strace", delete=False) as f:
        log = f.name
    try:
        # -y names each descriptor's path: grep -r opens names relative to directory descriptors.
        subprocess.run(["strace", "-f", "-qq", "-y", "-e", "trace=openat", "-o", log] + program, cwd=source, capture_output=True, check=False)
        seen, order = set(), []
        for line in open(log, encoding="utf-8", errors="replace"):
            # A successful open ends "= FD</absolute/path>".
            m = re.search(r"=\s*\d+<([^>]*)>\s*$", line)
            if not m:
                continue
            path = os.path.realpath(m.group(1))
            if path.startswith(str(source.resolve())) and path not in seen:
                seen.add(path)
                order.append(path)
        return order
    finally:
        os.unlink(log)


def block_runs(blocks: list[int], most: int) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for b in blocks:
        if runs and runs[-1][0] + runs[-1][1] == b and runs[-1][1] < most:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((b, 1))
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=Path("/usr/lib/python3.11"), help="a real source tree")
    ap.add_argument("--program", default="grep -r -l freeblock-never-matches .", help="the program whose accesses are recorded (run in the tree)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sectors", type=int, default=156_301_488, help="the drive's capacity (default: wd800)")
    ap.add_argument("--fill", type=float, default=0.85, help="share of the disk filled while ageing")
    ap.add_argument("--keep", type=float, default=0.8, help="share of the ageing files kept (the rest become holes)")
    ap.add_argument("--passes", type=int, default=7)
    ap.add_argument("--think-us", type=float, default=1000.0)
    ap.add_argument("--max-request-blocks", type=int, default=32, help="largest read (Linux's 128 KB read-ahead)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    for tool in ("mke2fs", "debugfs", "strace"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found (Debian: apt-get install e2fsprogs strace)")
    rng = random.Random(a.seed)
    blocks = a.sectors // SECTORS_PER_BLOCK
    with tempfile.TemporaryDirectory() as tmp:
        image = Path(tmp) / "disk.img"
        with open(image, "wb") as f:
            f.truncate(blocks * BLOCK)
        run(["mke2fs", "-q", "-F", "-t", "ext2", "-b", str(BLOCK), "-N", "400000", "-I", "128", str(image), str(blocks)])
        age(image, rng, a.fill, a.keep, blocks)
        mapping = copy_tree(image, a.source.resolve())
        order = [p for p in access_order(a.source.resolve(), a.program.split()) if p in mapping]
        listing = debugfs(image, [c for p in order for c in (f'blocks "{mapping[p]}"', f'stat "{mapping[p]}"')])
        per_path = outputs_by_command(listing)
        inode_of: dict[str, int] = {}
        blocks_of: dict[str, list[int]] = {}
        for cmd, out in per_path:
            path = cmd.split(" ", 1)[1].strip('"')
            if cmd.startswith("blocks"):
                blocks_of[path] = [int(x) for x in out.split()]
            else:
                m = re.search(r"Inode: (\d+)", out)
                if m:
                    inode_of[path] = int(m.group(1))
        imaps = outputs_by_command(debugfs(image, [f"imap <{inode_of[mapping[p]]}>" for p in order if mapping[p] in inode_of]))
        inode_block = {}
        for cmd, out in imaps:
            m = re.search(r"located at block (\d+)", out)
            if m:
                inode_block[int(cmd.split("<")[1].rstrip(">"))] = int(m.group(1))
    one_pass: list[tuple[int, int]] = []
    last_inode = None
    for p in order:
        image_path = mapping[p]
        ino = inode_of.get(image_path)
        if ino is not None and inode_block.get(ino) is not None and inode_block[ino] != last_inode:
            last_inode = inode_block[ino]
            one_pass.append((last_inode, 1))
        one_pass += block_runs(blocks_of.get(image_path, []), a.max_request_blocks)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w") as f:
        f.write(f"# FS2 real file-system trace: `{a.program}` over {a.source} copied into an aged ext2 image\n")
        f.write(f"# (tools/fs2-trace/make_ext2_trace.py --fill {a.fill} --keep {a.keep} --passes {a.passes} --think-us {a.think_us} --seed {a.seed});\n")
        f.write(f"# {len(order)} files and directories, {len(one_pass)} reads a pass; DiskSim validate format: R Miss LBN sectors service_us delay_us\n")
        for _ in range(a.passes):
            for block, count in one_pass:
                delay = a.think_us * rng.uniform(0.5, 1.5)
                f.write(f"R Miss {block * SECTORS_PER_BLOCK} {count * SECTORS_PER_BLOCK} 0 {delay:.1f}\n")
    print(f"wrote {a.out}: {len(order)} paths, {len(one_pass)} reads a pass, {a.passes} passes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
