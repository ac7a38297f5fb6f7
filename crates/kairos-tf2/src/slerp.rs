//! Spherical linear interpolation, split so a cache pays for the expensive part once per
//! pair of neighbouring stamps instead of once per lookup.
//!
//! Ground rules:
//! - [`SlerpPlan::new`] does what depends only on the two rotations (the angle between them
//!   by `acos`, the sign that takes the shorter way, `1 / sin θ`); [`SlerpPlan::at`] does
//!   the rest for one ratio: two sines and a weighted sum. The result is tf2's `slerp`.
//! - The sines of `at` have arguments in `[0, π/2]` for ratios in `[0, 1]` (θ is a half
//!   angle, at most π/2 once the shorter way is taken); there they are computed by the
//!   fdlibm polynomial kernels (error under 1 ulp), about four times cheaper than a call to
//!   the C library. Any other argument goes to `f64::sin`.

use crate::quaternion::Quaternion;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4};

/// The ratio-independent part of a slerp from `a` to `b`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SlerpPlan {
    /// Half the rotation angle between `a` and `b` (the shorter way), in `[0, π/2]`.
    theta: f64,
    /// `1 / sin θ`; 0 when the rotations agree so closely that the chord is the arc.
    inv_sin: f64,
    /// Whether `b` is negated to take the shorter way.
    negate: bool,
}

impl SlerpPlan {
    /// Plans the slerp from `a` to `b` (unit quaternions).
    pub(crate) fn new(a: Quaternion, b: Quaternion) -> SlerpPlan {
        let dot = a.dot(b);
        let negate = dot < 0.0;
        let cos_theta = dot.abs().min(1.0);
        let sin_theta = ((1.0 - cos_theta) * (1.0 + cos_theta)).sqrt();
        if sin_theta < 1e-9 {
            // The two agree to ~1e-9 rad: interpolate the chord.
            return SlerpPlan {
                theta: 0.0,
                inv_sin: 0.0,
                negate,
            };
        }
        SlerpPlan {
            theta: cos_theta.acos(),
            inv_sin: 1.0 / sin_theta,
            negate,
        }
    }

    /// The rotation a fraction `ratio` of the way from `a` (0) to `b` (1), at constant
    /// angular speed; `a` and `b` are the two the plan was made for.
    #[inline]
    pub(crate) fn at(&self, a: Quaternion, b: Quaternion, ratio: f64) -> Quaternion {
        let b = if self.negate { -b } else { b };
        if self.inv_sin == 0.0 {
            return Quaternion::new(
                a.x + (b.x - a.x) * ratio,
                a.y + (b.y - a.y) * ratio,
                a.z + (b.z - a.z) * ratio,
                a.w + (b.w - a.w) * ratio,
            )
            .normalized();
        }
        let k0 = sin((1.0 - ratio) * self.theta) * self.inv_sin;
        let k1 = sin(ratio * self.theta) * self.inv_sin;
        Quaternion::new(
            a.x * k0 + b.x * k1,
            a.y * k0 + b.y * k1,
            a.z * k0 + b.z * k1,
            a.w * k0 + b.w * k1,
        )
    }
}

/// π/2 as the sum of two doubles, for an exact-to-rounding `π/2 - x`.
const PIO2_HI: f64 = FRAC_PI_2;
const PIO2_LO: f64 = 6.123_233_995_736_766e-17;

/// `sin x`, by polynomial for `x` in `[-π/4, π/2]`, by the C library elsewhere.
#[inline]
fn sin(x: f64) -> f64 {
    if x.abs() <= FRAC_PI_4 {
        kernel_sin(x)
    } else if x > 0.0 && x <= PIO2_HI {
        kernel_cos((PIO2_HI - x) + PIO2_LO)
    } else {
        x.sin()
    }
}

/// fdlibm's `__kernel_sin` (tail `y` = 0): `sin x` for `|x| ≤ π/4`.
#[inline]
fn kernel_sin(x: f64) -> f64 {
    const S1: f64 = -1.666_666_666_666_663_2e-1;
    const S2: f64 = 8.333_333_333_322_49e-3;
    const S3: f64 = -1.984_126_982_985_795e-4;
    const S4: f64 = 2.755_731_370_707_006_8e-6;
    const S5: f64 = -2.505_076_025_340_686_3e-8;
    const S6: f64 = 1.589_690_995_211_55e-10;
    let z = x * x;
    let v = z * x;
    let r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    x + v * (S1 + z * r)
}

/// fdlibm's `__kernel_cos` (tail `y` = 0): `cos x` for `|x| ≤ π/4`.
#[inline]
fn kernel_cos(x: f64) -> f64 {
    const C1: f64 = 4.166_666_666_666_66e-2;
    const C2: f64 = -1.388_888_888_887_411e-3;
    const C3: f64 = 2.480_158_728_947_673e-5;
    const C4: f64 = -2.755_731_435_139_066_3e-7;
    const C5: f64 = 2.087_572_321_298_175e-9;
    const C6: f64 = -1.135_964_755_778_819_5e-11;
    let z = x * x;
    let r = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + z * r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_polynomial_sine_matches_the_c_library_to_the_last_bits() {
        let n = 200_000;
        for i in 0..=n {
            let x = -1.0 + 3.0 * f64::from(i) / f64::from(n);
            let (ours, libm) = (sin(x), x.sin());
            assert!(
                (ours - libm).abs() <= 2.0 * f64::EPSILON * libm.abs().max(1e-300),
                "sin({x}) = {ours}, libm {libm}"
            );
        }
        assert_eq!(sin(0.0), 0.0);
        assert!((sin(PIO2_HI) - 1.0).abs() <= f64::EPSILON);
        assert_eq!(sin(4.0), 4.0f64.sin());
    }

    #[test]
    fn a_plan_reaches_both_ends_and_takes_the_short_way() {
        let a = Quaternion::from_rpy(0.3, -0.2, 0.1);
        let b = Quaternion::from_rpy(-1.0, 0.5, 2.0);
        for b in [b, -b] {
            let plan = SlerpPlan::new(a, b);
            assert!(plan.at(a, b, 0.0).angle_to(a) < 1e-15);
            assert!(plan.at(a, b, 1.0).angle_to(b) < 1e-15);
            let half = plan.at(a, b, 0.5);
            assert!((half.angle_to(a) - half.angle_to(b)).abs() < 1e-15);
            assert!((half.norm_squared() - 1.0).abs() < 1e-15);
        }
    }
}
