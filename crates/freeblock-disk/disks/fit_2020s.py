#!/usr/bin/env python3
"""Fits the zones of the 2020s library drives (ultrastar_hc530, ultrastar_hc560, st2000dm006) to
their datasheet figures and prints each spec's TOML: `python3 fit_2020s.py NAME > NAME.toml`.

Datasheets give a drive's capacity, heads, rpm, sustained (outer-zone) transfer rate and seek
times, never its zones or cylinder count. The fit:

1. Track skew: a step along a band is a one-cylinder seek, so the skew covers the longer of the
   read and write single-track seeks (a stream of writes then misses no revolution either):
   `track_skew = ceil(single_ms / revolution * sectors_per_track)`.
2. Outer zone: the fewest sectors per track whose sustained rate with that skew,
   `spt * 512 B / revolution * spt / (spt + skew)`, reaches the datasheet's rate.
3. Inner zone: outer * 1560 / 3072, the ratio of the WD g4 model's measured layout (no datasheet
   gives an inner-zone rate).
4. ZONES zones, sectors per track falling linearly; every zone a whole number of band pairs
   (2 x 128 cylinders, the WD g4 band), the pairs spread evenly; the fewest pairs whose zones
   hold the datasheet capacity (`block_count` clips the rest).
5. Band-pair skew: the write seek of one band (128 cylinders) on the fitted three-point curve,
   in sectors, rounded up.
6. Full stroke: the datasheet's average times 14.0 / 7.366, the full-stroke / average ratio of
   the WD g4 model's measured seek table (datasheets of these drives give no full stroke).
"""
import math
import sys

BAND = 128
ZONES = 30
G4_INNER_OVER_OUTER = 1560 / 3072
G4_FULL_OVER_AVERAGE = 14.0 / 7.366

DRIVES = {
    "ultrastar_hc530": dict(rpm=7200.0, heads=16, capacity=27_344_764_928, outer_mb_s=267.0,
                            read=(0.23, 7.4), write=(0.32, 8.2), head_switch_ms=0.23),
    "ultrastar_hc560": dict(rpm=7200.0, heads=18, capacity=39_063_650_304, outer_mb_s=269.0,
                            read=(0.23, 7.4), write=(0.32, 8.2), head_switch_ms=0.23),
    "st2000dm006": dict(rpm=7200.0, heads=4, capacity=3_907_029_168, outer_mb_s=220.0,
                        read=(1.0, 13.3), write=None, head_switch_ms=1.0),
}


def full_of(average):
    return round(average * G4_FULL_OVER_AVERAGE, 2)


def three_point(single, average, full, cylinders):
    """b, c of `single + b*sqrt(d-1) + c*(d-1)` as freeblock_disk::seek fits them."""
    n = float(cylinders)
    total = n * (n - 1) / 2
    mean_sqrt = sum((n - d) * math.sqrt(d - 1) for d in range(1, cylinders)) / total
    mean_lin = sum((n - d) * (d - 1) for d in range(1, cylinders)) / total
    full_sqrt, full_lin = math.sqrt(n - 2), n - 2
    det = mean_sqrt * full_lin - mean_lin * full_sqrt
    b = ((average - single) * full_lin - mean_lin * (full - single)) / det
    c = (mean_sqrt * (full - single) - full_sqrt * (average - single)) / det
    assert b >= 0 and c >= 0, (b, c)
    return lambda d: single + b * math.sqrt(d - 1) + c * (d - 1)


def fit(name):
    p = DRIVES[name]
    rev_ms = 60_000.0 / p["rpm"]
    single = max(p["read"][0], p["write"][0] if p["write"] else 0.0)

    def skew(spt):
        return math.ceil(single / rev_ms * spt)

    def sustained(spt):
        return spt * 512 / (rev_ms / 1000) * spt / (spt + skew(spt)) / 1e6

    outer = next(s for s in range(1000, 10_000) if sustained(s) >= p["outer_mb_s"])
    inner = round(outer * G4_INNER_OVER_OUTER)
    spts = [round(outer - (outer - inner) * z / (ZONES - 1)) for z in range(ZONES)]

    def zone_pairs(pairs):
        return [pairs // ZONES + (1 if z < pairs % ZONES else 0) for z in range(ZONES)]

    def holds(pairs):
        return sum(2 * BAND * n * s for n, s in zip(zone_pairs(pairs), spts)) * p["heads"]

    pairs = math.ceil(p["capacity"] / (2 * BAND * p["heads"] * sum(spts) / ZONES))
    while holds(pairs - 1) >= p["capacity"]:
        pairs -= 1
    while holds(pairs) < p["capacity"]:
        pairs += 1
    cylinders = 2 * BAND * pairs
    curve = p["write"] or p["read"]
    band_seek = three_point(curve[0], curve[1], full_of(curve[1]), cylinders)(BAND)
    return p, rev_ms, spts, zone_pairs(pairs), cylinders, skew, band_seek, sustained


def main(name):
    p, rev_ms, spts, pairs, cylinders, skew, band_seek, sustained = fit(name)
    out = []
    out.append(f"# fitted by fit_2020s.py: {cylinders} cylinders, zones of {spts[0]}..{spts[-1]} sectors/track, "
               f"sustained {sustained(spts[0]):.1f} / {sustained(spts[-1]):.1f} MB/s outer / inner, "
               f"band write seek {band_seek:.3f} ms")
    first = 0
    for n, spt in zip(pairs, spts):
        last = first + 2 * BAND * n - 1
        out.append("")
        out.append("[[zones]]")
        out.append(f"first_cylinder = {first}")
        out.append(f"last_cylinder = {last}")
        out.append(f"sectors_per_track = {spt}")
        out.append(f"track_skew = {float(skew(spt))}")
        out.append(f"band_pair_skew = {float(math.ceil(band_seek / rev_ms * spt))}")
        first = last + 1
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
