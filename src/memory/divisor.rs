//! Division by a divisor fixed at construction, without a divide instruction: the inverse
//! mappings divide every slot by the same few extents.

/// Division by an invariant divisor without a divide instruction, exact for every dividend
/// below 2^63 — which all slots and index entries are, by the map's invariant.
///
/// A power of two `2^k` is a shift. Otherwise (Granlund–Montgomery) with `l = ceil(log2 d) ≥ 2`
/// and `m = ceil(2^(63+l) / d) < 2^64`, `q = mulhi(n, m) >> (l − 1)`: `n·m / 2^(63+l)` exceeds
/// `n/d` by less than `n / 2^(63+l) < 2^-l ≤ 1/d`, which never reaches the next integer. Both
/// cases run the same branch-free instructions (`pass` selects `n` instead of the product).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Divisor {
    /// The divisor (at least 1).
    pub(crate) value: u64,
    magic: u64,
    pass: u64,
    shift: u32,
}

impl Divisor {
    // `d ≥ 1`, and `d ≥ 3` past the power-of-two case, so `l = 64 − leading_zeros(d − 1)` is in
    // 2..=64: `l − 1` does not underflow and the shift `63 + l ≤ 127` fits a `u128`.
    #[allow(clippy::arithmetic_side_effects)]
    pub(crate) fn new(divisor: u64) -> Self {
        let d = divisor.max(1);
        if d.is_power_of_two() {
            return Self { value: d, magic: 0, pass: u64::MAX, shift: d.trailing_zeros() };
        }
        let l = 64 - (d - 1).leading_zeros();
        let magic = (1u128 << (63 + l)).div_ceil(u128::from(d));
        Self { value: d, magic: u64::try_from(magic).unwrap_or(u64::MAX), pass: 0, shift: l - 1 }
    }

    /// `n / divisor` for `n < 2^63`; a wrong quotient (never a panic) above.
    #[inline]
    #[allow(clippy::cast_possible_truncation)] // the high half of a 128-bit product
    #[allow(clippy::arithmetic_side_effects)] // a product of two u64 values fits in u128
    pub(crate) fn div(self, n: u64) -> u64 {
        let high = ((u128::from(n) * u128::from(self.magic)) >> 64) as u64;
        (high | (n & self.pass)) >> self.shift
    }
}

#[cfg(test)]
mod tests {
    use super::Divisor;

    #[test]
    fn divisor_is_exact_below_2_pow_63() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let divisors = (1..=300u64).chain([1 << 20, (1 << 31) + 1, 3 << 40, i64::MAX as u64, 1 << 62, 6_700_417]);
        for d in divisors {
            let div = Divisor::new(d);
            for n in [0, 1, d - 1, d, d + 1, (i64::MAX as u64) - 1, i64::MAX as u64] {
                assert_eq!(div.div(n), n / d, "{n} / {d}");
            }
            for _ in 0..2000 {
                let n = next() >> 1;
                assert_eq!(div.div(n), n / d, "{n} / {d}");
                let small = next() >> 40;
                assert_eq!(div.div(small), small / d, "{small} / {d}");
            }
        }
    }
}
