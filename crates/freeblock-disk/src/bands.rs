//! Banded serpentine track order: how the tracks of a zone take LBNs on today's drives.
//!
//! A cylinder-major disk fills a whole cylinder (every surface) before moving the arm. A banded
//! drive instead stays on one surface for a *band* of `B` neighbouring cylinders, stepping the arm
//! one cylinder per track, then switches surface and comes back the other way. After every surface
//! has had its turn in the band, the next band (the next `B` cylinders) takes the surfaces in the
//! reverse order, so the last surface of one band is the first of the next. Two bands make the
//! repeating *band pair* of `2·B` cylinders, `2·B·H` tracks on `H` surfaces. Western Digital's
//! DiskSim fork describes such drives with its `dm_layout_g4` files (imported by
//! [`crate::disksim_g4`]); their 4 TB model has `B` = 128 cylinders and `H` = 10 surfaces.
//!
//! ```text
//!  cylinders of one band pair (B = 4, H = 3), the arrows in LBN order
//!
//!              band 0 (cyl 0..3)          band 1 (cyl 4..7)
//!  surface 0   ①  0 → 1 → 2 → 3          ⑥  4 → 5 → 6 → 7   (end of the pair)
//!  surface 1   ②  3 → 2 → 1 → 0          ⑤  7 → 6 → 5 → 4
//!  surface 2   ③  0 → 1 → 2 → 3   ──►    ④  4 → 5 → 6 → 7
//! ```
//!
//! Precisely, the `k`-th surface visited in a band runs towards higher cylinders when `k` is even
//! and back when `k` is odd; band 0 of a pair visits surfaces `0, 1, …, H−1`, band 1 visits
//! `H−1, …, 0`. With the zone-relative track index `t` (LBN order):
//!
//! | quantity | from `t` |
//! |---|---|
//! | band pair `u` | `t / (2·B·H)` |
//! | band in the pair `b` | `(t mod 2·B·H) / (B·H)` |
//! | visit `k` in the band | `(t mod B·H) / B` |
//! | step `i` along the band | `t mod B` |
//! | surface | `k` when `b = 0`, `H−1−k` when `b = 1` |
//! | cylinder (in the zone) | `2·B·u + B·b + (i` when `k` even, `B−1−i` when odd`)` |
//! | sector-0 angle, sectors | `first_sector_offset + track_skew·i + band_pair_skew·u` |
//!
//! So for `H` = 3, `B` = 4 band 1 starts on surface 2 (visit 0, towards higher cylinders), then
//! surface 1 (back), then surface 0 (towards higher again); a pair ends at its last cylinder when
//! `H` is odd and at its band 1's first when `H` is even (the g4 model: head 0 at 255 → 128). Consecutive LBNs within a band
//! are one cylinder apart on one surface (a one-cylinder seek each track); between surfaces of a
//! band there is a head switch without a seek; from one band to the next the arm moves up to `B`
//! cylinders. The skew accumulates per step along the band and per band pair, never per head
//! switch, as the g4 files give it (`alen` of the track entries and of the root's entries).
//!
//! A zone with banded order must span a whole number of band pairs (every g4 zone does).

/// The geometry of one banded zone: `band` cylinders per band, `surfaces` heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bands {
    /// Cylinders per band (`B`).
    pub band: u32,
    /// Surfaces (`H`).
    pub surfaces: u32,
}

/// Where a track sits in the banded order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BandPlace {
    /// Band pair, counted from the zone's first.
    pub pair: u64,
    /// Step along the band, `0..band` (the skew counts these).
    pub step: u32,
}

impl Bands {
    /// Tracks in one band pair.
    #[must_use]
    pub fn pair_tracks(self) -> u64 {
        2 * u64::from(self.band) * u64::from(self.surfaces)
    }

    /// Zone-relative track index (LBN order) of `surface` at zone-relative cylinder `cylinder`.
    #[must_use]
    pub fn track_index(self, cylinder: u32, surface: u32) -> u64 {
        let (b, h) = (u64::from(self.band), u64::from(self.surfaces));
        let c = u64::from(cylinder);
        let pair = c / (2 * b);
        let in_pair = c % (2 * b);
        let band_in_pair = in_pair / b;
        let along = in_pair % b;
        let visit = if band_in_pair == 0 { u64::from(surface) } else { h - 1 - u64::from(surface) };
        let step = if visit.is_multiple_of(2) { along } else { b - 1 - along };
        pair * 2 * b * h + band_in_pair * b * h + visit * b + step
    }

    /// `(zone-relative cylinder, surface)` of the zone's `track`-th track in LBN order.
    #[must_use]
    pub fn track_at(self, track: u64) -> (u32, u32) {
        let (b, h) = (u64::from(self.band), u64::from(self.surfaces));
        let pair = track / (2 * b * h);
        let band_in_pair = (track % (2 * b * h)) / (b * h);
        let visit = (track % (b * h)) / b;
        let step = track % b;
        let surface = if band_in_pair == 0 { visit } else { h - 1 - visit };
        let along = if visit.is_multiple_of(2) { step } else { b - 1 - step };
        ((pair * 2 * b + band_in_pair * b + along) as u32, surface as u32)
    }

    /// The band pair and step of a zone track, for its skew.
    #[must_use]
    pub fn place(self, track: u64) -> BandPlace {
        let b = u64::from(self.band);
        BandPlace { pair: track / self.pair_tracks(), step: (track % b) as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the module docs, and the g4 4 TB model's first band pair as its
    /// `.layout` lists it (head 0 at cylinder 0 up, head 1 at 127 down, …, head 9 at 128 up).
    #[test]
    fn order_follows_the_documented_rule() {
        let small = Bands { band: 4, surfaces: 3 };
        let order: Vec<(u32, u32)> = (0..small.pair_tracks()).map(|t| small.track_at(t)).collect();
        let expected = [
            (0, 0), (1, 0), (2, 0), (3, 0),
            (3, 1), (2, 1), (1, 1), (0, 1),
            (0, 2), (1, 2), (2, 2), (3, 2),
            (4, 2), (5, 2), (6, 2), (7, 2),
            (7, 1), (6, 1), (5, 1), (4, 1),
            (4, 0), (5, 0), (6, 0), (7, 0),
        ];
        assert_eq!(order, expected);
        let g4 = Bands { band: 128, surfaces: 10 };
        assert_eq!(g4.track_at(0), (0, 0));
        assert_eq!(g4.track_at(128), (127, 1));
        assert_eq!(g4.track_at(1279), (0, 9));
        assert_eq!(g4.track_at(1280), (128, 9));
        assert_eq!(g4.track_at(1280 + 128), (255, 8));
        assert_eq!(g4.track_at(2559), (128, 0));
        assert_eq!(g4.track_at(2560), (256, 0));
    }

    #[test]
    fn track_index_inverts_track_at() {
        for bands in [Bands { band: 1, surfaces: 1 }, Bands { band: 3, surfaces: 2 }, Bands { band: 5, surfaces: 7 }, Bands { band: 128, surfaces: 10 }] {
            for t in 0..3 * bands.pair_tracks() {
                let (c, s) = bands.track_at(t);
                assert_eq!(bands.track_index(c, s), t, "{bands:?} track {t}");
                assert_eq!(bands.place(t).step, (t % u64::from(bands.band)) as u32);
            }
        }
    }
}
