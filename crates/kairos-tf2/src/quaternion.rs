//! Unit quaternions: rotations, their composition, inverse and interpolation.
//!
//! Ground rules:
//! - Components are `(x, y, z, w)`, `w` the scalar part, as in `geometry_msgs/Quaternion`
//!   and tf2; the product is Hamilton's, so `a * b` rotates by `b` first, then by `a`.
//! - [`Quaternion::rotate`], [`Quaternion::conjugate`] as inverse and
//!   [`Quaternion::slerp`] assume a unit quaternion. The buffer normalises every rotation
//!   it stores, so what it composes stays unit to rounding.
//! - `slerp` takes the shorter way round, as tf2's does: `q` and `-q` are one rotation.

use crate::slerp::SlerpPlan;
use crate::vector::Vector3;
use std::ops::{Mul, Neg};

/// A rotation as a quaternion `x i + y j + z k + w`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quaternion {
    /// i component.
    pub x: f64,
    /// j component.
    pub y: f64,
    /// k component.
    pub z: f64,
    /// Scalar component.
    pub w: f64,
}

impl Default for Quaternion {
    /// The identity rotation (not the zero quaternion, which is no rotation at all).
    fn default() -> Quaternion {
        Quaternion::IDENTITY
    }
}

impl Quaternion {
    /// No rotation.
    pub const IDENTITY: Quaternion = Quaternion::new(0.0, 0.0, 0.0, 1.0);

    /// A quaternion from its components, as given (not normalised).
    #[inline]
    pub const fn new(x: f64, y: f64, z: f64, w: f64) -> Quaternion {
        Quaternion { x, y, z, w }
    }

    /// The rotation by `angle` radians about `axis` (any length but zero).
    pub fn from_axis_angle(axis: Vector3, angle: f64) -> Quaternion {
        let axis = axis * (1.0 / axis.length());
        let (s, c) = (angle * 0.5).sin_cos();
        Quaternion::new(axis.x * s, axis.y * s, axis.z * s, c)
    }

    /// The rotation by fixed-axis roll (about x), then pitch (about y), then yaw (about
    /// z), in radians: tf2's `setRPY`.
    pub fn from_rpy(roll: f64, pitch: f64, yaw: f64) -> Quaternion {
        let (sr, cr) = (roll * 0.5).sin_cos();
        let (sp, cp) = (pitch * 0.5).sin_cos();
        let (sy, cy) = (yaw * 0.5).sin_cos();
        Quaternion::new(
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy,
        )
    }

    /// The four-dimensional dot product.
    #[inline]
    pub fn dot(self, other: Quaternion) -> f64 {
        self.x * other.x + self.y * other.y + self.z * other.z + self.w * other.w
    }

    /// The squared norm, 1 for a rotation.
    #[inline]
    pub fn norm_squared(self) -> f64 {
        self.dot(self)
    }

    /// This quaternion scaled to norm 1.
    pub fn normalized(self) -> Quaternion {
        let inv = 1.0 / self.norm_squared().sqrt();
        Quaternion::new(self.x * inv, self.y * inv, self.z * inv, self.w * inv)
    }

    /// The conjugate `(-x, -y, -z, w)`: the inverse rotation of a unit quaternion (what
    /// tf2's `inverse()` returns).
    #[inline]
    pub fn conjugate(self) -> Quaternion {
        Quaternion::new(-self.x, -self.y, -self.z, self.w)
    }

    /// Whether every component is finite (not NaN, not infinite).
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z.is_finite() && self.w.is_finite()
    }

    /// `v` rotated by this (unit) quaternion.
    #[inline]
    pub fn rotate(self, v: Vector3) -> Vector3 {
        // v + 2w (u × v) + 2 u × (u × v), with u the vector part: q v q* without the
        // products that cancel.
        let u = Vector3::new(self.x, self.y, self.z);
        let t = u.cross(v) * 2.0;
        v + t * self.w + u.cross(t)
    }

    /// The angle in radians, in `[0, π]`, of the rotation that takes `self` to `other`,
    /// the shorter way round.
    pub fn angle_to(self, other: Quaternion) -> f64 {
        let other = if self.dot(other) < 0.0 { -other } else { other };
        let diff = Quaternion::new(
            self.x - other.x,
            self.y - other.y,
            self.z - other.z,
            self.w - other.w,
        );
        let sum = Quaternion::new(
            self.x + other.x,
            self.y + other.y,
            self.z + other.z,
            self.w + other.w,
        );
        // |a - b| = 2 sin(φ/4) and |a + b| = 2 cos(φ/4) for the rotation angle φ: exact
        // near 0 and π, where 2 acos(a·b) is not.
        4.0 * diff.norm_squared().sqrt().atan2(sum.norm_squared().sqrt())
    }

    /// Spherical linear interpolation from `self` (`ratio` 0) to `other` (1) at constant
    /// angular speed, the shorter way round (tf2's `slerp`).
    #[inline]
    pub fn slerp(self, other: Quaternion, ratio: f64) -> Quaternion {
        SlerpPlan::new(self, other).at(self, other, ratio)
    }

    /// Of `q` and `-q` (one rotation), the one tf2's lookups return: tf2 passes a result
    /// through a rotation matrix and back (Bullet's `Matrix3x3::getRotation`), which makes
    /// `w` positive when `|w| > 1/2`, else the largest of `|x|`, `|y|`, `|z|`.
    #[inline]
    pub(crate) fn with_tf2_sign(self) -> Quaternion {
        let negative = if 4.0 * self.w * self.w > self.norm_squared() {
            self.w < 0.0
        } else {
            let (xx, yy, zz) = (self.x * self.x, self.y * self.y, self.z * self.z);
            let largest = if xx < yy {
                if yy < zz { self.z } else { self.y }
            } else if xx < zz {
                self.z
            } else {
                self.x
            };
            largest < 0.0
        };
        if negative { -self } else { self }
    }
}

