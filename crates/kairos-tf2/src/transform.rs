//! Rigid transforms (a rotation, then a translation) and their stamped forms.
//!
//! Ground rules:
//! - A [`Transform`] from frame `child` to frame `parent` maps a point given in `child`
//!   to the same point given in `parent`: `p_parent = rotation.rotate(p_child) +
//!   translation`, the convention of `geometry_msgs/Transform` and tf2.
//! - `a * b` is "`b`, then `a`": with `a` = parent←child and `b` = child←grandchild,
//!   `a * b` = parent←grandchild.
//! - [`TransformStamped`] mirrors `geometry_msgs/TransformStamped` field for field
//!   (`header.stamp`, `header.frame_id` = the parent, `child_frame_id`, `transform`), so
//!   the ROS message maps onto it one to one.

use crate::quaternion::Quaternion;
use crate::time::Stamp;
use crate::vector::Vector3;
use std::ops::Mul;

/// A rigid transform: rotate by `rotation`, then move by `translation`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Transform {
    /// Where the child frame's origin is, in the parent frame.
    pub translation: Vector3,
    /// The child frame's orientation in the parent frame (a unit quaternion).
    pub rotation: Quaternion,
}

impl Transform {
    /// The transform that changes nothing.
    pub const IDENTITY: Transform = Transform {
        translation: Vector3::ZERO,
        rotation: Quaternion::IDENTITY,
    };

    /// A transform from its translation and rotation.
    #[inline]
    pub const fn new(translation: Vector3, rotation: Quaternion) -> Transform {
        Transform {
            translation,
            rotation,
        }
    }

    /// The transform that undoes this one (child←parent from parent←child).
    #[inline]
    pub fn inverse(&self) -> Transform {
        let rotation = self.rotation.conjugate();
        Transform {
            translation: rotation.rotate(-self.translation),
            rotation,
        }
    }

    /// A point given in the child frame, given in the parent frame.
    #[inline]
    pub fn transform_point(&self, point: Vector3) -> Vector3 {
        self.rotation.rotate(point) + self.translation
    }

    /// A direction given in the child frame, given in the parent frame (rotated only).
    #[inline]
    pub fn transform_vector(&self, vector: Vector3) -> Vector3 {
        self.rotation.rotate(vector)
    }

    /// The transform a fraction `ratio` of the way from `self` (0) to `other` (1): the
    /// translation linearly, the rotation by [`Quaternion::slerp`] (tf2's interpolation).
    pub fn interpolate(&self, other: &Transform, ratio: f64) -> Transform {
        Transform {
            translation: self.translation.lerp(other.translation, ratio),
            rotation: self.rotation.slerp(other.rotation, ratio),
        }
    }

    /// Whether every component of the translation and rotation is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite()
    }
}

impl Mul for Transform {
    type Output = Transform;
    /// `rhs`, then `self`.
    #[inline]
    fn mul(self, rhs: Transform) -> Transform {
        Transform {
            translation: self.rotation.rotate(rhs.translation) + self.translation,
            rotation: self.rotation * rhs.rotation,
        }
    }
}

/// When and in which frame: `std_msgs/Header`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Header {
    /// The time the data is valid at.
    pub stamp: Stamp,
    /// The frame the data is given in (for a transform: the parent).
    pub frame_id: String,
}

/// A transform between two named frames at a time: `geometry_msgs/TransformStamped`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransformStamped {
    /// The stamp, and the parent frame.
    pub header: Header,
    /// The child frame.
    pub child_frame_id: String,
    /// Child → parent: maps points given in `child_frame_id` to `header.frame_id`.
    pub transform: Transform,
}

impl TransformStamped {
    /// `child` in `parent` at `stamp`.
    pub fn new(
        parent: impl Into<String>,
        child: impl Into<String>,
        stamp: Stamp,
        transform: Transform,
    ) -> TransformStamped {
        TransformStamped {
            header: Header {
                stamp,
                frame_id: parent.into(),
            },
            child_frame_id: child.into(),
            transform,
        }
    }
}

/// A looked-up transform and the time it is valid at, without the frame names: what
/// [`BufferCore::lookup`](crate::BufferCore::lookup) returns without allocating.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TimedTransform {
    /// The time the transform is valid at: the requested time, or for
    /// [`Stamp::LATEST`] the latest common time it resolved to.
    pub stamp: Stamp,
    /// Source → target.
    pub transform: Transform,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(a: Vector3, b: Vector3) -> bool {
        (a - b).length() < 1e-12
    }

    #[test]
    fn composition_applies_the_right_transform_first() {
        let parent_from_child = Transform::new(
            Vector3::new(1.0, 0.0, 0.0),
            Quaternion::from_rpy(0.0, 0.0, std::f64::consts::FRAC_PI_2),
        );
        let child_from_grandchild =
            Transform::new(Vector3::new(0.0, 2.0, 0.0), Quaternion::IDENTITY);
        let composed = parent_from_child * child_from_grandchild;
        let p = Vector3::new(0.5, 0.0, 0.0);
        assert!(near(
            composed.transform_point(p),
            parent_from_child.transform_point(child_from_grandchild.transform_point(p))
        ));
        // The grandchild origin: 2 along the child's y, which is the parent's -x.
        assert!(near(
            composed.transform_point(Vector3::ZERO),
            Vector3::new(-1.0, 0.0, 0.0)
        ));
    }

    #[test]
    fn a_transform_times_its_inverse_is_identity() {
        let t = Transform::new(
            Vector3::new(1.0, -2.0, 0.5),
            Quaternion::from_rpy(0.4, -1.0, 2.5),
        );
        let id = t * t.inverse();
        assert!(near(id.translation, Vector3::ZERO));
        assert!(id.rotation.angle_to(Quaternion::IDENTITY) < 1e-12);
        let p = Vector3::new(3.0, 1.0, -1.0);
        assert!(near(t.inverse().transform_point(t.transform_point(p)), p));
    }

    #[test]
    fn interpolation_is_linear_in_translation_and_slerp_in_rotation() {
        let a = Transform::new(
            Vector3::new(0.0, 0.0, 0.0),
            Quaternion::from_rpy(0.0, 0.0, 0.0),
        );
        let b = Transform::new(
            Vector3::new(2.0, 4.0, 0.0),
            Quaternion::from_rpy(0.0, 0.0, 1.0),
        );
        let mid = a.interpolate(&b, 0.25);
        assert!(near(mid.translation, Vector3::new(0.5, 1.0, 0.0)));
        assert!(mid.rotation.angle_to(Quaternion::from_rpy(0.0, 0.0, 0.25)) < 1e-12);
    }
}
