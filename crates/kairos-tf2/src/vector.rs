//! A 3-vector: translations, points and directions.
//!
//! Ground rules: plain `f64` components, no hidden normalisation, `Copy`; the arithmetic a
//! transform needs and nothing clever.

use std::ops::{Add, Mul, Neg, Sub};

/// A vector in 3-space, in metres when it is a translation or a point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vector3 {
    /// x component.
    pub x: f64,
    /// y component.
    pub y: f64,
    /// z component.
    pub z: f64,
}

impl Vector3 {
    /// The zero vector.
    pub const ZERO: Vector3 = Vector3::new(0.0, 0.0, 0.0);

    /// A vector from its components.
    #[inline]
    pub const fn new(x: f64, y: f64, z: f64) -> Vector3 {
        Vector3 { x, y, z }
    }

    /// The dot product.
    #[inline]
    pub fn dot(self, other: Vector3) -> f64 {
        self.x * other.x + self.y * other.y + self.z * other.z
    }

    /// The cross product `self × other`.
    #[inline]
    pub fn cross(self, other: Vector3) -> Vector3 {
        Vector3::new(
            self.y * other.z - self.z * other.y,
            self.z * other.x - self.x * other.z,
            self.x * other.y - self.y * other.x,
        )
    }

    /// The Euclidean length.
    pub fn length(self) -> f64 {
        self.dot(self).sqrt()
    }

    /// The point a fraction `ratio` of the way from `self` (0) to `other` (1).
    #[inline]
    pub fn lerp(self, other: Vector3, ratio: f64) -> Vector3 {
        self + (other - self) * ratio
    }

    /// Whether every component is finite (not NaN, not infinite).
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z.is_finite()
    }
}

impl Add for Vector3 {
    type Output = Vector3;
    #[inline]
    fn add(self, rhs: Vector3) -> Vector3 {
        Vector3::new(self.x + rhs.x, self.y + rhs.y, self.z + rhs.z)
    }
}

impl Sub for Vector3 {
    type Output = Vector3;
    #[inline]
    fn sub(self, rhs: Vector3) -> Vector3 {
        Vector3::new(self.x - rhs.x, self.y - rhs.y, self.z - rhs.z)
    }
}

impl Neg for Vector3 {
    type Output = Vector3;
    #[inline]
    fn neg(self) -> Vector3 {
        Vector3::new(-self.x, -self.y, -self.z)
    }
}

impl Mul<f64> for Vector3 {
    type Output = Vector3;
    #[inline]
    fn mul(self, rhs: f64) -> Vector3 {
        Vector3::new(self.x * rhs, self.y * rhs, self.z * rhs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cross_follows_the_right_hand_rule() {
        let x = Vector3::new(1.0, 0.0, 0.0);
        let y = Vector3::new(0.0, 1.0, 0.0);
        assert_eq!(x.cross(y), Vector3::new(0.0, 0.0, 1.0));
        assert_eq!(x.dot(y), 0.0);
    }

    #[test]
    fn lerp_reaches_both_ends() {
        let a = Vector3::new(1.0, 2.0, 3.0);
        let b = Vector3::new(3.0, 2.0, 1.0);
        assert_eq!(a.lerp(b, 0.0), a);
        assert_eq!(a.lerp(b, 1.0), b);
        assert_eq!(a.lerp(b, 0.5), Vector3::new(2.0, 2.0, 2.0));
    }
}