impl Mul for Quaternion {
    type Output = Quaternion;
    /// The Hamilton product: the rotation `rhs`, then `self`.
    #[inline]
    fn mul(self, rhs: Quaternion) -> Quaternion {
        let (a, b) = (self, rhs);
        Quaternion::new(
            a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y + a.y * b.w + a.z * b.x - a.x * b.z,
            a.w * b.z + a.z * b.w + a.x * b.y - a.y * b.x,
            a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
        )
    }
}

impl Neg for Quaternion {
    type Output = Quaternion;
    #[inline]
    fn neg(self) -> Quaternion {
        Quaternion::new(-self.x, -self.y, -self.z, -self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{FRAC_PI_2, PI};

    fn near(a: Vector3, b: Vector3) -> bool {
        (a - b).length() < 1e-12
    }

    #[test]
    fn rotating_by_a_quarter_turn_about_z_takes_x_to_y() {
        let q = Quaternion::from_axis_angle(Vector3::new(0.0, 0.0, 2.0), FRAC_PI_2);
        assert!(near(
            q.rotate(Vector3::new(1.0, 0.0, 0.0)),
            Vector3::new(0.0, 1.0, 0.0)
        ));
        assert!(near(
            q.conjugate().rotate(Vector3::new(0.0, 1.0, 0.0)),
            Vector3::new(1.0, 0.0, 0.0)
        ));
    }

    #[test]
    fn the_product_applies_the_right_factor_first() {
        let about_z = Quaternion::from_rpy(0.0, 0.0, FRAC_PI_2);
        let about_x = Quaternion::from_rpy(FRAC_PI_2, 0.0, 0.0);
        // x first: y -> z; then z about z stays z.
        let v = (about_z * about_x).rotate(Vector3::new(0.0, 1.0, 0.0));
        assert!(near(v, Vector3::new(0.0, 0.0, 1.0)));
        let w = about_z.rotate(about_x.rotate(Vector3::new(0.0, 1.0, 0.0)));
        assert!(near(v, w));
    }

    #[test]
    fn rpy_matches_the_composition_of_axis_rotations() {
        let (r, p, y) = (0.3, -0.2, 1.1);
        let composed = Quaternion::from_axis_angle(Vector3::new(0.0, 0.0, 1.0), y)
            * Quaternion::from_axis_angle(Vector3::new(0.0, 1.0, 0.0), p)
            * Quaternion::from_axis_angle(Vector3::new(1.0, 0.0, 0.0), r);
        assert!(Quaternion::from_rpy(r, p, y).angle_to(composed) < 1e-12);
    }

    #[test]
    fn angle_to_is_the_rotation_between_and_ignores_the_sign() {
        let a = Quaternion::from_rpy(0.0, 0.0, 0.25);
        let b = Quaternion::from_rpy(0.0, 0.0, 1.0);
        assert!((a.angle_to(b) - 0.75).abs() < 1e-12);
        assert!((a.angle_to(-b) - 0.75).abs() < 1e-12);
        assert!(a.angle_to(-a) < 1e-12);
        let half_turn = Quaternion::from_rpy(0.0, 0.0, PI);
        assert!((Quaternion::IDENTITY.angle_to(half_turn) - PI).abs() < 1e-12);
    }

    #[test]
    fn slerp_moves_at_constant_angular_speed_the_short_way() {
        let a = Quaternion::from_rpy(0.0, 0.0, 0.2);
        let b = Quaternion::from_rpy(0.0, 0.0, 1.4);
        for i in 0..=10 {
            let t = f64::from(i) / 10.0;
            let expected = Quaternion::from_rpy(0.0, 0.0, 0.2 + 1.2 * t);
            assert!(a.slerp(b, t).angle_to(expected) < 1e-12, "t = {t}");
            // -b is the same rotation: same path.
            assert!(a.slerp(-b, t).angle_to(expected) < 1e-12, "t = {t}");
        }
        assert!(a.slerp(a, 0.5).angle_to(a) < 1e-12);
    }

    #[test]
    fn tf2_sign_prefers_positive_w_then_the_largest_component() {
        let q = Quaternion::new(0.0, 0.0, -0.2, -0.9).normalized();
        assert!(q.with_tf2_sign().w > 0.0);
        let q = Quaternion::new(0.1, -0.9, 0.3, 0.2).normalized();
        assert!(q.with_tf2_sign().y > 0.0);
        let q = Quaternion::new(0.0, 0.0, 1.0, 0.0);
        assert_eq!(q.with_tf2_sign(), q);
        assert_eq!((-q).with_tf2_sign(), q);
    }
}
